"""taugrad.learn.check: the grader names the right bug in each engine of tests/check_gallery.

Each gallery file is a small engine with one classic mistake (or none); the
table says which check must flag it, for which op, at which severity, and a
word its diagnosis must contain.  Files are graded in the sandbox process,
exactly as `taugrad check` does.
"""
from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import micrograd.engine
import pytest

import taugrad
from taugrad.learn.check import CheckError, Report, check, reference
from taugrad.learn.check.expressions import random_tree, render, tame_value, to_terms
from taugrad.learn.check.shrink import shrink
from taugrad.learn.expr import parse

GALLERY = Path(__file__).parent / "check_gallery"
COUNT = 20  # random expressions per engine: enough to fail every broken rule, quick on 2 cores

#: file -> (check name, op, severity, word of the diagnosis)
FLAGGED = {
    "assign_not_accumulate": ("accumulation", "add", "error", "'+='"),
    "mul_swapped": ("rule", "mul", "error", "a.grad = a.data * g"),
    "pow_wrong": ("rule", "pow", "error", "k * a**k"),
    "relu_both_signs": ("rule", "relu", "error", "(a < 0)"),
    "tanh_one_minus_t": ("rule", "tanh", "error", "looks like 1 - t,"),
    "no_topo_sort": ("order", None, "error", "not a topological order"),
    "forward_order": ("order", None, "error", "forward order"),
    "grad_not_reset": ("backward_twice", None, "info", "not reset"),
    "recursive_sort": ("depth", None, "warning", "recursive traversal fails near depth"),
    "no_radd": ("forward", None, "warning", "no __radd__"),
    "sub_without_negation": ("forward", "sub", "error", "negation"),
    "sum_start_detached": ("rule", "add", "error", "sum()"),
    "mul_ignores_grad": ("rule", "mul", "error", "ignores the upstream gradient"),
    "dup_topo": ("order", None, "error", "more than once"),
    "add_only_self": ("rule", "add", "error", "b.grad = 0"),
    "exp_uses_input": ("rule", "exp", "error", "looks like a,"),
    "sigmoid_forgets_one_minus": ("rule", "sigmoid", "error", "looks like s,"),
    "root_not_seeded": ("seed", None, "error", "must set self.grad = 1.0"),
    "neg_not_recorded": ("rule", "neg", "error", "the result of -a is not connected to its operand a"),
    "neg_forgets_sign": ("rule", "neg", "error", "looks like 1,"),
    "reset_in_backward": ("accumulation", "add", "error", "backward() sets gradients to 0 while the rules run"),
    "forward_recursion": ("depth", None, "warning", "building the chain raises RecursionError"),
    "composed_forward_order": ("order", None, "error", "forward order"),
    "tanh_slightly_off": ("rule", "tanh", "error", "off by a relative 5.0e-04"),
}
PASSING = ["chapter_correct", "div_reciprocal", "grad_not_reset", "recursive_sort", "prints_a_lot"]


def _grade(name: str, **kwargs) -> Report:
    return check(GALLERY / f"{name}.py", count=COUNT, timeout=30, **kwargs)


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_gallery_mistake_is_named(name):
    check_name, op, severity, word = FLAGGED[name]
    report = _grade(name)
    flagged = [c for c in report.find(check_name, op) if not c.ok and c.severity == severity]
    assert flagged, f"{name}: no failing {check_name}/{op}; got\n{report}"
    assert word in flagged[0].diagnosis, flagged[0].diagnosis
    assert report.ok == (severity != "error")


def test_a_root_gradient_never_seeded_is_named_once_not_blamed_on_every_rule():
    report = _grade("root_not_seeded")
    assert [(c.name, c.op) for c in report.failures] == [("seed", None)]
    assert all(c.ok for c in report.find("rule"))


def test_reset_inside_backward_is_not_called_assign_when_every_rule_adds():
    (check,) = _grade("reset_in_backward").find("accumulation")
    assert "instead of '+='" not in check.diagnosis
    (check,) = _grade("assign_not_accumulate").find("accumulation")
    assert "instead of '+='" in check.diagnosis and "while the rules run" not in check.diagnosis


def test_recursion_is_located_in_the_forward_op_or_in_the_backward_walk():
    (forward,) = _grade("forward_recursion").find("depth")
    assert "forward_recursion.py" in forward.diagnosis and "count_nodes" in forward.diagnosis
    assert "explicit stack" not in forward.diagnosis
    (walk,) = _grade("recursive_sort").find("depth")
    assert "RecursionError in backward()" in walk.diagnosis and "explicit stack" in walk.diagnosis


@pytest.mark.parametrize("name,culprit", [("neg_forgets_sign", ("rule", "neg")), ("neg_not_recorded", ("rule", "neg")),
                                          ("composed_forward_order", ("order", None))])
def test_ops_built_from_others_are_not_blamed_for_their_parts(name, culprit):
    report = _grade(name)
    failing = {(c.name, c.op) for c in report.failures}
    assert culprit in failing and ("rule", "sub") not in failing and ("rule", "div") not in failing
    (sub,) = report.find("rule", "sub")
    assert sub.severity == "info" and "built from other operations" in sub.diagnosis


def test_a_rule_off_by_a_relative_5e_4_fails_though_finite_differences_miss_it():
    report = _grade("tanh_slightly_off")
    assert [(c.name, c.op) for c in report.failures] == [("rule", "tanh")]
    (rand,) = report.find("random")
    assert rand.ok  # the finite difference's tolerance cannot see it: only the rule check can


def test_a_missing_reflected_method_is_one_warning_that_names_it_and_fails_nothing():
    report = _grade("neg_forgets_sign")
    (warning,) = [c for c in report.checks if c.severity == "warning" and c.name == "forward"]
    assert "no __radd__, __rmul__, __rsub__, __rtruediv__" in warning.diagnosis
    assert {(c.name, c.op) for c in report.failures} == {("rule", "neg"), ("random", "neg")}


@pytest.mark.parametrize("name", PASSING)
def test_gallery_correct_engines_pass(name):
    report = _grade(name)
    assert report.ok, str(report)


def test_chapter_engine_passes_with_no_warning_and_its_ops_are_found():
    report = _grade("chapter_correct")
    assert report.ops == ["add", "mul", "pow", "relu", "tanh"]
    assert report.reflected == ["add", "mul"]
    assert report.attributes["parents"] == "parents"
    assert all(c.ok for c in report.checks if c.severity != "info")


def test_micrograd_passes_with_its_known_depth_and_backward_twice_notes():
    report = check(micrograd.engine.__file__, count=COUNT, timeout=30)
    assert report.ok, str(report)
    assert report.ops == ["add", "mul", "pow", "sub", "div", "neg", "relu"]
    assert report.attributes["parents"] == "_prev" and report.attributes["op"] == "_op"
    (depth,) = report.find("depth")
    assert depth.severity == "warning" and not depth.ok and "near depth" in depth.diagnosis
    (twice,) = report.find("backward_twice")
    assert twice.severity == "info" and twice.got == 72 and "not reset" in twice.diagnosis


def test_taugrad_value_passes_in_process():
    report = check(taugrad.Value, count=COUNT)
    assert report.ok, str(report)
    assert len(report.ops) == 11
    assert all(c.ok for c in report.checks)
    (twice,) = report.find("backward_twice")
    assert "accumulates" in twice.diagnosis


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"gallery_{name}", GALLERY / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Value


def test_a_class_object_is_graded_in_process_the_same_way():
    report = check(_load("mul_swapped"), count=COUNT)
    (rule,) = report.find("rule", "mul")
    assert not rule.ok and "a.grad = a.data * g" in rule.diagnosis
    assert rule.expression == "a * b" and rule.inputs == {"a": 1.37, "b": -0.83}
    assert rule.expected == -0.83 and rule.got == 1.37


def test_in_process_recursion_is_a_warning_not_a_crash():
    report = check(_load("recursive_sort"), count=0)
    assert report.ok
    assert "recursive traversal fails" in report.find("depth")[0].diagnosis


def test_in_process_endless_backward_times_out():
    class Stuck(_load("chapter_correct")):
        def backward(self):
            while True:
                pass

    with pytest.raises(CheckError, match="timed out after 1 s"):
        check(Stuck, timeout=1)


def test_report_renders_as_text_html_and_the_documented_json():
    report = _grade("tanh_one_minus_t")
    text = str(report)
    assert "FAIL  rule            tanh" in text and "FAILED:" in text
    html = report._repr_html_()
    assert html.count("<tr>") == len(report.checks) + 1 and "1 - t" in html
    data = report.to_dict()
    assert set(data) == {"class", "ops", "ok", "checks"} and data["ok"] is False
    for c in data["checks"]:
        assert set(c) == {"name", "op", "ok", "severity", "expression", "inputs", "expected", "got", "diagnosis"}
        assert c["name"] in ("forward", "seed", "rule", "accumulation", "order", "depth", "backward_twice", "random")
        assert c["severity"] in ("error", "warning", "info")


def test_random_failures_shrink_to_a_one_op_expression():
    report = _grade("tanh_one_minus_t")
    (rand,) = report.find("random")
    assert not rand.ok and rand.op == "tanh"
    assert rand.expression in ("tanh(a)", "tanh(b)", "tanh(c)")


@pytest.mark.parametrize("name,message", [
    ("loops_forever", "timed out after 2 s while loading loops_forever.py"),
    ("calls_exit", "called sys.exit(3)"),
    ("raises_at_import", "importing it raised NameError"),
    ("no_class", "no class Value (it defines no classes at all)"),
    ("no_backward", "Value has no backward() method"),
])
def test_files_that_cannot_be_graded_are_one_clear_error(name, message):
    with pytest.raises(CheckError) as info:
        check(GALLERY / f"{name}.py", timeout=2)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_the_learners_traceback_is_trimmed_to_their_file():
    with pytest.raises(CheckError) as info:
        check(GALLERY / "raises_at_import.py", timeout=10)
    assert info.value.frames == [
        '  File "raises_at_import.py", line 8, in <module>', "    helper()",
        '  File "raises_at_import.py", line 5, in helper', "    return undefined_name",
    ]


def test_memory_is_limited_in_the_sandbox(tmp_path):
    greedy = tmp_path / "greedy.py"
    greedy.write_text("block = bytearray(8 * 1024**3)\n")
    with pytest.raises(CheckError, match="MemoryError"):
        check(greedy, timeout=20)


def test_another_class_name_and_a_missing_one(tmp_path):
    source = (GALLERY / "chapter_correct.py").read_text().replace("class Value", "class Scalar").replace(
        "Value(", "Scalar(").replace("isinstance(other, Value)", "isinstance(other, Scalar)")
    engine = tmp_path / "scalar_engine.py"
    engine.write_text(source)
    assert check(engine, class_name="Scalar", count=5).ok
    with pytest.raises(CheckError, match="no class Value .it defines Scalar; choose one with --class NAME."):
        check(engine, count=5)


def test_random_expressions_are_tame_reuse_nodes_and_parse_for_taugrad_trace():
    info = {"ops": ["add", "mul", "pow", "sub", "div", "neg", "relu", "tanh", "exp", "log", "sigmoid"],
            "reflected": ["add", "mul", "sub", "div", "pow"], "value_exponent": True}
    reused = 0
    for i in range(200):
        tree, inputs = random_tree(random.Random(i), info, depth=3)
        assert tame_value(tree, inputs) is not None
        text = render(tree)
        parsed = parse(text)
        assert pytest.approx(parsed.evaluate(inputs), rel=1e-12) == reference.evaluate(
            to_terms(tree), inputs)["value"]
        reused += len(to_terms(tree)) < len(list(_count(tree)))
    assert reused > 150


def _count(tree):
    yield tree
    for part in tree[1:]:
        if isinstance(part, tuple) and part and isinstance(part[0], str):
            yield from _count(part)


def test_shrink_finds_the_smallest_failing_subexpression():
    tree = ("op", "+", ("op", "*", ("call", "tanh", ("var", "a")), ("var", "b")), ("call", "exp", ("var", "b")))
    fails = lambda t, v: "tanh" in render(t)  # noqa: E731
    assert render(shrink(tree, {"a": 0.5, "b": 1.2}, fails)) == "tanh(a)"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


def test_one_random_expression_is_singular():
    (rand,) = check(taugrad.Value, count=1).find("random")
    assert rand.diagnosis == "the random expression agrees with finite differences"

"""The step-by-step tracer: its numbers, the Break experiments, JSON, and its
"right" gradients checked against Value.backward() and against hand-derived values."""
from __future__ import annotations

import json
import math

import pytest

from taugrad import Value
from taugrad.learn.randexpr import random_expressions
from taugrad.learn.trace import finite_difference, label_graph, trace
from taugrad.learn.expr import build


def _grads(t, field="grad"):
    return {g.name: getattr(g, field) for g in t.gradients}


# ---------------------------------------------------------------------------
# the chapter's Calculate exercise: L = (a*b) + c at a=2, b=3, c=4
# ---------------------------------------------------------------------------


def test_calculate_exercise_numbers():
    t = trace("(a*b)+c", dict(a=2, b=3, c=4))
    assert t.output == 10.0
    # dL/da = b = 3, dL/db = a = 2, dL/dc = 1 (worked by hand)
    assert _grads(t) == {"a": 3.0, "b": 2.0, "c": 1.0}
    assert _grads(t, "backward") == {"a": 3.0, "b": 2.0, "c": 1.0}
    for g in t.gradients:
        assert g.finite_difference == pytest.approx(g.grad, abs=1e-6)


def test_calculate_exercise_text():
    text = trace("(a*b)+c", dict(a=2, b=3, c=4)).text()
    lines = [line.strip() for line in text.splitlines()]
    assert "t1 = a * b = 2 * 3 -> 6" in lines
    assert "L = 10" in lines
    assert "a.grad += b.data * g = 3 * 1 -> 3" in lines
    assert "b.grad += a.data * g = 2 * 1 -> 2" in lines
    assert "c.grad += g = 1 -> 1" in lines
    # forward pass lists t1 before L; backward runs L's rule before t1's
    assert lines.index("t1 = a * b = 2 * 3 -> 6") < lines.index("L = 10")
    assert text.index("rule of L") < text.index("rule of t1")
    table = [line.split() for line in lines if line.split()[:1] in (["a"], ["b"], ["c"]) and len(line.split()) == 6]
    assert [row[:5] for row in table] == [["a", "2", "3", "3", "3"], ["b", "3", "2", "2", "2"], ["c", "4", "1", "1", "1"]]


def test_accumulation_is_shown():
    text = trace("a*a + a", dict(a=3)).text()
    assert "a.grad += a.data * g = 3 * 1 -> 1 + 3 = 4" in text
    assert "a.grad += a.data * g = 3 * 1 -> 4 + 3 = 7" in text


# ---------------------------------------------------------------------------
# the Break experiments
# ---------------------------------------------------------------------------


def test_assign_loses_gradient_of_reused_value():
    t = trace("a*a + a", dict(a=3), assign=True)
    (g,) = t.gradients
    # d/da (a^2 + a) = 2a + 1 = 7; with '=' only the last path survives: a.data * g = 3
    assert (g.grad, g.right, g.backward) == (3.0, 7.0, 7.0)
    assert g.finite_difference == pytest.approx(7.0, abs=1e-6)
    assert any(note.startswith("a lost gradient") for note in t.notes)
    text = t.text()
    assert "a.grad = a.data * g = 3 * 1 -> 3   (overwrites 1: lost)" in text
    assert "<- WRONG" in text


def test_assign_names_interior_node_that_lost_gradient():
    # t = a*b is used twice; with '=' t keeps only one path's gradient
    t = trace("(a*b) + tanh(a*b)", dict(a=0.5, b=1.0), assign=True)
    assert any(note.startswith("t1 lost gradient") for note in t.notes)
    assert _grads(t) != _grads(t, "right")


def test_assign_harmless_without_reuse():
    t = trace("(a*b)+c", dict(a=2, b=3, c=4), assign=True)
    assert _grads(t) == _grads(t, "right") == {"a": 3.0, "b": 2.0, "c": 1.0}
    assert any("no gradient was overwritten" in note for note in t.notes)


def test_forward_order_runs_rules_before_their_gradient_arrives():
    t = trace("(a*b)+c", dict(a=2, b=3, c=4), order="forward")
    # t1's rule runs first, while t1.grad is still 0: a and b get nothing
    assert _grads(t) == {"a": 0.0, "b": 0.0, "c": 1.0}
    assert _grads(t, "right") == {"a": 3.0, "b": 2.0, "c": 1.0}
    assert any(note.startswith("t1's rule ran with t1.grad = 0") for note in t.notes)
    assert any("reverse topological order" in note for note in t.notes)
    assert t.backward[0].node == "t1" and t.backward[0].g == 0.0 and t.backward[0].complete_g == 1.0


def test_assign_and_forward_order_together():
    t = trace("a*a + a", dict(a=3), assign=True, order="forward")
    assert _grads(t) == {"a": 1.0} and _grads(t, "right") == {"a": 7.0}


def test_bad_order():
    with pytest.raises(ValueError, match="order must be"):
        trace("a", dict(a=1), order="sideways")


# ---------------------------------------------------------------------------
# the written-out rules agree with the engine
# ---------------------------------------------------------------------------

EVERY_OP = "a - b/c + tanh(a)*2**a + a**b + relu(-a) + relu(b) + log(b) + sigmoid(c) + exp(a) + a**2 + c**-1 + 3"


def test_every_op_has_a_written_out_rule_matching_backward():
    values = dict(a=0.5, b=3.0, c=-4.0)
    t = trace(EVERY_OP, values)
    assert "(rule of" not in t.text()  # no op fell back to the engine's opaque rule
    # the same function written with Value directly, independently of the parser
    a, b, c = Value(0.5), Value(3.0), Value(-4.0)
    L = a - b / c + a.tanh() * 2**a + a**b + (-a).relu() + b.relu() + b.log() + c.sigmoid() + a.exp() + a**2 + c**-1 + 3
    L.backward()
    assert t.output == pytest.approx(L.data, rel=1e-15)
    for g, leaf in zip(t.gradients, (a, b, c)):
        assert g.grad == pytest.approx(leaf.grad, rel=1e-12)
        assert g.backward == pytest.approx(leaf.grad, rel=1e-12)
        assert g.grad == pytest.approx(g.finite_difference, rel=1e-6, abs=1e-8)
    # hand-derived: dL/dc = b/c^2 + s(1-s) - c^-2 with s = sigmoid(-4)
    s = 1 / (1 + math.exp(4.0))
    assert _grads(t)["c"] == pytest.approx(3 / 16 + s * (1 - s) - 1 / 16, rel=1e-12)


def test_division_rule_is_written_out_as_the_engine_runs_it():
    text = trace("a/b", dict(a=3.0, b=2.0)).text()
    assert "a.grad += g / b.data = 1 / 2 -> 0.5" in text
    assert "b.grad += -g * (L.data / b.data) = -1 * (1.5 / 2) -> -0.75" in text


def test_random_expressions_trace_equals_backward():
    for expression in random_expressions(60, seed=11, depth=4):
        t = trace(expression.text, expression.values)
        graph = build(expression.text, expression.values)
        graph.root.backward()
        for g in t.gradients:
            assert g.grad == pytest.approx(graph.inputs[g.name].grad, rel=1e-12, abs=1e-15), expression.text
            assert g.grad == g.right


def test_trace_leaves_backward_gradients_in_values():
    graph_values = dict(a=2.0, b=3.0)
    t = trace("a*b", graph_values)
    assert [g.backward for g in t.gradients] == [3.0, 2.0]


def test_non_finite_values_trace_without_exceptions():
    t = trace("log(a) * b", dict(a=0.0, b=2.0))
    assert t.output == -math.inf
    data = json.loads(json.dumps(t.to_dict()))
    assert data["output"]["value"] == "-inf"
    assert {g["name"]: g["grad"] for g in data["gradients"]} == {"a": "inf", "b": "-inf"}


# ---------------------------------------------------------------------------
# JSON and helpers
# ---------------------------------------------------------------------------


def test_json_carries_the_same_trace():
    t = trace("a*a + a", dict(a=3), assign=True)
    data = json.loads(json.dumps(t.to_dict()))
    assert data["accumulate"] == "=" and data["order"] == "reverse"
    assert data["output"] == {"name": "L", "value": 12.0}
    assert [s["node"] for s in data["forward"]] == ["a", "t1", "L"]
    assert [r["node"] for r in data["backward"]] == ["L", "t1"]
    rules = data["backward"][1]["rules"]
    assert [r["text"] for r in rules] == [
        "a.grad = a.data * g = 3 * 1 -> 3   (overwrites 1: lost)",
        "a.grad = a.data * g = 3 * 1 -> 3   (overwrites 3: lost)",
    ]
    assert data["gradients"][0]["grad"] == 3.0 and data["gradients"][0]["right"] == 7.0
    assert any(n.startswith("a lost gradient") for n in data["notes"])


def test_finite_difference_of_tanh():
    x = 0.5
    assert finite_difference("tanh(a)", {"a": x}, "a") == pytest.approx(1 - math.tanh(x) ** 2, rel=1e-8)


def test_names_avoid_user_variables():
    t = trace("L * t1 + t1", dict(L=2.0, t1=3.0))
    names = [s.name for s in t.forward]
    assert names[:2] == ["L", "t1"] and len(set(names)) == len(names)
    assert t.root not in ("L", "t1")
    assert _grads(t) == {"L": 3.0, "t1": 3.0}  # d/dL = t1, d/dt1 = L + 1


def test_label_graph_matches_trace_names():
    graph = build("tanh(a*b) + c", dict(a=1.0, b=2.0, c=3.0))
    named = label_graph(graph)
    assert set(named) == {"a", "b", "c", "t1", "t2", "L"}
    assert named["L"] is graph.root and graph.root.label == "L"


# ---------------------------------------------------------------------------
# exercise 3's two wrong orders, the kink note
# ---------------------------------------------------------------------------


def test_breadth_first_order_is_the_subtle_wrong_order():
    t = trace("a*b + a*b*c*d", dict(a=1, b=2, c=3, d=4), order="breadth-first")
    # the walk from L meets t1 = a*b on the short path, before t2 = t1*c has added its share
    assert _grads(t, "right") == {"a": 26.0, "b": 13.0, "c": 8.0, "d": 6.0}
    assert _grads(t)["a"] == 2.0 and _grads(t)["c"] == 8.0
    assert t.backward[1].node == "t1" and t.backward[1].g == 1.0 and t.backward[1].complete_g == 13.0
    assert "BREADTH-FIRST from the output, the subtle wrong order: exercise 3, Predict" in t.text()
    assert any(note.startswith("t1's rule ran with t1.grad = 1") for note in t.notes)


def test_breadth_first_is_harmless_without_a_short_and_a_long_path():
    t = trace("(a*b)+c", dict(a=2, b=3, c=4), order="breadth-first")
    assert _grads(t) == _grads(t, "right")
    assert any("breadth-first order happened to be harmless here" in note for note in t.notes)


def test_the_forward_order_is_labelled_as_exercise_3_and_assign_as_exercise_4():
    assert "FORWARD topological order: exercise 3, Predict" in trace("a*b", dict(a=1, b=2), order="forward").text()
    assert "'=' instead of '+=': exercise 4, Break" in trace("a*a", dict(a=1), assign=True).text()


def test_a_relu_at_its_kink_gets_a_note():
    t = trace("relu(a)*b", dict(a=0, b=2))
    (note,) = [n for n in t.notes if "kink" in n]
    assert note.startswith("t1 = relu(a) sits on relu's kink at 0")
    assert _grads(t) == {"a": 0.0, "b": 0.0} and _grads(t, "finite_difference")["a"] == pytest.approx(1.0)
    assert not any("kink" in n for n in trace("relu(a)*b", dict(a=0.5, b=2)).notes)

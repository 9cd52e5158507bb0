"""Each scalar derivative is written once (taugrad.scalar.derivatives); every consumer follows it.

For every definition, ops and fused neurons alike:

* the definition itself is right: its first-order gradient matches a central
  finite difference of the op's forward value;
* its consumers agree with it on random and IEEE-edge inputs: the first-order
  rule ``Value.backward()`` runs, the ``create_graph=True`` rule, and the trace's
  rule line (the number it adds, and its numbers line read back as arithmetic,
  and its formula line evaluated with the nodes' data);
* the engine's rules are the definitions' rules, and the trace's lines change
  when a definition does.
"""
from __future__ import annotations

import math
import random
from types import SimpleNamespace
from typing import Callable, Dict, List, Sequence, Tuple

import pytest

from taugrad.learn.trace import _edges, trace
from taugrad.scalar import derivatives, fused, higher, ieee
from taugrad.scalar import value as value_module
from taugrad.scalar.rulegen import Derivative
from taugrad.scalar.value import Value

Build = Callable[[Sequence[Value]], Value]

# how to build each op's node from its operands, and where its operands are smooth
CASES: Dict[str, Tuple[Build, List[Tuple[float, float]]]] = {
    "add_rule": (lambda v: v[0] + v[1], [(-3, 3), (-3, 3)]),
    "mul_rule": (lambda v: v[0] * v[1], [(-3, 3), (-3, 3)]),
    "div_rule": (lambda v: v[0] / v[1], [(-3, 3), (0.5, 3)]),
    "pow_const_rule": (lambda v: v[0] ** v[1].data, [(0.2, 3), (-2, 3)]),  # second "operand": k
    "pow_rule": (lambda v: v[0] ** v[1], [(0.2, 3), (-2, 2)]),
    "rpow_const_rule": (lambda v: v[1].data ** v[0], [(-2, 2), (0.2, 3)]),  # second "operand": k
    "relu_rule": (lambda v: v[0].relu(), [(0.1, 3)]),
    "tanh_rule": (lambda v: v[0].tanh(), [(-3, 3)]),
    "exp_rule": (lambda v: v[0].exp(), [(-3, 3)]),
    "log_rule": (lambda v: v[0].log(), [(0.2, 3)]),
    "sigmoid_rule": (lambda v: v[0].sigmoid(), [(-3, 3)]),
}
NEURONS = {"_linear_neuron_rule": fused.LINEAR, "_relu_neuron_rule": fused.RELU, "_tanh_neuron_rule": fused.TANH}
N_INPUTS = 3
EDGES = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-310, 1e308, -2.5, 2.0, 0.5, -0.5]


def _build(rule_name: str, numbers: Sequence[float]) -> Tuple[Value, List[Value]]:
    """The node of ``rule_name`` over fresh leaves holding ``numbers``, and those leaves."""
    leaves = [Value(x) for x in numbers]
    if rule_name in NEURONS:
        n = N_INPUTS
        bias, weights, inputs = leaves[0], leaves[1 : n + 1], leaves[n + 1 :]
        node = fused.neuron(bias, weights, inputs, [x.data for x in inputs], NEURONS[rule_name])
        return node, leaves
    build, _ = CASES[rule_name]
    node = build(leaves)
    return node, list(node._prev)


def _domains(rule_name: str) -> List[Tuple[float, float]]:
    return [(-2, 2)] * (1 + 2 * N_INPUTS) if rule_name in NEURONS else CASES[rule_name][1]


def _same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def test_every_definition_has_a_case():
    assert {d.rule_name for d in derivatives.ALL} == set(CASES) | set(NEURONS)


def test_the_engine_runs_the_definitions_rules():
    for d in derivatives.OPS:
        assert getattr(value_module, d.rule_name) is d.rule
    for d in derivatives.NEURONS:
        assert getattr(fused, d.rule_name) is d.rule
    for d in derivatives.ALL:
        assert higher.GRAPH_RULES[d.rule] is d.graph and d.rule.derivative is d
        assert _build(d.rule_name, [1.5] * len(_domains(d.rule_name)))[0]._rule is d.rule


# ---------------------------------------------------------------------------
# the definitions are right
# ---------------------------------------------------------------------------


def _finite_difference_mismatches(rule_name: str, rule: Callable, seed: int = 0, trials: int = 20) -> List[str]:
    """Run ``rule`` (a first-order rule for ``rule_name``'s node) against central differences."""
    rng = random.Random(seed)
    bad = []
    for _ in range(trials):
        numbers = [rng.uniform(lo, hi) for lo, hi in _domains(rule_name)]
        if rule_name == "pow_const_rule":
            numbers[1] = rng.choice([0.0, 0.5, -0.5, 2.0, 3.0, -1.5])
        if rule_name == "rpow_const_rule":
            numbers[1] = rng.choice([0.5, 2.0, 3.0])
        node, parents = _build(rule_name, numbers)
        g = rng.uniform(-2, 2)
        for p in parents:
            p.grad = 0.0
        node.grad = g
        rule(node)
        for i, p in enumerate(parents):
            h = 1e-6 * max(1.0, abs(p.data))
            shifted = [list(numbers), list(numbers)]
            shifted[0][i] += h  # parents are the first leaves, in order
            shifted[1][i] -= h
            numeric = g * (_build(rule_name, shifted[0])[0].data - _build(rule_name, shifted[1])[0].data) / (2 * h)
            if abs(numeric - p.grad) > 1e-5 * max(1.0, abs(numeric)):
                bad.append(f"{rule_name} at {numbers}, parent {i}: rule {p.grad}, finite difference {numeric}")
    return bad


@pytest.mark.parametrize("definition", derivatives.ALL, ids=lambda d: d.rule_name)
def test_definition_matches_finite_differences(definition):
    assert _finite_difference_mismatches(definition.rule_name, definition.rule) == []


def test_a_wrong_definition_is_caught():
    """The check above has teeth: a tanh with the wrong sign in its derivative fails it."""
    wrong = Derivative("tanh_rule", "out = tanh(a)", "wrong on purpose", a="(1 + out**2) * g")
    assert _finite_difference_mismatches("tanh_rule", wrong.rule)


# ---------------------------------------------------------------------------
# every consumer agrees with the definition
# ---------------------------------------------------------------------------


def _number(x: float) -> str:
    """Full precision, so a numbers line read back as Python gives the engine's float."""
    text = repr(float(x))
    return f"({text})" if text.startswith("-") else text


def _names(node: Value, parents: Sequence[Value]) -> Callable[[object], str]:
    labels = {id(node): "L"}
    if node._rule in (d.rule for d in derivatives.NEURONS):
        n = N_INPUTS
        labels[id(parents[0])] = "bias"
        labels.update({id(w): f"w{i}" for i, w in enumerate(parents[1 : n + 1])})
        labels.update({id(x): f"x{i}" for i, x in enumerate(parents[n + 1 :])})
    else:
        labels.update({id(p): name for p, name in zip(parents, "ab")})
    return lambda v: labels.get(id(v), _number(v.data))


def _data_text(name: Callable[[object], str]) -> Callable[[object], str]:
    return lambda v: f"{name(v)}.data" if name(v).isidentifier() else name(v)


def _consumers(node: Value, parents: Sequence[Value], g: float):
    """(first-order, create_graph, trace, definition.contributions) gradient per parent."""
    definition = node._rule.derivative
    for p in parents:
        p.grad = 0.0
    node.grad = g
    node._rule(node)
    first = [p.grad for p in parents]

    graph = {id(p): 0.0 for p in parents}
    for parent, term in higher.GRAPH_RULES[node._rule](node, Value(g)):
        assert isinstance(term, Value)
        graph[id(parent)] += term.data

    name = _names(node, parents)
    lines = definition.explain(node, g, _data_text(name), _number)
    # the trace's own entry point gives these lines (its numbers rounded for reading)
    edges = _edges(node, g, name)
    assert [line[0] for line in lines] == [edge[0] for edge in edges]
    assert all(_same(line[3], edge[3]) for line, edge in zip(lines, edges))
    traced = {id(p): 0.0 for p in parents}
    for parent, _, _, contribution in lines:
        traced[id(parent)] += contribution

    added = definition.contributions(node, g)
    return first, [graph[id(p)] for p in parents], [traced[id(p)] for p in parents], added, lines


@pytest.mark.parametrize("definition", derivatives.ALL, ids=lambda d: d.rule_name)
def test_first_order_create_graph_and_trace_agree(definition):
    rng = random.Random(definition.rule_name)
    domains = _domains(definition.rule_name)
    for trial in range(300):
        edge = trial >= 100
        numbers = [rng.choice(EDGES) if edge and rng.random() < 0.6 else rng.uniform(lo, hi) for lo, hi in domains]
        g = rng.choice([1.0, -0.5, 0.0, math.inf, math.nan, 3.25]) if edge else rng.uniform(-2, 2)
        node, parents = _build(definition.rule_name, numbers)
        first, graph, traced, added, lines = _consumers(node, parents, g)
        where = f"{definition.rule_name} at {numbers}, g = {g}"
        for i in range(len(parents)):
            assert _same(first[i], graph[i]), f"{where}: create_graph {graph[i]} vs first order {first[i]}"
            assert _same(first[i], traced[i]), f"{where}: trace {traced[i]} vs first order {first[i]}"
        if not edge:  # a finite case: the printed lines are the arithmetic the engine did
            _check_lines(lines, node, parents, g, where)


def _check_lines(lines, node: Value, parents: Sequence[Value], g: float, where: str) -> None:
    name = _names(node, parents)
    scope = {"inf": math.inf, "nan": math.nan, "log": ieee.log, "g": g}
    scope.update({name(v): SimpleNamespace(data=v.data) for v in [node, *parents]})
    for _, formula, numbers, contribution in lines:
        for text in (numbers, formula):
            shown = float(eval(text, {"__builtins__": {}}, scope))  # noqa: S307 - text the test made
            assert shown == pytest.approx(contribution, rel=1e-12, abs=1e-300), f"{where}: {text!r}"


# ---------------------------------------------------------------------------
# the trace's rule lines come from the definitions
# ---------------------------------------------------------------------------


def test_trace_lines_follow_a_changed_definition(monkeypatch):
    """Swap the product rule's definition: the trace's line changes with it, text and number."""
    swapped = Derivative("mul_rule", "out = a * b", "the same derivative, written g-first", a="g * b", b="g * a")
    monkeypatch.setattr(value_module, "mul_rule", swapped.rule)
    lines = [line.strip() for line in trace("a*b", dict(a=2, b=3)).text().splitlines()]
    assert "a.grad += g * b.data = 1 * 3 -> 3" in lines
    assert "b.grad += g * a.data = 1 * 2 -> 2" in lines


def test_trace_writes_out_every_op_from_its_definition():
    text = trace("a - b/c + tanh(a)*2**a + a**b + relu(-a) + relu(b) + log(b) + sigmoid(c) + exp(a) + a**2 + c**-1",
                 dict(a=0.5, b=3.0, c=-4.0)).text()
    forms = [
        "c.grad += (-1) * c.data ** (-2) * g = (-1) * (-4) ** (-2) * 1 -> -0.0625",  # a ** k
        "a.grad += 2 * a.data ** 1 * g = 2 * 0.5 ** 1 * 1 -> 1",
        "a.grad += t19.data * g = 1.64872 * 1 ->",  # exp
        "c.grad += t17.data * (1 - t17.data) * g = 0.0179862 * (1 - 0.0179862) * 1 ->",  # sigmoid
        "b.grad += g / b.data = 1 / 3 -> 0.333333",  # log
        "b.grad += (t13.data > 0) * g = 1 * 1 ->",  # relu, passing
        "t10.grad += (t11.data > 0) * g = 0 * 1 -> 0",  # relu, blocked
        "a.grad += (b.data != 0) * b.data * a.data ** (b.data - 1) * g = 1 * 3 * 0.5 ** 2 * 1 ->",  # a ** b
        "b.grad += t8.data * log(a.data) * g = 0.125 * (-0.693147) * 1 ->",
        "a.grad += t5.data * log(2) * g = 1.41421 * 0.693147 * 0.462117 ->",  # k ** b
        "a.grad += (1 - t4.data**2) * g = (1 - 0.462117**2) * 1.41421 ->",  # tanh
        "b.grad += g / c.data = (-1) / (-4) ->",  # a / b
        "c.grad += -g * (t1.data / c.data) = -(-1) * ((-0.75) / (-4)) ->",
    ]
    for form in forms:
        assert form in text, form
    assert "(rule of" not in text  # no op fell back to running an opaque rule


def test_fused_neuron_trace_lines():
    """A fused tanh neuron is written out by the chain rule through tanh's own term."""
    node, parents = _build("_tanh_neuron_rule", [0.1, 0.2, -0.3, 0.4, 1.0, 2.0, 3.0])
    name = _names(node, parents)
    lines = _edges(node, 1.0, name)
    formulas = [line[1] for line in lines]
    assert formulas[:3] == ["(1 - L.data**2) * g", "x0.data * ((1 - L.data**2) * g)", "w0.data * ((1 - L.data**2) * g)"]
    relu, parents = _build("_relu_neuron_rule", [-5.0, 0.2, -0.3, 0.4, 1.0, 2.0, 3.0])
    lines = _edges(relu, 1.0, _names(relu, parents))
    assert lines[1][1:] == ("(L.data > 0) * x0.data * g", "0 * 1 * 1", 0.0)


@pytest.mark.parametrize("text", ["exp(a)", "a.data", "a < b", "c * g", "log(a, b)", "a if b else g"])
def test_a_definition_outside_the_formula_language_is_refused(text):
    with pytest.raises(ValueError, match="not allowed"):
        Derivative("bad_rule", "out = bad(a, b)", "refused", a=text, b="g")

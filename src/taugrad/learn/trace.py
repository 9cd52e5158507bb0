"""Step-by-step backpropagation, written out with the numbers filled in.

:func:`trace` builds an expression's graph and replays what ``backward()`` does:

1. the forward pass in topological order, one line per node
   (``t1 = a * b = 2 * 3 -> 6``);
2. the backward pass in reverse topological order, one line per local rule,
   e.g. ``a.grad += b.data * g = 3 * 1 -> 3`` where ``g`` is the gradient of the
   node whose rule runs (``g = dL/dt1``);
3. each input's gradient next to ``Value.backward()``'s and next to the central
   finite difference ``(L(x + h) - L(x - h)) / 2h``.

It also runs the experiments of the chapter's exercises 3 and 4:

* ``assign=True`` (exercise 4, Break) replays the rules with ``=`` instead of
  ``+=``.  A value that reaches the output along several paths keeps only the
  last contribution; the trace names the nodes whose gradient was overwritten.
* ``order='forward'`` (exercise 3, Predict) runs the rules parents-first.  A
  node's rule then runs before the gradient from its consumers has arrived, so
  it passes on an incomplete (often zero) gradient; the trace names those nodes.
* ``order='breadth-first'`` (exercise 3, the subtle wrong order) runs the rules
  in the order a breadth-first walk from the output meets the nodes.  It looks
  right, as every node comes after the node that found it, but a shared node
  reached by a short path runs before a longer path has added its share.

The replay writes each local rule out from the op's one definition in
:mod:`taugrad.scalar.derivatives`, the same definition ``Value.backward()``'s
rules are generated from; the printed table still shows both, and the finite
difference.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from taugrad.graph import topological_order
from taugrad.learn.expr import Expression, Graph, format_number, parse
from taugrad.scalar import ieee

DEFAULT_EPS = 1e-6
"""Relative step ``h = eps * max(1, |x|)`` of the central finite difference."""


# ---------------------------------------------------------------------------
# the record
# ---------------------------------------------------------------------------


@dataclass
class ForwardStep:
    """One node of the forward pass: ``name = formula = numbers -> value``."""

    name: str
    op: str
    parents: List[str]
    formula: str
    numbers: str
    value: float
    source: Optional[str] = None  # the sub-expression this node computes, if one


@dataclass
class RuleLine:
    """One parent update of a local rule: ``target.grad += formula = numbers -> after``."""

    target: str
    formula: str
    numbers: str
    contribution: float
    before: float
    after: float
    overwrote: bool = False  # '=' replaced a non-zero gradient (it was lost)

    def text(self, assign: bool) -> str:
        if assign:
            line = f"{self.target}.grad = {self.formula} = {self.numbers} -> {format_number(self.after)}"
            if self.overwrote:
                line += f"   (overwrites {format_number(self.before)}: lost)"
            return line
        if self.before == 0.0:
            result = format_number(self.after)
        else:
            sign = "-" if self.contribution < 0 else "+"
            result = (f"{format_number(self.before)} {sign} {format_number(abs(self.contribution))} "
                      f"= {format_number(self.after)}")
        return f"{self.target}.grad += {self.formula} = {self.numbers} -> {result}"


@dataclass
class RuleStep:
    """One node's local rule: it ran with ``g = node.grad`` at that moment."""

    node: str
    op: str
    g: float
    lines: List[RuleLine]
    complete_g: float  # the node's gradient once every consumer has contributed
    node_id: int = field(default=0, repr=False, compare=False)


@dataclass
class InputGradient:
    name: str
    value: float
    grad: float  # what this replay computed
    right: float  # the replay with += in reverse topological order
    backward: float  # Value.backward()
    finite_difference: float


@dataclass
class Trace:
    """Everything :func:`trace` found; print with :meth:`text`, export with :meth:`to_dict`."""

    expression: str
    values: Dict[str, float]
    assign: bool
    order: str
    root: str
    output: float
    forward: List[ForwardStep]
    backward: List[RuleStep]
    gradients: List[InputGradient]
    eps: float
    notes: List[str] = field(default_factory=list)

    @property
    def broken(self) -> bool:
        """True for the experiments of exercises 3 and 4 (``=``, or an order other than reverse topological)."""
        return self.assign or self.order != "reverse"

    def text(self) -> str:
        """The trace as the lines ``taugrad trace`` prints."""
        return "\n".join(_text_lines(self))

    def to_dict(self) -> dict:
        """JSON-ready form (non-finite numbers become the strings 'inf', '-inf', 'nan')."""
        return {
            "expression": self.expression,
            "values": {k: _json_number(v) for k, v in self.values.items()},
            "accumulate": "=" if self.assign else "+=",
            "order": self.order,
            "output": {"name": self.root, "value": _json_number(self.output)},
            "forward": [
                {"node": s.name, "op": s.op, "parents": s.parents, "formula": s.formula,
                 "numbers": s.numbers, "value": _json_number(s.value), "source": s.source}
                for s in self.forward
            ],
            "backward": [
                {"node": r.node, "op": r.op, "g": _json_number(r.g), "complete_g": _json_number(r.complete_g),
                 "rules": [
                     {"target": line.target, "text": line.text(self.assign), "formula": line.formula,
                      "numbers": line.numbers, "contribution": _json_number(line.contribution),
                      "before": _json_number(line.before), "after": _json_number(line.after),
                      "overwrote": line.overwrote}
                     for line in r.lines
                 ]}
                for r in self.backward
            ],
            "gradients": [
                {"name": g.name, "value": _json_number(g.value), "grad": _json_number(g.grad),
                 "right": _json_number(g.right), "backward": _json_number(g.backward),
                 "finite_difference": _json_number(g.finite_difference)}
                for g in self.gradients
            ],
            "eps": self.eps,
            "notes": self.notes,
        }


def _json_number(x: float) -> Union[float, str]:
    return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


# ---------------------------------------------------------------------------
# naming the nodes
# ---------------------------------------------------------------------------


class _Names:
    """Display names: inputs by their name, constants by their number, the
    output ``L`` and the other interior nodes ``t1, t2, ...`` in forward order."""

    def __init__(self, graph: Graph, interior: Sequence[object]):
        self.by_id: Dict[int, str] = {id(v): name for name, v in graph.inputs.items()}
        taken = set(self.by_id.values())
        root = graph.root
        root_name = next(n for n in ("L", "out", "L_", "out_") if n not in taken)
        counter = 0
        for node in interior:
            if id(node) in self.by_id:
                continue
            if node is root:
                name = root_name
            else:
                counter += 1
                name = f"t{counter}"
                while name in taken or name == root_name:
                    name += "_"
            self.by_id[id(node)] = name
            taken.add(name)
        if id(root) not in self.by_id:  # an expression that is a single constant
            self.by_id[id(root)] = root_name

    def __call__(self, node) -> str:
        name = self.by_id.get(id(node))
        return name if name is not None else format_number(node.data)  # a constant leaf

    def is_constant(self, node) -> bool:
        return id(node) not in self.by_id


# ---------------------------------------------------------------------------
# the local rules, written out
# ---------------------------------------------------------------------------

# A rule description returns, for each parent edge, (parent, formula, numbers,
# contribution) where contribution = d out / d parent * g, computed exactly as
# the engine computes it.
Edge = Tuple[object, str, str, float]


def _operand(x: float) -> str:
    """A number as an operand inside a formula: negatives get parentheses."""
    text = format_number(x)
    return f"({text})" if text.startswith("-") else text


def _edges(node, g: float, name: Callable[[object], str]) -> List[Edge]:
    """The rule lines of ``node``, written out by its op's one definition
    (:mod:`taugrad.scalar.derivatives`): the formula with names and with numbers,
    and the number the engine's own generated code adds."""
    definition = getattr(node._rule, "derivative", None)
    if definition is None:  # a hand-written _backward: only its numbers can be shown
        return _engine_edges(node, g)

    def data(v) -> str:  # "b.data" for a named node, "2" for a constant
        label = name(v)
        return f"{label}.data" if label != format_number(v.data) else _operand(v.data)

    return definition.explain(node, g, data, _operand)


def _engine_edges(node, g: float) -> List[Edge]:
    """A rule with no definition (set by hand through ``_backward``): run it on
    zeroed parent gradients and read what it added."""
    parents = list(dict.fromkeys(node._prev))  # unique, in operand order
    saved = [(p, p.grad) for p in parents]
    saved_out = node.grad
    try:
        for p in parents:
            p.grad = 0.0
        node.grad = g
        node._rule(node)
        added = [p.grad for p in parents]
    finally:
        node.grad = saved_out
        for p, grad in saved:
            p.grad = grad
    return [(p, f"(rule of {node._op or 'op'}) * g", f"... * {_operand(g)}", c) for p, c in zip(parents, added)]


def _name_operand(text: str) -> str:
    return f"({text})" if text.startswith("-") else text


def _forward_formula(node, name: Callable[[object], str], use_numbers: bool) -> str:
    op, parents = node._op, node._prev
    show = (lambda v: _operand(v.data)) if use_numbers else (lambda v: _name_operand(name(v)))
    if op in ("+", "*", "/") and len(parents) == 2:
        return f"{show(parents[0])} {op} {show(parents[1])}"
    if op == "**" and len(parents) == 2:
        return f"{show(parents[0])} ** {show(parents[1])}"
    if op.startswith("**") and len(parents) == 1:
        return f"{show(parents[0])} ** {_operand(node._aux)}"
    if op.endswith("**") and len(parents) == 1:
        return f"{_operand(node._aux)} ** {show(parents[0])}"
    func = "relu" if op == "ReLU" else (op or "op")
    return f"{func}({', '.join(show(p) for p in parents)})"


# ---------------------------------------------------------------------------
# the replay
# ---------------------------------------------------------------------------


def _replay(root, interior: List[object], assign: bool, order: str, name) -> Tuple[Dict[int, float], List[RuleStep]]:
    """Run the local rules on a private gradient table (the Values are not touched)."""
    grads: Dict[int, float] = {id(root): 1.0}
    steps: List[RuleStep] = []
    sequence = {"reverse": lambda: reversed(interior), "forward": lambda: iter(interior),
                "breadth-first": lambda: iter(breadth_first(root, interior))}[order]()
    for node in sequence:
        g = grads.get(id(node), 0.0)
        lines: List[RuleLine] = []
        for parent, formula, numbers, contribution in _edges(node, g, name):
            before = grads.get(id(parent), 0.0)
            after = contribution if assign else before + contribution
            grads[id(parent)] = after
            if not name.is_constant(parent):
                lines.append(RuleLine(name(parent), formula, numbers, contribution, before, after,
                                      overwrote=assign and before != 0.0 and before == before))
        steps.append(RuleStep(name(node), node._op, g, lines, complete_g=g, node_id=id(node)))
    return grads, steps


ORDERS = ("reverse", "forward", "breadth-first")


def breadth_first(root, interior: Sequence[object]) -> List[object]:
    """The interior nodes in the order a breadth-first walk from ``root`` first meets them."""
    wanted = {id(n) for n in interior}
    seen, order, queue = {id(root)}, [root], deque([root])
    while queue:
        for parent in queue.popleft()._prev:
            if id(parent) in wanted and id(parent) not in seen:
                seen.add(id(parent))
                order.append(parent)
                queue.append(parent)
    return order


def replay_grads(graph: Graph, assign: bool = False, order: str = "reverse") -> Dict[int, float]:
    """Every node's gradient (by ``id``) when the rules run in ``order`` with ``+=`` or, ``assign``, ``=``."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    interior = topological_order([graph.root])
    grads, _ = _replay(graph.root, interior, assign, order, _Names(graph, interior))
    return grads


def contributions(root, grads: Mapping[int, float]) -> Dict[Tuple[int, int], List[float]]:
    """``{(id(parent), id(node)): [amount, ...]}``: what each node's rule adds to each parent, one amount per time
    the parent is an operand (``a * a`` gives two), with the node's gradient taken from ``grads``."""
    added: Dict[Tuple[int, int], List[float]] = {}
    for node in topological_order([root]):
        for parent, _, _, amount in _edges(node, grads.get(id(node), 0.0), lambda v: getattr(v, "label", "") or "v"):
            added.setdefault((id(parent), id(node)), []).append(amount)
    return added


def trace(
    expression: Union[str, Expression],
    values: Mapping[str, float],
    *,
    assign: bool = False,
    order: str = "reverse",
    eps: float = DEFAULT_EPS,
) -> Trace:
    """Trace forward and backward passes of ``expression`` at ``values``.

    ``assign=True`` replays with ``=`` instead of ``+=``; ``order='forward'``
    runs the local rules parents-first instead of in reverse topological order.
    The correct gradients (``+=``, reverse order), ``Value.backward()``'s and the
    central finite differences are always computed for comparison.  After the
    call the graph's Values hold ``backward()``'s gradients.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps}")
    parsed = parse(expression) if isinstance(expression, str) else expression
    graph = parsed.build(values)
    root = graph.root
    interior = topological_order([root])
    name = _Names(graph, interior)

    forward = [ForwardStep(n, "", [], n, format_number(v.data), v.data) for n, v in graph.inputs.items()]
    for node in interior:
        forward.append(ForwardStep(
            name(node), node._op, [name(p) for p in node._prev],
            _forward_formula(node, name, False), _forward_formula(node, name, True),
            node.data, graph.source_of(node),
        ))

    right, right_steps = _replay(root, interior, assign=False, order="reverse", name=name)
    if assign or order != "reverse":
        grads, steps = _replay(root, interior, assign=assign, order=order, name=name)
    else:
        grads, steps = right, right_steps
    for step in steps:
        step.complete_g = right.get(step.node_id, 0.0)

    for leaf in graph.inputs.values():  # backward() accumulates into leaves: start them at 0
        leaf.grad = 0.0
    root.backward()

    input_values = {n: float(v.data) for n, v in graph.inputs.items()}
    gradients = [
        InputGradient(n, v.data, grads.get(id(v), 0.0), right.get(id(v), 0.0), v.grad,
                      finite_difference(parsed, input_values, n, eps))
        for n, v in graph.inputs.items()
    ]
    result = Trace(str(parsed.text), input_values, assign, order, name(root), root.data,
                   forward, steps, gradients, eps)
    result.notes = _kinks(interior, name) + _explain(result, interior, name, right)
    return result


def _kinks(interior, name) -> List[str]:
    """A note for each ReLU evaluated exactly at 0, where its derivative is not defined."""
    notes = []
    for node in interior:
        if node._op == "ReLU" and node._prev and node._prev[0].data == 0.0:
            notes.append(f"{name(node)} = relu({name(node._prev[0])}) sits on relu's kink at 0, where it has no "
                         f"derivative: backward() uses relu'(0) = 0 (as PyTorch does), while the central finite "
                         f"difference averages the slopes on each side, relu' = 0.5")
    return notes


def label_graph(graph: Graph) -> Dict[str, object]:
    """Give the unlabelled nodes of ``graph`` the names the trace uses (``L``,
    ``t1``, ...; inputs by their name) so a drawing matches the trace.
    Returns ``{name: node}``."""
    interior = topological_order([graph.root])
    name = _Names(graph, interior)
    named: Dict[str, object] = {}
    for node in list(graph.inputs.values()) + interior + [graph.root]:
        label = name(node)
        if not getattr(node, "label", ""):
            node.label = label
        named[label] = node
    return named


def finite_difference(expression: Union[str, Expression], values: Mapping[str, float], wrt: str,
                      eps: float = DEFAULT_EPS) -> float:
    """Central difference ``(f(x + h) - f(x - h)) / 2h`` with ``h = eps * max(1, |x|)``."""
    parsed = parse(expression) if isinstance(expression, str) else expression
    x = float(values[wrt])
    h = eps * max(1.0, abs(x))
    plus = parsed.evaluate({**values, wrt: x + h})
    minus = parsed.evaluate({**values, wrt: x - h})
    return ieee.div(plus - minus, 2.0 * h) if math.isfinite(plus - minus) else math.nan


def _explain(result: Trace, interior, name, right: Dict[int, float]) -> List[str]:
    """Say which nodes lost gradient in a Break experiment, and why."""
    notes: List[str] = []
    if result.assign:
        lost: Dict[str, List[str]] = {}
        for step in result.backward:
            for line in step.lines:
                if line.overwrote:
                    lost.setdefault(line.target, []).append(
                        f"{format_number(line.before)} replaced by {format_number(line.after)} from {step.node}'s rule")
        for target, events in lost.items():
            notes.append(f"{target} lost gradient: '=' overwrote it ({'; '.join(events)}); "
                         f"'+=' would have summed every path")
        if not lost:
            notes.append("no gradient was overwritten: every value here is used once, so '=' and '+=' agree "
                         "(try an expression that reuses a value, e.g. a*a + a)")
    if result.order != "reverse":
        early = [s for s in result.backward if s.g != s.complete_g]
        for step in early:
            notes.append(f"{step.node}'s rule ran with {step.node}.grad = {format_number(step.g)} before its consumers "
                         f"had passed back all of its gradient ({format_number(step.complete_g)}); "
                         f"its parents got {'nothing' if step.g == 0 else 'too little'} from it")
        if early:
            notes.append("reverse topological order runs a node's rule only after every node that uses it, "
                         "so its gradient is complete when it is passed on")
        elif result.order == "forward":
            notes.append("forward order happened to be harmless here: every rule already had its full gradient")
        else:
            notes.append("breadth-first order happened to be harmless here: try a value shared by a short and a "
                         "long path, e.g. a*b + a*b*c*d")
    wrong = [g.name for g in result.gradients if not _same(g.grad, g.right)]
    if result.broken:
        if wrong:
            notes.append(f"wrong input gradient{'s' if len(wrong) > 1 else ''}: {', '.join(wrong)}")
        else:
            notes.append("every input gradient came out right")
    mismatched = [g.name for g in result.gradients if not _close(g.right, g.backward)]
    if mismatched:
        notes.append(f"warning: the written-out rules disagree with Value.backward() for {', '.join(mismatched)}")
    return notes


def _same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def _close(x: float, y: float) -> bool:
    return _same(x, y) or abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))


# ---------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------


def _text_lines(t: Trace) -> List[str]:
    n = format_number
    lines = [f"expression: {t.expression}"]
    lines.append("")
    lines.append("forward pass (topological order: every node after its inputs)")
    width = max((len(s.name) for s in t.forward), default=1)
    for s in t.forward:
        if not s.op:
            lines.append(f"  {s.name:<{width}} = {n(s.value)}")
            continue
        text = f"  {s.name:<{width}} = {s.formula} = {s.numbers} -> {n(s.value)}"
        if s.source and s.source != s.formula:
            source = s.source if len(s.source) <= 60 else s.source[:57] + "..."
            text += f"      [{source}]"
        lines.append(text)
    lines.append(f"  {t.root} = {n(t.output)}")

    lines.append("")
    how = {"reverse": "reverse topological order",
           "forward": "FORWARD topological order: exercise 3, Predict",
           "breadth-first": "BREADTH-FIRST from the output, the subtle wrong order: exercise 3, Predict"}[t.order]
    symbol = "=" if t.assign else "+="
    extra = "  -- '=' instead of '+=': exercise 4, Break" if t.assign else ""
    lines.append(f"backward pass ({how}, rules use '{symbol}'){extra}")
    lines.append(f"  {t.root}.grad = 1")
    formulas = {s.name: s.formula for s in t.forward}
    for step in t.backward:
        lines.append(f"  rule of {step.node} = {formulas.get(step.node, step.op)}   (g = {step.node}.grad = {n(step.g)})")
        for line in step.lines:
            lines.append(f"    {line.text(t.assign)}")

    lines.append("")
    lines.append(f"gradients (finite difference: central, h = {t.eps:g} * max(1, |x|))")
    rows = []
    if t.broken:
        label = "with '='" if t.assign and t.order == "reverse" else (
            f"{t.order} order" if not t.assign else f"'=' + {t.order}")
        header = ["input", "value", label, "right (+=, reverse)", "backward()", "finite diff", ""]
        for g in t.gradients:
            flag = "" if _same(g.grad, g.right) else "<- WRONG"
            rows.append([g.name, n(g.value), n(g.grad), n(g.right), n(g.backward), n(g.finite_difference), flag])
    else:
        header = ["input", "value", f"d{t.root}/d(input)", "backward()", "finite diff", "|difference|"]
        for g in t.gradients:
            diff = abs(g.grad - g.finite_difference)
            rows.append([g.name, n(g.value), n(g.grad), n(g.backward), n(g.finite_difference), f"{diff:.1e}"])
    lines.extend("  " + row for row in _table(header, rows))
    if not t.gradients:
        lines.append("  (no inputs: the expression is a constant)")
    if t.notes:
        lines.append("")
        lines.extend(f"note: {note}" for note in t.notes)
    return lines


def _table(header: List[str], rows: List[List[str]]) -> List[str]:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    out = []
    for row in [header] + rows:
        out.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    return out


__all__ = ["DEFAULT_EPS", "ORDERS", "ForwardStep", "InputGradient", "RuleLine", "RuleStep", "Trace", "breadth_first",
           "contributions", "finite_difference", "label_graph", "replay_grads", "trace"]

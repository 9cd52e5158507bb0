"""Gradients of ``Value`` graphs that are themselves ``Value`` graphs (``create_graph=True``).

Backward is a computation too.  The fast rules in :mod:`taugrad.scalar.value`
add plain floats into ``.grad``; the rules here compute the same local terms
with ``Value`` operations, so every gradient they produce remembers how it was
made and can be differentiated again, to any order::

    x = Value(2.0); y = x ** 3
    (dy,) = grad(y, [x], create_graph=True)    # 3x^2 = 12, a Value
    (d2y,) = grad(dy, [x], create_graph=True)  # 6x = 12
    (d3y,) = grad(d2y, [x])                    # 6

Each rule maps ``(out, g)``, with ``g = dL/d out`` a ``Value``, to the terms
``(parent, dL/d parent contribution)``.  The fast rules and these come from the
same one-line definitions (:mod:`taugrad.scalar.derivatives`): here the formula
is evaluated with ``Value`` operations.  The first-order path never comes here.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from taugrad.graph import topological_order
from taugrad.scalar import derivatives
from taugrad.scalar.value import Value

Terms = Tuple[Tuple[Value, Value], ...]


GRAPH_RULES: Dict[Callable[[Value], None], Callable[[Value, Value], Terms]] = {
    definition.rule: definition.graph for definition in derivatives.ALL
}
"""First-order rule -> its ``create_graph`` rule, both built from one definition in
:mod:`taugrad.scalar.derivatives`."""


def _graph_rule(node: Value) -> Callable[[Value, Value], Terms]:
    rule = GRAPH_RULES.get(node._rule)
    if rule is None:
        raise TypeError(
            f"create_graph=True: op {node._op!r} has a hand-written _backward, which computes plain floats "
            "and cannot be differentiated again; build it from taugrad's ops instead"
        )
    return rule


def graph_gradients(
    outputs: Sequence[Value], seeds: Sequence[Value], order: Optional[List[Value]] = None
) -> Dict[Value, Value]:
    """``{node: dL/d node}`` as differentiable Values, where ``L = sum_i seeds[i] * outputs[i]``.

    A node is missing when no gradient term reached it: it is unreachable, or
    every path to it is masked (``relu`` below 0, ``x ** 0``).  ``order`` is
    ``topological_order(outputs)`` if the caller already has it.
    """
    grads: Dict[Value, Value] = {}
    for out, seed in zip(outputs, seeds):
        grads[out] = grads[out] + seed if out in grads else seed
    if order is None:
        order = topological_order(outputs)
    for node in reversed(order):
        g = grads.get(node)
        if g is None:
            continue
        for parent, term in _graph_rule(node)(node, g):
            grads[parent] = grads[parent] + term if parent in grads else term
    return grads


def backward_create_graph(root: Value) -> None:
    """``root.backward(create_graph=True)``: ``.grad`` of every node becomes a Value graph.

    Leaves accumulate (``leaf.grad`` + new gradient), interior nodes get this
    pass's gradient, as in the float path.
    """
    grads = graph_gradients([root], [Value(1.0)])
    for node, g in grads.items():
        if node._prev:
            node.grad = g
        else:
            old = node.grad
            node.grad = g if (old.__class__ is float and old == 0.0) else g + old


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Optional[Any] = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> Tuple[Any, ...]:
    """d(sum_i grad_outputs[i] * outputs[i]) / d inputs for ``Value`` graphs; ``.grad`` is untouched.

    Returns a tuple with one entry per input: a float, or a differentiable
    ``Value`` with ``create_graph=True``.  As in PyTorch, an input is *used* when
    the graph reaches it from the outputs; a used input whose every gradient term
    is masked (``relu`` below 0, ``x ** 0``) gets 0.  An input the graph does not
    reach is an error unless ``allow_unused=True`` (then its entry is ``None``).
    """
    outputs = _as_list(outputs, "outputs")
    inputs = _as_list(inputs, "inputs")
    if grad_outputs is None:
        seeds = [Value(1.0) for _ in outputs]
    else:
        given = list(grad_outputs) if isinstance(grad_outputs, (list, tuple)) else [grad_outputs]
        seeds = [g if isinstance(g, Value) else Value(g) for g in given]
        if len(seeds) != len(outputs):
            raise ValueError(f"grad: {len(seeds)} grad_outputs for {len(outputs)} outputs")
    order = topological_order(outputs)
    grads = graph_gradients(outputs, seeds, order)
    reached = _reached(outputs, order)
    result = []
    for index, x in enumerate(inputs):
        g = grads.get(x)
        if g is None:
            if x not in reached:
                if not allow_unused:
                    raise ValueError(
                        f"grad: input {index} ({x!r}) is not used to compute the outputs; pass allow_unused=True"
                    )
                result.append(None)
                continue
            g = Value(0.0)  # used, but every path to it is masked: d/dx is 0
        result.append(g if create_graph else g.data)
    return tuple(result)


def _reached(outputs: Sequence[Value], order: Sequence[Value]) -> set:
    """Every node the graph reaches from ``outputs``: the outputs, the interior
    nodes in ``order`` and their parents (which include the leaves)."""
    reached = set(outputs)
    for node in order:
        reached.update(node._prev)
    return reached


def _as_list(x: Any, name: str) -> List[Value]:
    items = [x] if isinstance(x, Value) else list(x) if isinstance(x, Iterable) else None
    if items is None or not all(isinstance(item, Value) for item in items):
        raise TypeError(f"grad: {name} must be a Value or a sequence of Values")
    return items

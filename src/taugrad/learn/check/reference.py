"""What a correct engine gives, and what the classic wrong traversals give.

The reference is ``taugrad.Value`` (its rules are tested against PyTorch
float64) driven through the same :class:`~taugrad.learn.check.probe.Probe` as
the learner's class.  :func:`simulate` replays local rules by hand in a chosen
order, with ``+=`` or ``=``, so a wrong gradient can be matched to the
mistake that produces exactly that number.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Dict, List, Optional

from taugrad.learn.check.probe import BINARY, Probe
from taugrad.scalar import Value

REFERENCE = Probe(Value)
EPS = 1e-6


def evaluate(terms, inputs) -> dict:
    """``{"value": float, "grads": [{name: float}]}`` from taugrad."""
    return REFERENCE.evaluate(terms, inputs)


def finite_difference(terms, inputs: Dict[str, float], name: str, eps: float = EPS) -> float:
    """Central difference ``(f(x + h) - f(x - h)) / 2h`` with ``h = eps * max(1, |x|)``."""
    x = float(inputs[name])
    h = eps * max(1.0, abs(x))
    plus = REFERENCE.build(terms, {**inputs, name: x + h})[0].data
    minus = REFERENCE.build(terms, {**inputs, name: x - h})[0].data
    return (plus - minus) / (2.0 * h) if math.isfinite(plus - minus) else math.nan


def close(got: Optional[float], expected: Optional[float], rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    if got is None or expected is None:
        return got is expected
    if math.isnan(expected):
        return math.isnan(got)
    return math.isclose(got, expected, rel_tol=rtol, abs_tol=atol)


def _partials(terms, values) -> List[List[float]]:
    """Each term's local derivative with respect to each of its argument positions."""
    out: List[List[float]] = []
    for (kind, payload, args), _ in zip(terms, values):
        if kind in ("var", "num"):
            out.append([])
            continue
        if kind == "sum":
            out.append([1.0] * len(args))
            continue
        leaves = [Value(float(values[i].data if isinstance(values[i], Value) else values[i])) for i in args]
        if kind == "neg":
            result = -leaves[0]
        elif kind == "call":
            result = getattr(leaves[0], payload)()
        else:
            result = BINARY[payload](leaves[0], leaves[1])
        result.backward()
        out.append([leaf.grad for leaf in leaves])
    return out


def _orders(terms) -> Dict[str, List[List[int]]]:
    """Sequences in which an engine might run the rules, by the mistake they stand for."""
    root = len(terms) - 1

    def children(t, flip):
        args = [a for a in terms[t][2] if terms[a][0] != "num"]
        return args[::-1] if flip else args

    def postorder(flip, visited=True):
        seen, order = set(), []
        stack = [(root, False)]
        while stack:
            t, done = stack.pop()
            if done:
                order.append(t)
                continue
            if visited and t in seen:
                continue
            seen.add(t)
            stack.append((t, True))
            stack += [(c, False) for c in reversed(children(t, flip))]
        return order

    def bfs(flip):
        seen, order, queue = {root}, [], deque([root])
        while queue:
            t = queue.popleft()
            order.append(t)
            for c in children(t, flip):
                if c not in seen:
                    seen.add(c)
                    queue.append(c)
        return order

    def preorder(flip):
        seen, order, stack = set(), [], [root]
        while stack:
            t = stack.pop()
            if t in seen:
                continue
            seen.add(t)
            order.append(t)
            stack += list(reversed(children(t, flip)))
        return order

    return {
        "correct": [list(reversed(range(len(terms)))), postorder(False)[::-1], postorder(True)[::-1]],
        "forward": [list(range(len(terms)))],
        "early": [bfs(False), bfs(True), preorder(False), preorder(True)],
        "repeat": [postorder(False, visited=False)[::-1], postorder(True, visited=False)[::-1]],
    }


def simulate(terms, inputs, order: List[int], assign: bool = False,
             start: Optional[List[float]] = None) -> Dict[str, float]:
    """Leaf gradients when the rules run in ``order``, adding (``+=``) or assigning (``=``)."""
    built, _ = REFERENCE.build_all(terms, inputs)
    partials = _partials(terms, built)
    grad = list(start) if start is not None else [0.0] * len(terms)
    grad[-1] = 1.0
    for t in order:
        g = grad[t]
        for position, arg in enumerate(terms[t][2]):
            if terms[arg][0] == "num":
                continue
            share = partials[t][position] * g
            grad[arg] = share if assign else grad[arg] + share
    return {terms[i][1]: grad[i] for i in range(len(terms)) if terms[i][0] == "var"}


def all_grads(terms, inputs) -> List[float]:
    """Every term's gradient after one correct backward pass (for replaying a second one)."""
    built, _ = REFERENCE.build_all(terms, inputs)
    partials = _partials(terms, built)
    grad = [0.0] * len(terms)
    grad[-1] = 1.0
    for t in reversed(range(len(terms))):
        for position, arg in enumerate(terms[t][2]):
            if terms[arg][0] != "num":
                grad[arg] += partials[t][position] * grad[t]
    return grad


def explain(terms, inputs, got: Dict[str, float]) -> Optional[str]:
    """Which classic mistake gives exactly ``got``: 'assign', 'forward', 'early', 'repeat' or None."""
    orders = _orders(terms)
    right = simulate(terms, inputs, orders["correct"][0])

    def matches(result) -> bool:
        differs = any(not close(result[n], right[n]) for n in right)
        return differs and all(close(got.get(n), result[n]) for n in right)

    if any(matches(simulate(terms, inputs, o, assign=True)) for o in orders["correct"]):
        return "assign"
    for mistake in ("forward", "early", "repeat"):
        if any(matches(simulate(terms, inputs, o)) for o in orders[mistake]):
            return mistake
    return None

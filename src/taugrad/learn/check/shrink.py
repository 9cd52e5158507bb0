"""Shrink a failing expression to a smallest one that still fails.

Greedy, in the style of property-based testing: try every smaller candidate,
smallest first (a subtree on its own, a subtree replaced by one of its
children or by a variable); keep the first that is still tame and still
fails; repeat until none does.  The result is minimal in the sense that no
single such step makes it smaller and keeps it failing.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterator, List, Tuple

from taugrad.learn.check.expressions import names_in, render, size, subtrees, tame_value

MAX_TRIES = 400  # engine calls one shrink may spend


def _children(node) -> List[Tuple[int, tuple]]:
    kind = node[0]
    if kind == "neg":
        return [(1, node[1])]
    if kind == "call":
        return [(2, node[2])]
    if kind == "op":
        return [(2, node[2]), (3, node[3])]
    return []


def _positions(tree, path=()) -> Iterator[Tuple[tuple, tuple]]:
    yield path, tree
    for index, child in _children(tree):
        yield from _positions(child, path + (index,))


def _replace(tree, path, new):
    if not path:
        return new
    parts = list(tree)
    parts[path[0]] = _replace(tree[path[0]], path[1:], new)
    return tuple(parts)


def candidates(tree, names) -> List[tuple]:
    """Every one-step-smaller tree, smallest first."""
    found = {render(t): t for t in subtrees(tree)[1:]}
    for path, node in _positions(tree):
        for _, child in _children(node):
            new = _replace(tree, path, child)
            found.setdefault(render(new), new)
        if _children(node):
            for name in names:
                new = _replace(tree, path, ("var", name))
                found.setdefault(render(new), new)
    mine = size(tree)
    smaller = [t for t in found.values() if size(t) < mine and names_in(t)]
    return sorted(smaller, key=lambda t: (size(t), len(render(t))))


def shrink(tree, inputs: Dict[str, float], fails: Callable[[tuple, Dict[str, float]], bool],
           allowed: Callable[[tuple], bool] = lambda tree: True) -> tuple:
    """A smallest tree (by the steps above) for which ``fails(tree, inputs)`` still holds.

    Only candidates that ``allowed`` accepts are tried: a step may put a number
    where a Value was (``2 ** b`` from ``(a * 2) ** b``), which a class without
    ``__rpow__`` cannot build, and that would be a failure of the shrinking.
    """
    tries = 0
    improved = True
    while improved and tries < MAX_TRIES:
        improved = False
        for candidate in candidates(tree, list(inputs)):
            used = {n: inputs[n] for n in names_in(candidate)}
            if not allowed(candidate) or tame_value(candidate, used) is None:
                continue
            tries += 1
            if fails(candidate, used):
                tree, improved = candidate, True
                break
            if tries >= MAX_TRIES:
                break
    return tree

"""The graph walk shared by ``Value`` and ``Tensor``.

Autograd is graph bookkeeping plus local derivatives plus reverse accumulation.
This module holds the part that does not depend on what a node carries:

* :func:`topological_order` walks the graph *iteratively* (an explicit stack,
  never Python recursion, so a chain of a million nodes is fine) and returns the
  interior nodes with every parent before its children.  Running the local rules
  over that list in reverse is reverse-mode differentiation.

The node protocol is tiny: a node has ``_prev``, the tuple of its parents
(empty for a leaf).  Each node type (``Value``, ``Tensor``) keeps its own fast
local rules and its own idea of what a gradient is; only the traversal is shared.
"""
from __future__ import annotations

from typing import Any, Iterable, List, Protocol, Sequence, TypeVar


class Node(Protocol):
    """What the traversal needs from a node: the tuple of its parents."""

    _prev: Sequence[Any]


N = TypeVar("N", bound=Node)


def topological_order(roots: Iterable[N]) -> List[N]:
    """Interior nodes reachable from ``roots``, each listed after all its parents.

    Leaves (nodes whose ``_prev`` is empty) are left out: they have no local rule
    to run, they only receive gradient.  The walk is a depth-first post-order with
    explicit stacks (the current path and an iterator over each node's parents), so its depth
    is bounded by memory, not by ``sys.getrecursionlimit()``.
    """
    order: List[N] = []
    visited = set()
    append, visit = order.append, visited.add
    for root in roots:
        if not root._prev or root in visited:
            continue
        visit(root)
        # two parallel stacks: the path from the root, and for each node on it
        # an iterator over the parents not yet looked at (two stacks rather than
        # one of pairs: no tuple to build and unpack per step)
        path, pending = [root], [iter(root._prev)]
        while pending:
            for parent in pending[-1]:
                if parent._prev and parent not in visited:
                    visit(parent)
                    path.append(parent)
                    pending.append(iter(parent._prev))
                    break
            else:  # every parent is placed: the node can follow them
                pending.pop()
                append(path.pop())
    return order

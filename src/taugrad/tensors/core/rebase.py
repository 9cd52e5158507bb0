"""Recording in-place ops in the graph, as PyTorch does ("rebasing" a tensor's node).

An in-place op changes a tensor ``y`` that other nodes may already use.  The
Tensor object ``y`` must now stand for its *new* value, so its graph node is
rebased:

1. a new "before" Tensor takes over ``y``'s old node (``_prev``, ``_rule``,
   ``_ctx``, ``_clock``): it stands for ``y``'s old value.  It shares ``y``'s
   storage, so a rule that saved the old value (``exp`` reads its output)
   sees the version bump and raises instead of reading overwritten numbers;
   only when the in-place op's *own* rule needs the old value (``y *= m`` with
   ``m`` requiring grad) is the old value copied first, as PyTorch does;
2. ``y`` becomes the output of the in-place op, whose parents are the before
   node (always first, ``_prev[0]``) and the other operands.

Nodes recorded earlier still list the object ``y`` among their parents, but
they used its old value.  Every node remembers the in-place clock at which it
was recorded (``_clock``) and a rebase gives ``y`` a later one, so at backward
time a parent whose clock is later than its child's was rebased after the
child used it: :func:`parents_when_recorded` looks up, in the tensor's list of
rebases (:data:`HISTORY`), the before node that was current then.

An in-place op on a view (``y[0].mul_(2)``, ``y[idx] -= 1``) also changes the
view's base: the base is rebased too, with a ``copy_slices`` node that puts
the view's new value back where the view's elements sit in the base (found
from the arrays' memory layout, so any view works).  A view whose base was
changed in place by another tensor after the view was taken would need its
graph regenerated (PyTorch does it); taugrad raises a clear error there.

This module is in the bottom layer: it imports only ``node``, ``rule`` and ``backend``.
"""
from __future__ import annotations

import weakref

import numpy as np

from taugrad.grad_mode import STATE as _grad_mode
from taugrad.tensors.core.backend import array_module, device_of, to_device
from taugrad.tensors.core.node import CLOCK, NodeExtras, Tensor, bump_version
from taugrad.tensors.core.rule import NEW, Rule

_new = object.__new__

#: the rules of in-place ops; their node's ``_prev[0]`` is the tensor's old value
REBASING: set = set()

#: rebased tensor -> ``[(clock of the rebase, before node), ...]`` in clock order.  Kept
#: beside the graph because backward frees a node's ``_prev`` once its rule ran,
#: while an older user of the tensor, run later, still needs the before node.
#: Keyed by id (a weak reference removes the entry): Tensor's == is elementwise.
HISTORY: dict = {}


def _history(x: Tensor) -> list:
    """``x``'s list of rebases (made on first use)."""
    key = id(x)
    entry = HISTORY.get(key)
    if entry is None or entry[0]() is not x:
        entry = HISTORY[key] = (weakref.ref(x, lambda _, key=key, table=HISTORY: table.pop(key, None)), [])
    return entry[1]


def _rebases(x: Tensor):
    entry = HISTORY.get(id(x))
    return entry[1] if entry is not None and entry[0]() is x else ()


def inplace_rule(op: str, reads=(), gives=NEW):
    """Decorator like :func:`~taugrad.tensors.core.rule.rule` for an in-place op's rule (registers it in REBASING)."""

    def make_rule(backward) -> Rule:
        r = Rule(op, backward, reads, True, gives)
        REBASING.add(r)
        return r

    return make_rule


# ---------------------------------------------------------------------------
# forward: deciding, checking, rebasing
# ---------------------------------------------------------------------------


def records(x: Tensor, *operands) -> bool:
    """Whether an in-place op on ``x`` with ``operands`` is recorded in the graph."""
    if not _grad_mode.enabled:
        return False
    if x._requires_grad:
        return True
    for o in operands:
        if isinstance(o, Tensor) and o._requires_grad:
            return True
    return False


def check_target(x: Tensor, op: str) -> None:
    """Refuse what PyTorch refuses: a leaf that requires grad (outside no_grad), read-only data."""
    if x._requires_grad and x._rule is None and _grad_mode.enabled:
        raise RuntimeError(
            f"{op}: a leaf Variable that requires grad is being used in an in-place operation. (A leaf tensor "
            f"that requires grad cannot be changed in place while gradients are recorded; do it inside "
            f"`with taugrad.no_grad():`, as an optimizer step does)"
        )
    data = x._data
    if not data.flags.writeable if type(data) is np.ndarray else _overlaps(data):
        raise ValueError(f"{op}: this tensor's data is read-only (an expand()ed view?); clone() it first")


def _overlaps(data) -> bool:
    """True when several elements of ``data`` share memory (a stride of 0): a device array has no read-only flag."""
    return data.size > 1 and any(s == 0 and n > 1 for s, n in zip(data.strides, data.shape))


def _view_error(op: str, why: str) -> RuntimeError:
    return RuntimeError(
        f"{op}: {why}; taugrad cannot record this in-place change (PyTorch can). "
        f"clone() the view first, or write into the base tensor directly (base[index] = value)"
    )


def _check_view(x: Tensor, op: str) -> None:
    """An in-place op recorded on a view must be able to rebase the view's base too."""
    root = x._base
    if root._requires_grad and root._rule is None:
        raise RuntimeError(
            f"{op}: this tensor is a view of a leaf that requires grad; a leaf cannot be changed "
            f"in place while gradients are recorded (do it inside `with taugrad.no_grad():`)"
        )
    if x._rule is None:
        if root._requires_grad:
            raise _view_error(op, "the tensor shares memory with a tensor in a graph but is outside it (detach()?)")
        return
    if x._clock < root._clock:
        raise _view_error(op, "the view was taken before its base was changed in place")
    if x._rule in REBASING:
        return
    if not x._prev or x._prev[0] is not root:
        raise _view_error(op, "the tensor is a view of a view")


def _address(a) -> int:
    """The memory address of ``a``'s first element (NumPy's array interface, or CUDA's)."""
    interface = getattr(a, "__array_interface__", None)
    if interface is None:
        interface = a.__cuda_array_interface__
    return interface["data"][0]


def _positions(view, root):
    """For each element of ``view``, its flat (C-order) index in ``root``, whose memory it shares.

    Worked out on the host from the two arrays' addresses and strides alone (no
    element is read), then moved to the arrays' device to index them.
    """
    item = root.itemsize
    if view.itemsize != item or any(s % item for s in view.strides + root.strides):
        raise RuntimeError("in-place op on a view: the view's memory layout does not fit its base's")
    lows = []
    for a in (view, root):
        lows.append(_address(a) + sum(min(0, (n - 1) * s) for n, s in zip(a.shape, a.strides)))
    low = min(lows)
    high = _address(root) + sum(max(0, (n - 1) * s) for n, s in zip(root.shape, root.strides))
    span = (high - low) // item + 1
    ids = np.full(span, -1, dtype=np.int64)

    def laid_out(a):
        start = (_address(a) - low) // item
        strides = tuple(s // item * ids.itemsize for s in a.strides)
        return np.lib.stride_tricks.as_strided(ids[start:], a.shape, strides)

    laid_out(root)[...] = np.arange(root.size, dtype=np.int64).reshape(root.shape)
    positions = laid_out(view).copy()
    return positions if type(root) is np.ndarray else to_device(positions, device_of(root))


def _before(x: Tensor, keep_old: bool) -> Tensor:
    """A Tensor that takes over ``x``'s node: ``x``'s value before the in-place op."""
    b = _new(Tensor)
    b._data = x._data.copy() if keep_old else x._data
    b._grad = None
    b._requires_grad = x._requires_grad
    b._prev = x._prev
    b._rule = x._rule
    b._ctx = x._ctx
    b._clock = x._clock
    b._version = 0
    # a shared "before" sees the storage's version bump (so rules that saved the old value raise)
    b._base = None if keep_old else (x if x._base is None else x._base)
    extras = x._extras
    b._extras = None
    if extras is not None and extras.hooks:
        # hooks registered before the change see the gradient of the old value (as PyTorch)
        moved = NodeExtras(extras.site)
        moved.hooks = extras.hooks
        b._extras = moved
        extras.hooks = {}
    return b


class Pending:
    """What :func:`begin` prepared and :func:`finish` completes: the before nodes."""

    __slots__ = ("before", "root", "root_before", "positions", "keep_old")

    def __init__(self, before, root, root_before, positions, keep_old):
        self.before = before
        self.root = root
        self.root_before = root_before
        self.positions = positions
        self.keep_old = keep_old


def begin(x: Tensor, op: str, keep_old: bool = False) -> Pending:
    """Before writing into ``x``: check the change can be recorded and save ``x``'s old node.

    ``keep_old``: the in-place op's own rule reads ``x``'s old value, so it is copied.
    """
    root = root_before = positions = None
    if x._base is not None:
        _check_view(x, op)
        root = x._base
        positions = _positions(x._data, root._data)
    before = _before(x, keep_old)
    if root is not None:
        root_before = _before(root, False)
        if x._rule is not None and x._rule not in REBASING:
            # the view's old node read the base's old value: point it at the base's before node
            before._prev = (root_before,) + x._prev[1:]
    return Pending(before, root, root_before, positions, keep_old)


def finish(x: Tensor, pending: Pending, operands: tuple, rule_fn: Rule, ctx=None) -> Tensor:
    """After writing into ``x``: bump its version and make it the in-place op's output."""
    bump_version(x)
    now = CLOCK[0]
    before = pending.before
    if pending.keep_old:
        before._version = now  # the copy is the old value, but rules that saved the old storage must still raise
    _history(x).append((now, before))
    x._prev = (before,) + operands
    x._rule = rule_fn
    x._ctx = ctx
    x._requires_grad = True
    x._clock = now
    mine = x if x._base is None else x._base
    for o in operands:
        if o is mine or o._base is mine:
            # the op read an operand that it then overwrote (y *= y.detach()): its rule
            # must see that storage as changed since, as PyTorch's saved version does
            x._clock = now - 1
    root = pending.root
    if root is not None:
        _history(root).append((now, pending.root_before))
        root._prev = (pending.root_before, x)
        root._rule = copy_slices_backward
        root._ctx = (pending.positions, root._data.shape)
        root._requires_grad = True
        root._clock = now
    # a later node gets a later clock than this op's own: backward tells a view used
    # after its base was rebased (stale) from one this op read (see parents_when_recorded)
    CLOCK[0] = now + 1
    return x


def _zero_at_positions(g, positions, shape: tuple):
    """``g`` (of the base's shape) with the view's elements zeroed."""
    if isinstance(g, Tensor):
        mask = array_module(g._data).ones(g._data.size, dtype=g._data.dtype)
        mask[positions.reshape(-1)] = 0
        return g * Tensor(mask.reshape(shape))
    out = array_module(g).array(g, copy=True, order="C")
    out.reshape(-1)[positions.reshape(-1)] = 0
    return out


@inplace_rule("copy_slices", gives=NEW)
def copy_slices_backward(g, out, ins, node):
    """base' = base with view's elements replaced by view':  grad_base = g zeroed there, grad_view' = g there."""
    positions, shape = node._ctx
    pb, pv = node._prev
    gb = _zero_at_positions(g, positions, shape) if pb._requires_grad else None
    gv = g.reshape(-1)[positions] if pv._requires_grad else None
    if gv is not None and not isinstance(gv, Tensor):
        gv = array_module(g).array(gv)  # a fresh array (a 0-d view's positions give a 0-d index result)
    return gb, gv


# ---------------------------------------------------------------------------
# backward: which node each parent was when it was used
# ---------------------------------------------------------------------------


def _stale_view_error(node: Tensor, parent: Tensor) -> RuntimeError:
    return RuntimeError(
        f"backward: a tensor of shape {tuple(parent.shape)} is a view whose base was changed in place after the "
        f"view was taken, and the view was used afterwards; taugrad does not update a view's graph when its "
        f"base changes (PyTorch does). Take the view again after the in-place op, or clone() it"
    )


def _node_at(p: Tensor, clock: int) -> Tensor:
    """The node that stood for tensor ``p`` at ``clock`` (``p`` itself unless it was rebased since)."""
    for when, before in _rebases(p):
        if when > clock:
            return before
    return p


def check_views(order) -> None:
    """Raise if a node of ``order`` used a view after the view's base was rebased by another tensor.

    Such a view's values changed after it was taken, but its node still says
    it is the old base's elements.  Called before the pass only while some
    live tensor has been rebased (:data:`HISTORY` is not empty).
    """
    for user in order:
        for view in user._prev:
            if view._base is None or view._rule is None or view._rule in REBASING:
                continue
            for when, _ in _rebases(view._base):
                if view._clock < when < user._clock:
                    raise _stale_view_error(user, view)


def parents_when_recorded(node: Tensor) -> tuple:
    """``node``'s parents as they were when ``node`` was recorded (see the module docstring)."""
    prev = node._prev
    clock = node._clock
    changed = False
    out = []
    for p in prev:
        q = _node_at(p, clock) if HISTORY else p
        changed |= q is not p
        out.append(q)
    return tuple(out) if changed else prev

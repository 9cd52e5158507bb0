"""Indexing ``x[key]`` and ``x[key] = value``, with PyTorch's rules.

Keys are ints, slices, ``None``, ``...``, boolean masks and integer indices
(Tensors, arrays, lists -- nested too -- and ``range`` objects), alone or in a
tuple.  A 0-d integer Tensor is an int, as in PyTorch.  NumPy does the work; two
places where NumPy's rules differ from PyTorch's are fixed here:

* **where the indexed dims go.**  With several advanced indices (arrays), NumPy
  counts ints as advanced indices too, and if the advanced indices are not
  side by side their result dims go first.  PyTorch applies ints first (they
  just remove a dim), so ``x[3, 2:, [1, 3]]`` on shape (5, 6, 4) keeps its
  indexed dim in place: (4, 2) in PyTorch, (2, 4) in NumPy.  The result of
  NumPy's indexing is transposed to PyTorch's order (``perm``), and the
  gradient transposed back before it is scattered;
* **a list holding sequences** (``x[[[0, 1], [1, 2]]]``) is a tuple of
  indices in PyTorch (its legacy rule, still the behaviour of 2.x), an index
  array in NumPy.

``x[key]`` picks elements, so its rule puts the gradient back where they came
from:  ``grad_x = zeros(x.shape);  grad_x[key] += g``.  With integer arrays an
element can be picked several times and must receive the sum of its
gradients, hence a scatter-*add* (``np.add.at``); keys without integer arrays
pick each element at most once and use a plain assignment.

``x[key] = value`` on a tensor in a graph (or with a value that requires grad)
is recorded as PyTorch records it (see :mod:`taugrad.tensors.core.rebase`):
``x' = x`` with ``value`` written at ``key``, so ``grad_x = g`` zeroed at
``key`` and ``grad_value = g[key]`` (summed over the dims ``value`` was
broadcast along).
"""
from __future__ import annotations

import operator

import numpy as np

from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.core.backend import device_of, is_array, to_device
from taugrad.tensors.core.device_checks import checked_index
from taugrad.tensors.core.node import Tensor, array_module, bump_version, make, make_view
from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.rebase import begin, check_target, finish, inplace_rule, records
from taugrad.tensors.core.rule import Rule, forward_of, register, rule

_BASIC = (int, slice, type(None), type(Ellipsis))
_SEQUENCE_PARTS = (list, tuple, range, slice, type(None), type(Ellipsis), Tensor, np.ndarray)


def _array_of(k) -> np.ndarray:
    """An index given as a list (nested, maybe of Tensors) or a range, as an array (on the host)."""
    if isinstance(k, range):
        return np.arange(k.start, k.stop, k.step, dtype=np.int64)
    if isinstance(k, list) and not k:
        return np.zeros(0, dtype=np.int64)
    try:
        return np.asarray(k)
    except ValueError:
        raise IndexError("index: a nested list used as an index is ragged (rows of different lengths)") from None


def _index_part(k, like):
    """One element of a key as NumPy wants it (arrays on the device of ``like``, the indexed array),
    and whether it can repeat elements."""
    if isinstance(k, Tensor):
        k = k._data
        if k.ndim == 0 and k.dtype.kind in "iu":  # a 0-d integer tensor is an int (PyTorch selects with it)
            return int(k), True, True
    elif isinstance(k, (list, range)):
        k = _array_of(k)
    if is_array(k):
        if type(k) is not type(like):  # an index from the host (a list, a CPU tensor) meets a device array
            k = to_device(k, device_of(like))
        kind = k.dtype.kind
        if kind == "b":
            return k, True, False
        if kind in "iu":
            return k, False, False
        raise IndexError(f"index: tensors used as indices must be integer or bool, got dtype {k.dtype}")
    if isinstance(k, (bool, np.bool_)):
        return k, True, False
    if isinstance(k, (_BASIC, np.integer)):
        return k, True, True
    raise IndexError(
        f"index: only ints, slices, None, ..., and integer or bool tensors are valid indices, got {type(k).__name__}"
    )


def _as_tuple(key):
    """The key as a tuple of parts, or None for a single part (PyTorch's rule for lists)."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and any(isinstance(k, _SEQUENCE_PARTS) or is_array(k) for k in key):
        return tuple(key)
    return None


def _torch_order(parts: tuple, ndim: int):
    """The transposition taking NumPy's result of ``x[parts]`` to PyTorch's, or None if they agree.

    NumPy: ints and arrays are the advanced indices; side by side, their
    result dims replace them in place, otherwise they go first.  PyTorch: ints
    are applied first, so only arrays count and ints never separate them.
    """
    arrays = [i for i, p in enumerate(parts) if is_array(p)]
    if not arrays or any(isinstance(p, (bool, np.bool_)) or (i in arrays and p.ndim == 0)
                         for i, p in enumerate(parts)):
        return None  # bool scalars add a dim in both libraries alike: leave NumPy's order
    ints = [i for i, p in enumerate(parts)
            if not (i in arrays or isinstance(p, slice) or p is None or p is Ellipsis)]
    consumed = 0
    for i, p in enumerate(parts):
        if i in arrays and p.dtype == np.bool_:
            consumed += p.ndim
        elif not (p is None or p is Ellipsis):
            consumed += 1
    free = max(ndim - consumed, 0)  # dims the key leaves to ``...`` or leaves out at the end

    def dims_before(stop: int) -> int:  # result dims made by the slices/None/... before part ``stop``
        n = 0
        for p in parts[:stop]:
            if isinstance(p, slice) or p is None:
                n += 1
            elif p is Ellipsis:
                n += free
        return n

    def side_by_side(members) -> bool:
        return all(i in members for i in range(members[0], members[-1] + 1))

    numpy_members = sorted(arrays + ints)
    at_numpy = dims_before(numpy_members[0]) if side_by_side(numpy_members) else 0
    torch_members = sorted(set(arrays) | {i for i in ints if arrays[0] < i < arrays[-1]})
    at_torch = dims_before(arrays[0]) if side_by_side(torch_members) else 0
    if at_numpy == at_torch:
        return None
    shapes = [p.shape if p.dtype != np.bool_ else (int(array_module(p).count_nonzero(p)),)
              for p in (parts[i] for i in arrays)]
    try:
        k = len(np.broadcast_shapes(*shapes))
    except ValueError:
        return None  # NumPy raises the indexing error itself
    total = sum(1 for p in parts if isinstance(p, slice) or p is None) + free + k
    block = list(range(at_numpy, at_numpy + k))
    others = [i for i in range(total) if i not in block]
    return tuple(others[:at_torch] + block + others[at_torch:])


def normalize_key(key, like):
    """``(key for NumPy, unique, basic, perm)`` for indexing the array ``like``: unique = no element
    picked twice; basic = only ints/slices/None/... (the result is a view); perm = the
    transposition of NumPy's result into PyTorch's order, or None.  Index arrays are on ``like``'s device."""
    if type(key) is int or type(key) is slice:
        return key, True, True, None
    parts = _as_tuple(key)
    if parts is None:
        k, u, b = _index_part(key, like)
        if not b and not isinstance(like, np.ndarray):
            k = _in_range_on_device((k,), like)[0]
        return k, u, b, None
    out, unique, basic = [], True, True
    for p in parts:
        p, u, b = _index_part(p, like)
        out.append(p)
        unique &= u
        basic &= b
    out = tuple(out)
    if not basic and not isinstance(like, np.ndarray):
        out = _in_range_on_device(out, like)
    return out, unique, basic, (None if basic else _torch_order(out, like.ndim))


def _in_range_on_device(parts: tuple, like) -> tuple:
    """The key with each integer index array's entries outside its dim replaced by 0, and that left pending.

    On the CPU NumPy raises for such an index.  A device's array module would
    have the host wait to ask, and CuPy wraps such an index around instead of
    raising; so the check runs on the device and its error is raised at the
    next read of a value (:mod:`taugrad.tensors.core.device_checks`).
    """
    consumed = sum(p.ndim if is_array(p) and p.dtype == np.bool_ else 0 if p is None or p is Ellipsis else 1
                   for p in parts)
    dim, out = 0, []
    for p in parts:
        if p is Ellipsis:
            dim += max(like.ndim - consumed, 0)
        elif is_array(p) and p.dtype == np.bool_:
            dim += p.ndim
        elif p is not None:
            if is_array(p) and dim < like.ndim:
                n = like.shape[dim]
                p = checked_index(p, n, ("index", dim, n), f"index: an index is out of range for dim {dim} of size {n}")
            dim += 1
        out.append(p)
    return tuple(out)


def _inverse(perm: tuple) -> tuple:
    return tuple(sorted(range(len(perm)), key=perm.__getitem__))


def _pick(g, key):
    """``g[key]`` with NumPy's rules, for an array or (differentiably) a Tensor."""
    return forward_of("index_numpy")(g, key) if isinstance(g, Tensor) else g[key]


@rule("index")
def getitem_backward(g, out, ins, node):
    """z = a[key]:  grad_a = zeros(a.shape) with g added at key."""
    key, unique, perm = node._ctx
    if perm is not None:
        g = A.permute(g, _inverse(perm))
    return (A.scatter_add(g, key, ins[0].shape, unique),)


@rule("embedding")
def embedding_backward(g, out, ins, node):
    """z = table[index] (rows of a table):  grad_table = zeros with g's rows added at index (repeats summed)."""
    return getitem_backward.backward(g, out, ins, node)


def _view_steps(k, shape: tuple) -> tuple:
    """PyTorch's nodes for the basic index ``k``, first applied first: a ``SelectBackward0`` per
    integer, a ``SliceBackward0`` per slice that leaves something out, an ``UnsqueezeBackward0``
    per None; ``AliasBackward0`` alone when the index keeps everything (``x[:, :]``, ``x[...]``).
    A lone slice is always a ``SliceBackward0`` in PyTorch, even ``x[:]``."""
    if isinstance(k, slice):
        return ("SliceBackward0",)
    parts = k if isinstance(k, tuple) else (k,)
    consumed = sum(p is not None and p is not Ellipsis for p in parts)
    dim, steps = 0, []
    for p in parts:
        if p is Ellipsis:
            dim += len(shape) - consumed
        elif p is None:
            steps.append("UnsqueezeBackward0")
        elif isinstance(p, slice):
            if p.indices(shape[dim]) != (0, shape[dim], 1):
                steps.append("SliceBackward0")
            dim += 1
        else:
            steps.append("SelectBackward0")
            dim += 1
    return tuple(steps) or ("AliasBackward0",)


def _view_picture(node):
    """The chain of PyTorch nodes for a basic index (see :func:`_view_steps`), the last one outermost."""
    if not node._prev:  # freed by backward: the rule keeps the outermost name
        return node._ctx.name, ()
    steps = _view_steps(node._ctx[0], node._prev[0]._data.shape)
    picture = (steps[0], (0,))
    for name in steps[1:]:
        picture = (name, (picture,))
    return picture


class _ViewRule(Rule):
    """getitem's rule for a basic index, named as PyTorch names the outermost node of that index."""

    def __init__(self, name: str) -> None:
        super().__init__("index", getitem_backward.backward, shows=_view_picture)
        self.name = name


_VIEW_RULES = {name: _ViewRule(name) for name in ("SelectBackward0", "SliceBackward0", "UnsqueezeBackward0",
                                                  "AliasBackward0")}


def _index(x: Tensor, k, unique: bool, basic: bool, perm, rule_fn=getitem_backward) -> Tensor:
    try:
        data = x._data[k]
    except (IndexError, ValueError, TypeError) as error:
        raise IndexError(f"index: {error} (tensor of shape {tuple(x.shape)})") from None
    if basic:
        if type(data) is not type(x._data):  # NumPy's scalar for a single element: x[k, ...] is the 0-d view
            data = x._data[(k if isinstance(k, tuple) else (k,)) + (Ellipsis,)]
        rule_fn = _VIEW_RULES[_view_steps(k, x._data.shape)[-1]]
        return make_view(data, x, (x,), rule_fn, (k, unique, None))
    if perm is not None:
        data = data.transpose(perm)
    return make(data, (x,), rule_fn, (k, unique, perm))


@register("getitem", methods=("__getitem__",))
def getitem(x: Tensor, key) -> Tensor:
    """``x[key]``: PyTorch's indexing, recorded for backward."""
    k, unique, basic, perm = normalize_key(key, x._data)
    return _index(x, k, unique, basic, perm)


def rows_at(x: Tensor, index) -> Tensor:
    """``x[index]`` for an integer array ``index`` on ``x``'s device that its caller has already checked.

    ``embedding`` checks its indices itself, with its own message; through
    :func:`getitem` a device index would be checked a second time (five more
    array operations, each a kernel launch on a GPU).  The result and its
    gradient are getitem's: the rows picked, and ``g`` added back at
    ``index`` (repeats summed); the node is named ``embedding``, as PyTorch's.
    """
    return _index(x, index, False, False, None, embedding_backward)


@register("index_numpy")
def index_numpy(x: Tensor, key) -> Tensor:
    """``x[key]`` for a key already in NumPy's form, with NumPy's placement (the rules' inverse of index_scatter)."""
    k, unique, basic, _ = normalize_key(key, x._data)
    return _index(x, k, unique, basic, None)


@rule("index_scatter")
def index_scatter_backward(g, out, ins, node):
    """z = zeros with a added at key (the adjoint of indexing):  grad_a = g[key]."""
    key, _ = node._ctx
    return (_pick(g, key),)


@register("index_scatter")
def index_scatter(a: Tensor, key, shape: tuple, unique: bool) -> Tensor:
    """Zeros of ``shape`` with ``a`` added at ``key``; differentiable (used by create_graph)."""
    return make(A.scatter_add(a._data, key, shape, unique), (a,), index_scatter_backward, (key, unique))


@inplace_rule("setitem")
def setitem_backward(g, out, ins, node):
    """x' = x with value written at key:  grad_x = g zeroed at key,  grad_value = g[key] (summed to value's shape)."""
    key, perm = node._ctx
    px = node._prev[0]
    gx = A.zeroed_at(g, key) if px._requires_grad else None
    if len(node._prev) == 1:
        return (gx,)
    pv = node._prev[1]
    if not pv._requires_grad:
        return gx, None
    gv = _pick(g, key)
    if perm is not None:
        gv = A.permute(gv, perm)
    gv = A.sum_to(gv, pv.shape)
    if not isinstance(gv, Tensor):
        gv = gv.copy()  # a new array: g[key] may be a view of g
    return gx, gv


@register("setitem", methods=("__setitem__",))
def setitem(x: Tensor, key, value) -> None:
    """``x[key] = value`` in place (recorded in the graph if x is in one or value requires grad)."""
    check_target(x, "setitem")
    xd = x._data
    k, _, _, perm = normalize_key(key, xd)
    recorded = records(x, value)
    data = value._data if isinstance(value, Tensor) else value
    if type(data) is not type(xd) and not isinstance(data, (bool, int, float, complex)):
        data = A.array_like(data, xd, np.asarray)  # a host array or list: to the tensor's device
    if perm is not None:  # value broadcasts against PyTorch's result shape: bring it to NumPy's order
        target = xd[k].transpose(perm).shape
        try:
            data = array_module(xd).broadcast_to(data, target).transpose(_inverse(perm))
        except ValueError as error:
            raise ValueError(f"setitem: {error} (tensor of shape {tuple(x.shape)})") from None
    pending = begin(x, "setitem") if recorded else None
    try:
        x._data[k] = data
    except (IndexError, ValueError, TypeError) as error:
        raise type(error)(f"setitem: {error} (tensor of shape {tuple(x.shape)})") from None
    if not recorded:
        bump_version(x)
        return
    operands = (value,) if isinstance(value, Tensor) else ()
    finish(x, pending, operands, setitem_backward, (k, perm))


# ---------------------------------------------------------------------------
# select, take: indexing with a key built from their arguments (getitem's gradient)
# ---------------------------------------------------------------------------


@register("select", methods=("select",))
def select(x: Tensor, dim: int, index: int) -> Tensor:
    """``x[:, ..., index]`` with ``index`` in position ``dim``: the slice at ``index``, one dim fewer (a view)."""
    ndim = x._data.ndim
    if ndim == 0:
        raise IndexError("select: cannot select from a 0-d tensor")
    d = normalize_dim(dim, ndim, "select")
    i = operator.index(index)
    n = x.shape[d]
    if not -n <= i < n:
        raise IndexError(f"select: index {index} out of range for a tensor of shape {tuple(x.shape)} at dim {d}")
    return getitem(x, (slice(None),) * d + (i,))


@register("take", methods=("take",))
def take(x: Tensor, index) -> Tensor:
    """The elements of ``x`` read as 1-d (row-major) at the integer ``index``, in index's shape."""
    idx = A.array_like(index, x._data, np.asarray)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"take: index must be an integer tensor, got dtype {idx.dtype}")
    n = x._data.size
    idx = checked_index(idx, n, ("take", n), f"take: index out of range for a tensor of {n} elements")
    return _index(forward_of("reshape")(x, (-1,)), idx, False, False, None)  # checked: not again by getitem

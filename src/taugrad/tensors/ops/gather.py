"""Index-driven ops along one dim: gather, scatter, index_select, index_add, masked ops.

Each one is an indexing ``x[key]`` or an indexed write ``out[key] = src`` (or
``+=``) with a key built from an index tensor, so the gradients are the same
two adjoint moves as for ``x[key]``:

* reading at ``key`` -> the gradient is scattered (added) back at ``key``;
* writing at ``key`` -> the written values get ``g[key]``, the overwritten
  ones get nothing (``g`` zeroed at ``key``); an added value gets ``g[key]``
  and the base ``g`` itself.

For ``gather(x, dim, index)`` the key is, for every position ``p`` of
``index``, ``p`` with its ``dim`` coordinate replaced by ``index[p]``
(PyTorch's ``out[i][j][k] = x[index[i][j][k]][j][k]`` for dim 0).
"""
from __future__ import annotations

import numpy as np

from taugrad.tensors.core import backend
from taugrad.tensors.core.args import integer_scalar, normalize_dim
from taugrad.tensors.core.device_checks import checked_index
from taugrad.tensors.core.node import Tensor, array_module, bump_version, make, operand
from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.rebase import begin, check_target, finish, inplace_rule, records
from taugrad.tensors.core.rule import G_OR_NEW, forward_of, register, rule


def _pick(g, key):
    """``g[key]`` with NumPy's rules, for an array or (differentiably) a Tensor."""
    return forward_of("index_numpy")(g, key) if isinstance(g, Tensor) else g[key]


def _index_array(index, op: str, like):
    """``index`` (a Tensor, an array, a list) as an array on the device of ``like``, the indexed array."""
    data = A.array_like(index, like, np.asarray)
    if data.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must be an integer tensor, got dtype {data.dtype}")
    return data


def _one_d(index, ndim: int):
    """``index`` with a 0-d index into a 1-D tensor read as one position, shape (1,).

    PyTorch counts a 0-d tensor as 1-D of size 1 in gather and scatter, so
    ``zeros(10).scatter_(0, tensor(label), value=1)`` (a one-hot target) works.
    """
    return index.reshape(1) if index.ndim == 0 and ndim == 1 else index


def _along_key(index, dim: int, shape: tuple, op: str) -> tuple:
    """The NumPy key of ``gather``/``scatter``: index's positions with ``dim`` replaced by index's values."""
    if index.ndim != len(shape):
        raise ValueError(f"{op}: index has {index.ndim} dims but the tensor has {len(shape)} (they must match)")
    for d, (n, m) in enumerate(zip(index.shape, shape)):
        if d != dim and n > m:
            raise ValueError(f"{op}: index has size {n} in dim {d} but the tensor only {m} (shape {shape})")
    index = checked_index(index, shape[dim], (op, dim, shape[dim]),
                          f"{op}: index out of range for dim {dim} of size {shape[dim]}")
    # every other dim indexes itself: an arange shaped to broadcast along its own dim (NumPy's ix_)
    xp = array_module(index)
    ndim = index.ndim
    return tuple(index if d == dim else xp.arange(n).reshape(tuple(n if i == d else 1 for i in range(ndim)))
                 for d, n in enumerate(index.shape))


def _padded(g_at_key, shape: tuple):
    """A gradient for a ``src`` of ``shape`` of which only the leading ``g_at_key.shape`` block was used."""
    if tuple(g_at_key.shape) == tuple(shape):
        return g_at_key
    block = tuple(slice(0, n) for n in g_at_key.shape)
    return A.scatter_add(g_at_key, block, shape, True)


# ---------------------------------------------------------------------------
# reading at a key: gather, take_along_dim, index_select, masked_select
# ---------------------------------------------------------------------------


@rule("gather")
def gather_backward(g, out, ins, node):
    """z = x[key]:  grad_x = zeros(x.shape) with g added at key (repeats accumulate)."""
    key, shape = node._ctx
    return (A.scatter_add(g, key, shape, False),)


def _read(x: Tensor, key, op: str) -> Tensor:
    return make(x._data[key], (x,), gather_backward, (key, x._data.shape))


@register("gather", methods=("gather",))
def gather(x: Tensor, dim: int, index) -> Tensor:
    """``out[p] = x[p with its dim coordinate replaced by index[p]]``; out has index's shape."""
    dim = normalize_dim(dim, x._data.ndim, "gather")
    idx = _index_array(index, "gather", x._data)
    out = _read(x, _along_key(_one_d(idx, x._data.ndim), dim, x._data.shape, "gather"), "gather")
    return out if idx.ndim == out._data.ndim else forward_of("reshape")(out, idx.shape)


@register("take_along_dim", methods=("take_along_dim",))
def take_along_dim(x: Tensor, indices, dim=None) -> Tensor:
    """NumPy's ``take_along_axis``: like gather, with ``indices`` and ``x`` broadcast in the other dims.

    ``dim=None``: both are flattened first.
    """
    idx = _index_array(indices, "take_along_dim", x._data)
    if dim is None:
        flat = forward_of("reshape")(x, (-1,))
        return _read(flat, (idx.reshape(-1),), "take_along_dim")
    dim = normalize_dim(dim, x._data.ndim, "take_along_dim")
    if idx.ndim != x._data.ndim:
        raise ValueError(f"take_along_dim: indices have {idx.ndim} dims but the tensor has {x._data.ndim}")
    shape = list(np.broadcast_shapes(tuple(n for d, n in enumerate(x.shape) if d != dim),
                                     tuple(n for d, n in enumerate(idx.shape) if d != dim)))
    x_shape, i_shape = list(shape), list(shape)
    x_shape.insert(dim, x.shape[dim])
    i_shape.insert(dim, idx.shape[dim])
    xb = x if tuple(x_shape) == x.shape else forward_of("expand")(x, tuple(x_shape))
    return _read(xb, _along_key(array_module(idx).broadcast_to(idx, i_shape), dim, tuple(x_shape), "take_along_dim"),
                 "take_along_dim")


@register("index_select", methods=("index_select",))
def index_select(x: Tensor, dim: int, index) -> Tensor:
    """The slices of ``x`` along ``dim`` at the positions of the 1-D ``index``, in its order."""
    dim = normalize_dim(dim, x._data.ndim, "index_select")
    idx = _index_array(index, "index_select", x._data)
    if idx.ndim > 1:
        raise ValueError(f"index_select: index must be 0-d or 1-d, got shape {tuple(idx.shape)}")
    n = x._data.shape[dim] if x._data.ndim else 1
    idx = checked_index(idx, n, ("index_select", dim, n), f"index_select: index out of range for dim {dim} of size {n}")
    return _read(x, (slice(None),) * dim + (idx.reshape(-1),), "index_select")


@register("masked_select", methods=("masked_select",))
def masked_select(x: Tensor, mask) -> Tensor:
    """The elements of ``x`` where ``mask`` is True (both broadcast), as a 1-D tensor."""
    m = A.array_like(mask, x._data, np.asarray)
    if m.dtype != np.bool_:
        raise TypeError(f"masked_select: the mask must be a bool tensor, got dtype {m.dtype}")
    try:
        shape = np.broadcast_shapes(x.shape, m.shape)
    except ValueError:
        raise ValueError(f"masked_select: mask of shape {tuple(m.shape)} does not broadcast with shape {tuple(x.shape)}") from None
    xb = x if shape == x.shape else forward_of("expand")(x, shape)
    return _read(xb, (array_module(m).broadcast_to(m, shape),), "masked_select")


# ---------------------------------------------------------------------------
# writing at a key: scatter, scatter_add, index_add, masked_fill
# ---------------------------------------------------------------------------


@rule("scatter")
def scatter_backward(g, out, ins, node):
    """z = x with src written at key:  grad_x = g zeroed at key,  grad_src = g[key] (in src's leading block)."""
    key, add = node._ctx
    px = node._prev[0]
    gx = (g if add else A.zeroed_at(g, key)) if px._requires_grad else None
    if len(node._prev) == 1:
        return (gx,)
    ps = node._prev[1]
    gs = None
    if ps._requires_grad:
        gs = _pick(g, key)
        gs = _padded(gs if isinstance(gs, Tensor) else gs.copy(), ps.shape)
    return gx, gs


scatter_inplace_backward = inplace_rule("scatter_")(scatter_backward.backward)
# scatter_add_ and index_add_: x's gradient is g itself (an added value leaves x's share alone)
scatter_add_inplace_backward = inplace_rule("scatter_add_", gives=G_OR_NEW)(scatter_backward.backward)


def _same_dtype(op: str, x: Tensor, src: Tensor, name: str) -> None:
    """As PyTorch: a tensor written or added into ``x`` has x's dtype (no silent cast, up or down)."""
    if src._data.dtype != x._data.dtype:
        raise TypeError(f"{op}: self ({x.dtype}) and {name} ({src.dtype}) must have the same dtype")


def _source(src, like: Tensor, shape: tuple, op: str):
    """``src`` (a Tensor, or a number filled in) and the block of it that is written, as an array."""
    if isinstance(src, Tensor):
        _same_dtype(op, like, src, "src")
        if src._data.ndim != len(shape) or any(n > m for n, m in zip(shape, src.shape)):
            raise ValueError(f"{op}: src of shape {tuple(src.shape)} is smaller than index of shape {shape}")
        return src, src._data[tuple(slice(0, n) for n in shape)]
    return None, array_module(like._data).asarray(src, dtype=like._data.dtype)


def _write(x: Tensor, dim, index, src, op: str, add: bool, reduce=None):
    """``x`` with ``src`` written (or added) at the key of (dim, index); a new tensor."""
    if reduce is not None:
        raise NotImplementedError(f"{op}: reduce={reduce!r} is not supported; use scatter_add or scatter_reduce")
    dim = normalize_dim(dim, x._data.ndim, op)
    idx = _index_array(index, op, x._data)
    key = _along_key(_one_d(idx, x._data.ndim), dim, x._data.shape, op)
    s, block = _source(src, x, idx.shape, op)
    return dim, key, s, block


def _scattered(x: Tensor, key, block, add: bool):
    data = x._data.copy()
    if add:
        backend.scatter_add(data, key, block)
    else:
        data[key] = block
    return data


@register("scatter", methods=("scatter",))
def scatter(x: Tensor, dim: int, index, src=None, value=None, reduce=None) -> Tensor:
    """A copy of ``x`` with ``src`` (or the number ``value``) written at the key of (dim, index).

    ``out[p with dim coordinate index[p]] = src[p]`` for every position p of index.
    """
    src = value if src is None else src
    _, key, s, block = _write(x, dim, index, src, "scatter", False, reduce)
    parents = (x,) if s is None else (x, s)
    return make(_scattered(x, key, block, False), parents, scatter_backward, (key, False))


@register("scatter_add", methods=("scatter_add",))
def scatter_add(x: Tensor, dim: int, index, src) -> Tensor:
    """A copy of ``x`` with ``src`` added at the key of (dim, index); repeated positions add up."""
    _, key, s, block = _write(x, dim, index, src, "scatter_add", True)
    parents = (x,) if s is None else (x, s)
    return make(_scattered(x, key, block, True), parents, scatter_backward, (key, True))


@register("scatter_", methods=("scatter_",))
def scatter_(x: Tensor, dim: int, index, src=None, value=None, reduce=None) -> Tensor:
    """``scatter`` in place; returns x."""
    src = value if src is None else src
    check_target(x, "scatter_")
    _, key, s, block = _write(x, dim, index, src, "scatter_", False, reduce)
    recorded = records(x, s)
    pending = begin(x, "scatter_") if recorded else None
    x._data[key] = block
    if not recorded:
        bump_version(x)
        return x
    return finish(x, pending, () if s is None else (s,), scatter_inplace_backward, (key, False))


def _index_add_source(x: Tensor, dim: int, index, source, alpha, op: str):
    """The key of x's slices along ``dim`` at ``index``, and ``alpha * source`` (checked: x's dtype, their shape)."""
    dim = normalize_dim(dim, x._data.ndim, op)
    idx = _index_array(index, op, x._data).reshape(-1)
    n = x._data.shape[dim] if x._data.ndim else 1
    idx = checked_index(idx, n, (op, dim, n), f"{op}: index out of range for dim {dim} of size {n}")
    source = operand(source, x)
    _same_dtype(op, x, source, "source")
    expected = x.shape[:dim] + (idx.size,) + x.shape[dim + 1:]
    if source.shape != expected:
        raise ValueError(f"{op}: source has shape {tuple(source.shape)}, expected {expected}")
    alpha = integer_scalar(alpha, x._data, source._data)
    return (slice(None),) * dim + (idx,), (source if alpha == 1 else source * alpha)


@register("index_add", methods=("index_add",))
def index_add(x: Tensor, dim: int, index, source, alpha=1) -> Tensor:
    """A copy of ``x`` with ``alpha * source`` added to the slices along ``dim`` at ``index``."""
    key, src = _index_add_source(x, dim, index, source, alpha, "index_add")
    data = x._data.copy()
    backend.scatter_add(data, key, src._data)
    return make(data, (x, src), scatter_backward, (key, True))


@rule("masked_fill")
def masked_fill_backward(g, out, ins, node):
    """z = where(mask, value, x):  grad_x = g off the mask,  grad_value = sum of g on it."""
    return A.masked_fill_grads(g, node)


@register("masked_fill", methods=("masked_fill",))
def masked_fill(x: Tensor, mask, value) -> Tensor:
    """A copy of ``x`` with ``value`` (a number or 0-d tensor) where ``mask`` (broadcast to x) is True."""
    xd = x._data
    xp = array_module(xd)
    m = A.array_like(mask, xd, np.asarray)
    if m.dtype != np.bool_:
        raise TypeError(f"masked_fill: the mask must be a bool tensor, got dtype {m.dtype}")
    try:
        m = xp.broadcast_to(m, x.shape)
    except ValueError:
        raise ValueError(f"masked_fill: mask of shape {tuple(m.shape)} does not broadcast to shape {tuple(x.shape)}") from None
    if isinstance(value, Tensor) and value._data.ndim:
        raise ValueError(f"masked_fill: the value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
    v = value._data if isinstance(value, Tensor) else value
    if type(v) is float and xd.dtype.kind == "f":
        # the number as a kernel argument: no array made for it (on a GPU, a copy from the host
        # each call).  NumPy 2 and CuPy cast such a "weak" scalar to x's dtype, as asarray would;
        # the check guards a backend that promotes instead
        data = xp.where(m, v, xd)
        if data.dtype != xd.dtype:
            data = data.astype(xd.dtype)
    else:
        data = xp.where(m, xp.asarray(v, dtype=xd.dtype), xd)
    parents = (x, value) if isinstance(value, Tensor) else (x,)
    return make(data, parents, masked_fill_backward, m)


# ---------------------------------------------------------------------------
# index_fill (a masked_fill whose mask is "these slices along dim") and the
# in-place forms of scatter_add, index_add, index_fill
# ---------------------------------------------------------------------------


def _slices_mask(x: Tensor, dim: int, index, op: str):
    """A bool array that broadcasts to x's shape: True on the slices along ``dim`` at ``index``."""
    xd = x._data
    d = normalize_dim(dim, xd.ndim, op) if xd.ndim else normalize_dim(dim, 1, op)
    idx = _index_array(index, op, xd)
    if idx.ndim > 1:
        raise ValueError(f"{op}: index must be 0-d or 1-d, got shape {tuple(idx.shape)}")
    n = xd.shape[d] if xd.ndim else 1
    idx = checked_index(idx, n, (op, d, n), f"{op}: index out of range for dim {d} of size {n}")
    mask = array_module(xd).zeros(n, dtype=bool)
    mask[idx.reshape(-1)] = True
    return mask.reshape((n,) + (1,) * (xd.ndim - d - 1)) if xd.ndim else mask.reshape(())


@register("index_fill", methods=("index_fill",))
def index_fill(x: Tensor, dim: int, index, value) -> Tensor:
    """A copy of ``x`` with ``value`` (a number or 0-d tensor) in the slices along ``dim`` at ``index``."""
    return masked_fill(x, _slices_mask(x, dim, index, "index_fill"), value)


@register("index_fill_", methods=("index_fill_",))
def index_fill_(x: Tensor, dim: int, index, value) -> Tensor:
    """``index_fill`` in place (through ``masked_fill_``); returns x."""
    return forward_of("masked_fill_")(x, _slices_mask(x, dim, index, "index_fill_"), value)


@register("scatter_add_", methods=("scatter_add_",))
def scatter_add_(x: Tensor, dim: int, index, src) -> Tensor:
    """``scatter_add`` in place: ``src`` added into x at the key of (dim, index); returns x."""
    check_target(x, "scatter_add_")
    _, key, s, block = _write(x, dim, index, src, "scatter_add_", True)
    recorded = records(x, s)
    pending = begin(x, "scatter_add_") if recorded else None
    backend.scatter_add(x._data, key, block)
    if not recorded:
        bump_version(x)
        return x
    return finish(x, pending, () if s is None else (s,), scatter_add_inplace_backward, (key, True))


@register("index_add_", methods=("index_add_",))
def index_add_(x: Tensor, dim: int, index, source, alpha=1) -> Tensor:
    """``index_add`` in place: ``alpha * source`` added to x's slices along ``dim`` at ``index``; returns x."""
    check_target(x, "index_add_")
    key, src = _index_add_source(x, dim, index, source, alpha, "index_add_")
    recorded = records(x, src)
    pending = begin(x, "index_add_") if recorded else None
    backend.scatter_add(x._data, key, src._data)
    if not recorded:
        bump_version(x)
        return x
    return finish(x, pending, (src,), scatter_add_inplace_backward, (key, True))

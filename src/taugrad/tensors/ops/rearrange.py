"""Rearranging elements: ``flip``, ``roll``, ``repeat``/``tile``, ``repeat_interleave``,
``unbind``, ``narrow``, ``movedim``, ``t``, ``view_as``/``reshape_as``, ``contiguous``.

The rules move the gradient back the inverse way: ``flip`` flips it again,
``roll`` rolls it back, ``repeat`` sums the copies.  Ops that only pick or
reorder elements are written with indexing, ``permute`` or ``reshape``
(found with :func:`~taugrad.tensors.core.rule.forward_of`), whose rules already
exist.
"""
from __future__ import annotations

import operator

import numpy as np

from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.core.backend import to_host
from taugrad.tensors.core.memory_format import contiguous_format, format_order, is_laid_out
from taugrad.tensors.core.node import Tensor, array_module, make, make_view
from taugrad.tensors.core.rule import forward_of, register, rule


def _ints(values, op: str, what: str) -> tuple:
    if len(values) == 1 and isinstance(values[0], (tuple, list)):
        values = values[0]
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{op}: {what} must be ints, got {values!r}") from None


def _dims(dims, ndim: int, op: str) -> tuple:
    dims = dims if isinstance(dims, (tuple, list)) else (dims,)
    out = tuple(normalize_dim(d, ndim, op) for d in dims)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: dims {tuple(dims)} repeat a dimension")
    return out


# ---------------------------------------------------------------------------
# flip, roll
# ---------------------------------------------------------------------------


@rule("flip")
def flip_backward(g, out, ins, node):
    """z = a reversed along dims:  grad_a = g reversed along the same dims."""
    return (g.flip(node._ctx) if isinstance(g, Tensor) else array_module(g).flip(g, axis=node._ctx),)


@register("flip", methods=("flip",))
def flip(x: Tensor, *dims) -> Tensor:
    """``x`` with the order of elements reversed along ``dims`` (a copy, as PyTorch)."""
    dims = _dims(_ints(dims, "flip", "dims"), x._data.ndim, "flip") if x._data.ndim else ()
    data = array_module(x._data).flip(x._data, axis=dims).copy() if dims else x._data.copy()
    return make(data, (x,), flip_backward, dims)


@rule("roll")
def roll_backward(g, out, ins, node):
    """z = a shifted cyclically by s along d:  grad_a = g shifted by -s."""
    shifts, dims = node._ctx
    back = tuple(-s for s in shifts)
    if isinstance(g, Tensor):
        return (g.roll(back, dims),)
    if dims is None:
        return (array_module(g).roll(g.reshape(-1), back[0]).reshape(g.shape),)
    return (array_module(g).roll(g, back, axis=dims),)


@register("roll", methods=("roll",))
def roll(x: Tensor, shifts, dims=None) -> Tensor:
    """Shift elements cyclically: ``z[(i + s) % n] = x[i]`` along each dim in ``dims``.

    Without ``dims``, the flattened tensor is rolled and the shape restored.
    """
    shifts = _ints((shifts,), "roll", "shifts")
    xp = array_module(x._data)
    if dims is None:
        if len(shifts) != 1:
            raise ValueError(f"roll: without dims, shifts must be one int, got {shifts}")
        data = xp.roll(x._data.reshape(-1), shifts[0]).reshape(x.shape)
        return make(data, (x,), roll_backward, (shifts, None))
    dims = _dims(dims, x._data.ndim, "roll") if x._data.ndim else _dims(dims, 1, "roll")
    if len(shifts) != len(dims):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
    if x._data.ndim == 0:
        return make(x._data.copy(), (x,), roll_backward, (shifts, None))
    return make(xp.roll(x._data, shifts, axis=dims), (x,), roll_backward, (shifts, dims))


# ---------------------------------------------------------------------------
# repeat, tile, repeat_interleave
# ---------------------------------------------------------------------------


@rule("repeat")
def repeat_backward(g, out, ins, node):
    """z = a tiled r_k times along each dim k:  grad_a = the sum of g's r_0 x r_1 x ... blocks.

    Writing z's dim k (size r_k n_k) as two dims (r_k, n_k), the gradient sums over the r's.
    """
    repeats, in_shape = node._ctx
    split = []
    for r, n in zip(repeats, in_shape):
        split += [r, n]
    summed = g.reshape(tuple(split)).sum(axis=tuple(range(0, len(split), 2)))
    return (summed.reshape(node._prev[0].shape),)


@register("repeat", methods=("repeat",))
def repeat(x: Tensor, *sizes) -> Tensor:
    """``x`` copied ``sizes[k]`` times along each dim k (``torch.Tensor.repeat``, NumPy's ``tile``).

    ``sizes`` may name more dims than ``x`` has: ``x`` is then treated as
    having leading dims of size 1.
    """
    repeats = _ints(sizes, "repeat", "sizes")
    if len(repeats) < x._data.ndim:
        raise ValueError(f"repeat: {len(repeats)} sizes for a tensor of {x._data.ndim} dims (give at least one per dim)")
    if any(r < 0 for r in repeats):
        raise ValueError(f"repeat: sizes must be non-negative, got {repeats}")
    in_shape = (1,) * (len(repeats) - x._data.ndim) + x.shape
    data = array_module(x._data).tile(x._data.reshape(in_shape), repeats)
    return make(data, (x,), repeat_backward, (repeats, in_shape))


@register("tile", methods=("tile",))
def tile(x: Tensor, *dims) -> Tensor:
    """Like :func:`repeat`, but fewer ``dims`` than dimensions repeat the last ones."""
    reps = _ints(dims, "tile", "dims")
    return repeat(x, (1,) * (x._data.ndim - len(reps)) + reps)


@register("repeat_interleave", methods=("repeat_interleave",))
def repeat_interleave(x: Tensor, repeats, dim=None, *, output_size=None) -> Tensor:
    """Each element repeated ``repeats`` times in place along ``dim`` (of the flattened tensor
    without ``dim``): ``[a, b]`` -> ``[a, a, b, b]``.  ``repeats`` is an int or one int per element.

    Written as indexing ``x[..., source]`` with ``source = [0, 0, 1, 1, ...]``,
    so the gradient sums each element's copies.
    """
    if dim is None:
        x = x.reshape(-1)
        d = 0
    else:
        d = normalize_dim(dim, x._data.ndim, "repeat_interleave")
    # the counts decide the result's shape: read on the host (a device tensor of counts is copied back)
    counts = to_host(repeats._data) if isinstance(repeats, Tensor) else np.asarray(repeats)
    if counts.dtype.kind not in "iu" or counts.ndim > 1:
        raise TypeError(f"repeat_interleave: repeats must be an int or a 1-D int tensor, got {repeats!r}")
    n = x.shape[d]
    if counts.ndim == 1 and counts.size not in (1, n):
        raise ValueError(f"repeat_interleave: {counts.size} repeats for a dimension of size {n}")
    if (counts < 0).any():
        raise ValueError("repeat_interleave: repeats must be non-negative")
    xp = array_module(x._data)
    source = xp.repeat(xp.arange(n), int(counts.reshape(-1)[0]) if counts.size == 1 else counts.tolist())
    return x[(slice(None),) * d + (source,)]


# ---------------------------------------------------------------------------
# picking and reordering (views)
# ---------------------------------------------------------------------------


@register("unbind", methods=("unbind",))
def unbind(x: Tensor, dim: int = 0) -> tuple:
    """The slices of ``x`` along ``dim``, as a tuple of views with that dim removed."""
    d = normalize_dim(dim, x._data.ndim, "unbind")
    return tuple(x[(slice(None),) * d + (i,)] for i in range(x.shape[d]))


@register("narrow", methods=("narrow",))
def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """The view ``x[..., start:start + length, ...]`` along ``dim`` (``start`` may be negative)."""
    d = normalize_dim(dim, x._data.ndim, "narrow")
    n = x.shape[d]
    start = operator.index(start)
    length = operator.index(length)
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise IndexError(f"narrow: start {start} and length {length} out of range for a dimension of size {n}")
    return x[(slice(None),) * d + (slice(start, start + length),)]


@register("movedim", methods=("movedim", "moveaxis"))
def movedim(x: Tensor, source, destination) -> Tensor:
    """``x`` with dims ``source`` moved to positions ``destination``, the others keeping their order."""
    ndim = x._data.ndim
    src = _dims(source, ndim, "movedim")
    dst = _dims(destination, ndim, "movedim")
    if len(src) != len(dst):
        raise ValueError(f"movedim: {len(src)} source dims for {len(dst)} destinations")
    rest = iter(d for d in range(ndim) if d not in src)
    placed = dict(zip(dst, src))
    order = [placed[i] if i in placed else next(rest) for i in range(ndim)]
    return forward_of("permute")(x, order)


moveaxis = movedim


@register("swapdims", methods=("swapdims",))
def swapdims(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose(x, dim0, dim1)`` (PyTorch's other name for it)."""
    return forward_of("transpose")(x, dim0, dim1)


@register("t", methods=("t",))
def t(x: Tensor) -> Tensor:
    """The transpose of a matrix; a 0-d or 1-D tensor is returned as it is (as PyTorch)."""
    if x._data.ndim > 2:
        raise ValueError(f"t: expects a tensor of at most 2 dimensions, got shape {tuple(x.shape)}; use transpose or mT")
    if x._data.ndim < 2:
        return x
    return make_view(x._data.T, x, (x,), t_backward)


@rule("t")
def t_backward(g, out, ins, node):
    """z = a^T (a matrix):  the gradient transposed back."""
    return (g.T,)


@register("view_as", methods=("view_as",))
def view_as(x: Tensor, other) -> Tensor:
    """``x.view(other.shape)``: a view, or PyTorch's error where ``x``'s strides cannot give one."""
    return forward_of("view")(x, tuple(other.shape))


@register("reshape_as", methods=("reshape_as",))
def reshape_as(x: Tensor, other) -> Tensor:
    """``x.reshape(other.shape)``."""
    return forward_of("reshape")(x, tuple(other.shape))


@register("contiguous", methods=("contiguous",))
def contiguous(x: Tensor, memory_format=None) -> Tensor:
    """``x`` itself when it is contiguous, else a row-major copy in the graph (``CloneBackward0``), as PyTorch.

    Code that calls ``view`` after ``contiguous()`` relies on the copy: a
    transpose's memory cannot be viewed in most other shapes.  With
    ``memory_format=taugrad.channels_last`` the copy is (N, H, W, C) memory
    of the (N, C, H, W) tensor (its strides as torch's).
    """
    if memory_format is not None and memory_format is not contiguous_format:
        format_order(memory_format, x._data.ndim, "contiguous")
        return x if is_contiguous(x, memory_format) else forward_of("to")(x, memory_format=memory_format)
    if x._data.flags.c_contiguous:
        return x
    return forward_of("clone")(x)  # a copy is row-major (NumPy's and CuPy's default order)


@register("is_contiguous", methods=("is_contiguous",))
def is_contiguous(x: Tensor, memory_format=None) -> bool:
    """Whether the elements lie in row-major order with no gaps (steps of size-1 dimensions do not count),
    as PyTorch: a transpose, a strided slice or an expanded tensor is not contiguous.  With
    ``memory_format=taugrad.channels_last``: whether they lie so in (N, H, W, C) order."""
    if memory_format is None or memory_format is contiguous_format:
        return bool(x._data.flags.c_contiguous)
    data = x._data
    try:
        order = format_order(memory_format, data.ndim, "is_contiguous")
    except RuntimeError:  # a rank the format does not lay out: not in it (torch answers False too)
        return False
    return is_laid_out(data.shape, [s // data.itemsize for s in data.strides], order)


@register("diff", methods=("diff",))
def diff(x: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference ``x[i + 1] - x[i]`` along ``dim``, after joining ``prepend``
    and ``append`` there (as ``torch.diff``); composed of ``cat``, ``narrow`` and ``sub``, so the
    gradient is theirs.  Bool tensors give ``x[i + 1] != x[i]``."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"diff: n must be an int, got {n!r}") from None
    if n < 0:
        raise ValueError(f"diff: order must be non-negative, got {n}")
    if x._data.ndim == 0:
        raise ValueError("diff: expects input to be at least one-dimensional")
    d = normalize_dim(dim, x._data.ndim, "diff")
    if n == 0:  # torch: the input itself, prepend and append ignored
        return x
    parts = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        if not isinstance(extra, Tensor):
            raise TypeError(f"diff: prepend and append must be Tensors, got {type(extra).__name__}")
        parts.append(extra)
    if len(parts) > 1:
        x = forward_of("cat")(parts, d)
    narrow_, sub = forward_of("narrow"), forward_of("sub")
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        later, earlier = narrow_(x, d, 1, size - 1), narrow_(x, d, 0, size - 1)
        x = later != earlier if x._data.dtype.kind == "b" else sub(later, earlier)  # bool: xor, as torch
    return x


@register("fliplr", methods=("fliplr",))
def fliplr(x: Tensor) -> Tensor:
    """``x`` with its columns (dim 1) in reverse order, a copy (``x`` needs at least 2 dims, as torch)."""
    if x._data.ndim < 2:
        raise ValueError(f"fliplr: input must be >= 2-d, got a tensor of shape {tuple(x._data.shape)}")
    return flip(x, 1)


@register("flipud", methods=("flipud",))
def flipud(x: Tensor) -> Tensor:
    """``x`` with its rows (dim 0) in reverse order, a copy (``x`` needs at least 1 dim, as torch)."""
    if x._data.ndim < 1:
        raise ValueError("flipud: input must be >= 1-d, got a 0-d tensor")
    return flip(x, 0)


@register("ravel", methods=("ravel",))
def ravel(x: Tensor) -> Tensor:
    """``x`` flattened to one dimension: ``reshape(-1)``, a view when ``x``'s strides allow it."""
    return forward_of("reshape")(x, -1)

"""Ops that move elements without changing them, and their rules.

Each rule moves the gradient back the inverse way: ``reshape`` reshapes back,
``permute`` applies the inverse permutation, ``expand`` sums over the
broadcast axes, ``cat``/``stack``/``pad`` slice their inputs' parts out of the
gradient.  Results that may share storage with the input are made with
:func:`~taugrad.tensors.core.node.make_view` so in-place changes through them are seen.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.core.dtypes import result_type
from taugrad.tensors.core.node import array_module, check_same_device, device_mismatch, make, make_view
from taugrad.tensors.core.rule import Rule, register, rule, shown_as
from taugrad.tensors.core.node import Tensor, to_array


def _shape_args(shape, op: str) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` both mean the shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        return tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{op}: a shape is a sequence of ints, got {shape!r}") from None


# ---------------------------------------------------------------------------
# reshape and friends
# ---------------------------------------------------------------------------


def _reshape_picture(node):
    """PyTorch's nodes for ``reshape``: a ``view`` where the result shares memory, else a copy viewed."""
    if node._base is not None:
        return "ViewBackward0", (0,) if node._prev else ()
    return "UnsafeViewBackward0", (("CloneBackward0", (0,)),) if node._prev else ()


@rule("reshape", shows=_reshape_picture)
def reshape_backward(g, out, ins, node):
    """z = a reshaped: the gradient reshaped back to a's shape."""
    return (g.reshape(ins[0].shape),)


@register("view", methods=("view",))
def view(x: Tensor, *shape) -> Tensor:
    """The same memory seen in a new shape (one size may be -1), as PyTorch's ``view``.

    Where ``x``'s strides cannot give the new shape without copying (most
    shapes of a transpose), PyTorch's RuntimeError: a view that silently
    copied would lose every write made through it.
    """
    out = reshape(x, *shape)
    if out._base is None and out._data.size:
        raise RuntimeError(f"view size is not compatible with input tensor's size and stride (at least one "
                           f"dimension spans across two contiguous subspaces): view{tuple(out.shape)} of shape "
                           f"{tuple(x.shape)} with stride {x.stride()}. Use .reshape(...) instead.")
    return out


@register("reshape", methods=("reshape",))
def reshape(x: Tensor, *shape) -> Tensor:
    """The same elements in a new shape (one size may be -1): a view when ``x``'s strides allow it, else a copy."""
    shape = _shape_args(shape, "reshape")
    if builtins.any(n < -1 for n in shape):  # NumPy takes any negative size as -1
        raise ValueError(f"reshape: invalid size in {shape}: sizes are >= 0, or -1 for the one inferred")
    try:
        data = x._data.reshape(shape)
    except ValueError:
        raise ValueError(
            f"reshape: cannot reshape a tensor of shape {tuple(x.shape)} ({x._data.size} elements) into {shape}"
        ) from None
    if not array_module(data).may_share_memory(data, x._data):  # NumPy had to copy
        return make(data, (x,), reshape_backward)
    return make_view(data, x, (x,), reshape_backward)


@register("flatten", methods=("flatten",))
def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim..end_dim`` (inclusive) into one."""
    if x._data.ndim == 0:
        return reshape(x, (1,))
    start = normalize_dim(start_dim, x._data.ndim, "flatten")
    end = normalize_dim(end_dim, x._data.ndim, "flatten")
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = x.shape
    return reshape(x, shape[:start] + (_prod(shape[start : end + 1]),) + shape[end + 1 :])


@register("unflatten", methods=("unflatten",))
def unflatten(x: Tensor, dim: int, sizes) -> Tensor:
    """Split dimension ``dim`` into ``sizes`` (one may be -1), the inverse of ``flatten``."""
    d = normalize_dim(dim, x._data.ndim, "unflatten")
    if not isinstance(sizes, (tuple, list)) or not sizes:
        raise TypeError(f"unflatten: sizes must be a non-empty tuple or list of ints, got {sizes!r}")
    try:
        sizes = tuple(operator.index(n) for n in sizes)
    except TypeError:
        raise TypeError(f"unflatten: sizes must be ints, got {sizes!r}") from None
    known = _prod(n for n in sizes if n != -1)
    n = x.shape[d]
    if sizes.count(-1) > 1 or (-1 not in sizes and known != n) or (-1 in sizes and (known == 0 or n % known)):
        raise ValueError(f"unflatten: sizes {sizes} do not multiply to the size {n} of dim {dim}")
    # the -1 resolved here: reshape cannot infer it when the tensor is empty, but the dim's size fixes it
    sizes = tuple(n // known if s == -1 else s for s in sizes)
    return reshape(x, x.shape[:d] + sizes + x.shape[d + 1:])


def _prod(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


@rule("squeeze", shows=shown_as("SqueezeBackward0"))
def squeeze_backward(g, out, ins, node):
    """z = a without size-1 dims:  the gradient reshaped back to a's shape."""
    return (g.reshape(ins[0].shape),)


#: the same rule for ``squeeze(dim)`` and ``squeeze((dims...))``, which PyTorch numbers 1 and 2: a rule of
#: its own rather than a flag in the node, as a node freed by backward keeps only its rule and still shows its name
_SQUEEZE_ONE = Rule("squeeze", squeeze_backward.backward, shows=shown_as("SqueezeBackward1"))
_SQUEEZE_DIMS = Rule("squeeze", squeeze_backward.backward, shows=shown_as("SqueezeBackward2"))


@register("squeeze", methods=("squeeze",))
def squeeze(x: Tensor, dim=None) -> Tensor:
    """Drop size-1 dimensions (only those in ``dim`` if given; others are left, as PyTorch)."""
    shape = x.shape
    if dim is None:
        new = tuple(n for n in shape if n != 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        if x._data.ndim == 0:
            for d in dims:
                if d not in (0, -1):
                    raise IndexError(f"squeeze: dim {d} out of range for a 0-d tensor")
            return make_view(x._data, x, (x,), _SQUEEZE_DIMS if dims is dim else _SQUEEZE_ONE)
        drop = {normalize_dim(d, x._data.ndim, "squeeze") for d in dims}
        new = tuple(n for i, n in enumerate(shape) if not (i in drop and n == 1))
    rule_fn = squeeze_backward if dim is None else _SQUEEZE_DIMS if dims is dim else _SQUEEZE_ONE
    return make_view(x._data.reshape(new), x, (x,), rule_fn)


@rule("unsqueeze")
def unsqueeze_backward(g, out, ins, node):
    return (g.reshape(ins[0].shape),)


@register("unsqueeze", methods=("unsqueeze",))
def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dimension at position ``dim`` (``-1`` appends)."""
    d = normalize_dim(dim, x._data.ndim + 1, "unsqueeze")
    shape = x.shape
    return make_view(x._data.reshape(shape[:d] + (1,) + shape[d:]), x, (x,), unsqueeze_backward)


# ---------------------------------------------------------------------------
# transposes
# ---------------------------------------------------------------------------


@rule("transpose")
def transpose_backward(g, out, ins, node):
    """z = a with two axes swapped: swap them back."""
    d0, d1 = node._ctx
    return (g.swapaxes(d0, d1),)


@register("transpose", methods=("transpose", "swapaxes"))
def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap dimensions ``dim0`` and ``dim1`` (also ``swapaxes``)."""
    d0 = normalize_dim(dim0, x._data.ndim, "transpose")
    d1 = normalize_dim(dim1, x._data.ndim, "transpose")
    return make_view(x._data.swapaxes(d0, d1), x, (x,), transpose_backward, (d0, d1))


@rule("permute")
def permute_backward(g, out, ins, node):
    """z = a with axes permuted by p: apply the inverse permutation."""
    return (A.permute(g, node._ctx),)


@register("permute", methods=("permute",))
def permute(x: Tensor, *dims) -> Tensor:
    """Reorder the dimensions: ``out.shape[i] == x.shape[dims[i]]``."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    ndim = x._data.ndim
    perm = tuple(normalize_dim(d, ndim, "permute") for d in dims)
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"permute: {tuple(dims)} is not a permutation of the {ndim} dimensions of shape {tuple(x.shape)}")
    inverse = tuple(sorted(range(ndim), key=perm.__getitem__))
    return make_view(array_module(x._data).transpose(x._data, perm), x, (x,), permute_backward, inverse)


@rule("T", shows=shown_as("PermuteBackward0"))
def full_transpose_backward(g, out, ins, node):
    """z = a with all axes reversed: reverse them again."""
    return (g.T,)


@register("T", properties=("T",))
def full_transpose(x: Tensor) -> Tensor:
    """All dimensions reversed (``.T``; for a matrix, the transpose)."""
    return make_view(x._data.T, x, (x,), full_transpose_backward)


# ---------------------------------------------------------------------------
# expand
# ---------------------------------------------------------------------------


@rule("expand")
def expand_backward(g, out, ins, node):
    """z = a broadcast to a larger shape: sum the gradient over the copies."""
    return (A.sum_to(g, ins[0].shape),)


@register("mT", properties=("mT",))
def matrix_transpose(x: Tensor) -> Tensor:
    """``x.mT``: the last two dims swapped (a batch of matrices transposed)."""
    return transpose(x, -2, -1)


@register("expand", methods=("expand", "broadcast_to"))
def expand(x: Tensor, *shape) -> Tensor:
    """Broadcast to ``shape`` without copying (-1 keeps a size).  The result is read-only."""
    shape = _shape_args(shape, "expand")
    lead = len(shape) - x._data.ndim
    if lead < 0:
        raise ValueError(f"expand: cannot expand shape {tuple(x.shape)} to {shape} (fewer dimensions)")
    target = tuple(x.shape[i - lead] if (n == -1 and i >= lead) else n for i, n in enumerate(shape))
    try:
        data = array_module(x._data).broadcast_to(x._data, target)
    except ValueError:
        raise ValueError(f"expand: cannot expand shape {tuple(x.shape)} to {shape}") from None
    return make_view(data, x, (x,), expand_backward)


# ---------------------------------------------------------------------------
# cat, stack, split, pad
# ---------------------------------------------------------------------------


def _tensors(tensors, op: str) -> tuple:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: expects a list or tuple of tensors, got {type(tensors).__name__}")
    if not tensors:
        raise ValueError(f"{op}: expects a non-empty list of tensors")
    return tuple(t if isinstance(t, Tensor) else Tensor(to_array(t)) for t in tensors)


@rule("cat")
def cat_backward(g, out, ins, node):
    """z = [a; b; ...] along d: each input gets its slice of the gradient."""
    d, bounds = node._ctx
    lead = (slice(None),) * d
    return tuple(g[lead + (slice(lo, hi),)] for lo, hi in bounds)


def _same_dtype(parts) -> list:
    """The parts' arrays, converted to their PyTorch result dtype where they differ (int with float: the float)."""
    arrays = [t._data for t in parts]
    first = arrays[0].dtype
    if all(a.dtype == first for a in arrays):
        return arrays
    common = result_type(*arrays)
    return [a if a.dtype == common else a.astype(common) for a in arrays]


@register("cat")
def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension (also ``concatenate``)."""
    parts = _tensors(tensors, "cat")
    d = normalize_dim(dim, parts[0]._data.ndim, "cat")
    try:
        data = array_module(parts[0]._data).concatenate(_same_dtype(parts), axis=d)
    except ValueError:
        shapes = ", ".join(str(tuple(t.shape)) for t in parts)
        raise ValueError(f"cat: shapes must match except in dim {dim}, got {shapes}") from None
    except TypeError:  # arrays of two devices
        mixed = device_mismatch("cat", *parts)
        if mixed is None:
            raise
        raise mixed from None
    bounds, lo = [], 0
    for t in parts:
        bounds.append((lo, lo + t.shape[d]))
        lo += t.shape[d]
    return make(data, parts, cat_backward, (d, tuple(bounds)))


concatenate = cat  # NumPy's name


@rule("stack")
def stack_backward(g, out, ins, node):
    """z = stack(a, b, ...) along a new axis d: input i gets g[..., i, ...]."""
    d = node._ctx
    lead = (slice(None),) * d
    return tuple(g[lead + (i,)] for i in range(len(ins)))


@register("stack")
def stack(tensors, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dimension."""
    parts = _tensors(tensors, "stack")
    d = normalize_dim(dim, parts[0]._data.ndim + 1, "stack")
    try:
        data = array_module(parts[0]._data).stack(_same_dtype(parts), axis=d)
    except ValueError:
        shapes = ", ".join(str(tuple(t.shape)) for t in parts)
        raise ValueError(f"stack: all tensors must have the same shape, got {shapes}") from None
    except TypeError:  # arrays of two devices
        check_same_device("stack", *parts)
        raise
    return make(data, parts, stack_backward, d)


@register("split", methods=("split",))
def split(x: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Pieces of ``x`` along ``dim``: of size ``split_size`` each (the last may be smaller),
    or of the sizes listed in ``sections`` (as ``torch.split``)."""
    d = normalize_dim(dim, x._data.ndim, "split")
    n = x.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [operator.index(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n or builtins.min(sizes, default=0) < 0:
            raise ValueError(f"split: sections {sizes} do not add up to the size {n} of dim {dim}")
    else:
        size = operator.index(split_size_or_sections)
        if size <= 0:
            raise ValueError(f"split: split_size must be positive, got {size}")
        sizes = [builtins.min(size, n - lo) for lo in range(0, n, size)] or [0]
    lead = (slice(None),) * d
    pieces, lo = [], 0
    for s in sizes:
        pieces.append(x[lead + (slice(lo, lo + s),)])
        lo += s
    return tuple(pieces)


@register("chunk", methods=("chunk",))
def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``chunks`` nearly equal pieces along ``dim`` (as ``torch.chunk``)."""
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    d = normalize_dim(dim, x._data.ndim, "chunk")
    n = x.shape[d]
    if n == 0:  # PyTorch gives ``chunks`` empty pieces
        return split(x, [0] * chunks, d)
    return split(x, -(-n // chunks), d)


@rule("pad")
def pad_backward(g, out, ins, node):
    """z = a surrounded by constants: a's gradient is the middle of g."""
    return (g[node._ctx],)


@register("pad")
def pad(x: Tensor, pad, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad with a constant, ``torch.nn.functional.pad`` style.

    ``pad = (left, right)`` pads the last dimension, ``(left, right, top, bottom)``
    the last two, and so on.  NumPy style ``((before, after), ...)`` per
    dimension (from the first) is accepted too.
    """
    if mode != "constant":
        raise ValueError(f"pad: only mode='constant' is supported, got {mode!r}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"pad: value must be a number, got {type(value).__name__}")
    ndim = x._data.ndim
    if len(pad) and isinstance(pad[0], (tuple, list)):  # NumPy style, first axis first
        if len(pad) != ndim or builtins.any(len(pair) != 2 for pair in pad):
            raise ValueError(f"pad: NumPy-style widths are one (before, after) pair per dimension ({ndim}), "
                             f"got {tuple(pad)}")
        widths = [tuple(operator.index(w) for w in pair) for pair in pad]
    else:
        if len(pad) % 2 or len(pad) // 2 > ndim:
            raise ValueError(
                f"pad: expects an even number of widths, at most 2 per dimension ({ndim}), got {tuple(pad)}"
            )
        widths = [(0, 0)] * ndim
        for i in range(len(pad) // 2):
            widths[ndim - 1 - i] = (operator.index(pad[2 * i]), operator.index(pad[2 * i + 1]))
    if builtins.any(w < 0 for pair in widths for w in pair):
        raise ValueError(f"pad: negative widths are not supported, got {tuple(pad)}")
    data = array_module(x._data).pad(x._data, widths, mode="constant", constant_values=value)
    middle = tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, x.shape))
    return make(data, (x,), pad_backward, middle)


@register("expand_as", methods=("expand_as",))
def expand_as(x: Tensor, other: Tensor) -> Tensor:
    """``x`` expanded to ``other``'s shape (see :func:`expand`)."""
    return expand(x, other.shape)


# ---------------------------------------------------------------------------
# broadcasting several tensors, grids, stacking by rank (compositions of expand, reshape, cat)
# ---------------------------------------------------------------------------


def _varargs(tensors: tuple, op: str) -> tuple:
    """``f(a, b)`` and ``f([a, b])`` both name the tensors a and b, as in torch."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return tuple(t if isinstance(t, Tensor) else Tensor(to_array(t)) for t in tensors) if tensors else ()


@register("broadcast_tensors")
def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common broadcast shape (views; the gradients sum back)."""
    parts = _varargs(tensors, "broadcast_tensors")
    try:
        shape = np.broadcast_shapes(*(t.shape for t in parts))
    except ValueError:
        shapes = ", ".join(str(tuple(t.shape)) for t in parts)
        raise ValueError(f"broadcast_tensors: shapes {shapes} cannot broadcast") from None
    return tuple(t if t.shape == shape else expand(t, shape) for t in parts)


@register("meshgrid")
def meshgrid(*tensors, indexing: str = "ij") -> tuple:
    """Coordinate grids of 0-d or 1-d tensors: output i repeats input i along every other dim.

    ``indexing='ij'`` (torch's default): dim i of the grid is input i;
    ``'xy'`` (NumPy's and plotting's): the first two dims are swapped, so a
    grid of ``(x, y)`` has ``len(y)`` rows.
    """
    parts = _varargs(tensors, "meshgrid")
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    if not parts:
        raise ValueError("meshgrid: expects at least one tensor")
    for t in parts:
        if t._data.ndim > 1:
            raise ValueError(f"meshgrid: expects 0-d or 1-d tensors, got shape {tuple(t.shape)}")
        if t._data.dtype != parts[0]._data.dtype:
            raise TypeError(f"meshgrid: expects all tensors to have the same dtype, got {parts[0].dtype} and "
                            f"{t.dtype}")
    axes = list(range(len(parts)))
    if indexing == "xy" and len(parts) > 1:
        axes[0], axes[1] = 1, 0
    sizes = [t._data.size for t in parts]
    shape = [0] * len(parts)
    for i, axis in enumerate(axes):
        shape[axis] = sizes[i]
    grids = []
    for i, axis in enumerate(axes):
        column = reshape(parts[i], tuple(sizes[i] if d == axis else 1 for d in range(len(parts))))
        grids.append(expand(column, tuple(shape)))
    return tuple(grids)


def _at_least(t: Tensor, ndim: int) -> Tensor:
    """NumPy's ``atleast_Nd`` for the stacks: (n,) -> (1, n) -> ... ; a 3-d result puts 1-d data at (1, n, 1)."""
    shape = t.shape
    if len(shape) >= ndim:
        return t
    if ndim == 1:
        return reshape(t, (1,))
    if ndim == 2:
        return reshape(t, (1,) * (2 - len(shape)) + shape)
    return reshape(t, {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[len(shape)])


@register("hstack")
def hstack(tensors) -> Tensor:
    """Join along dim 1 (along dim 0 when every tensor is 0-d or 1-d), as ``numpy.hstack``."""
    parts = [_at_least(t, 1) for t in _tensors(tensors, "hstack")]
    return cat(parts, 0 if builtins.all(t._data.ndim == 1 for t in parts) else 1)


@register("vstack")
def vstack(tensors) -> Tensor:
    """Join along dim 0, 1-d tensors becoming rows, as ``numpy.vstack`` (also ``row_stack``)."""
    return cat([_at_least(t, 2) for t in _tensors(tensors, "vstack")], 0)


@register("dstack")
def dstack(tensors) -> Tensor:
    """Join along dim 2 (depth), smaller tensors made 3-d first, as ``numpy.dstack``."""
    return cat([_at_least(t, 3) for t in _tensors(tensors, "dstack")], 2)



def _each_at_least(op: str, tensors: tuple, ndim: int):
    """atleast_Nd: one tensor in, one out; several (or a list) in, a tuple out."""
    out = tuple(_at_least(t, ndim) for t in _varargs(tensors, op))
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


@register("atleast_1d")
def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (a 0-d one becomes shape (1,))."""
    return _each_at_least("atleast_1d", tensors, 1)


@register("atleast_2d")
def atleast_2d(*tensors):
    """Each tensor with at least 2 dims: () -> (1, 1), (n,) -> (1, n)."""
    return _each_at_least("atleast_2d", tensors, 2)


@register("atleast_3d")
def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _each_at_least("atleast_3d", tensors, 3)

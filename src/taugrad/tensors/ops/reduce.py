"""Reductions (``sum mean max min amax amin var std logsumexp``) and their rules.

All take ``dim`` (an int, a tuple of ints, negative counting from the end, or
None for all dimensions) and ``keepdim``, or NumPy's ``axis``/``keepdims``.

The rules share one move: put the reduced axes back as size-1 axes
(``_kept``), then let broadcasting spread the gradient over the inputs that
were reduced.
"""
from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.args import normalize_dim, normalize_dims, pick
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import array_module, constant, is_sparse_operand, make
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.core.rule import Rule, forward_of, register, rule, shown_as

#: what ``max(dim=...)`` / ``min(dim=...)`` return, like ``torch.return_types.max``
ValuesIndices = namedtuple("ValuesIndices", "values indices")

_ALL = (None, False)
_add_reduce = np.add.reduce  # ctx of a full reduction without keepdim (the common case)


def _resolve(x: Tensor, dim, keepdim, axis, keepdims, op: str):
    """(dims or None, keepdim) from PyTorch or NumPy style arguments."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{op}: pass either dim or axis, not both")
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return normalize_dims(dim, x._data.ndim, op), bool(keepdim)


def _kept(g, in_shape: tuple, dims, keepdim: bool):
    """``g`` (a reduction's output or its gradient) with the reduced axes as size 1."""
    if keepdim or dims is None:  # None: g is 0-d (or all ones), broadcasting does it
        return g
    if not dims:
        return g
    return g.reshape(tuple(1 if i in dims else n for i, n in enumerate(in_shape)))


def _count(shape: tuple, dims) -> int:
    """Number of elements reduced into each output element."""
    if dims is None:
        n = 1
        for s in shape:
            n *= s
        return n
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _reduce_error(op: str, x: Tensor) -> ValueError:
    return ValueError(f"{op}: cannot reduce an empty dimension of a tensor of shape {tuple(x.shape)}")


# ---------------------------------------------------------------------------
# sum, mean
# ---------------------------------------------------------------------------


@rule("sum")
def sum_backward(g, out, ins, node):
    """z = sum_i a_i:  dz/da_i = 1, so every reduced element receives g."""
    (x,) = ins
    dims, keepdim = node._ctx
    return (A.broadcast_to(_kept(g, x.shape, dims, keepdim), x.shape),)


#: the same rule over chosen dims, which PyTorch numbers 1 (a rule of its own, as a node
#: freed by backward keeps only its rule and still shows its name)
_SUM_DIMS = Rule("sum", sum_backward.backward, shows=shown_as("SumBackward1"))


@register("sum", methods=("sum",))
def sum(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """Sum over ``dim`` (all dimensions by default)."""
    if not isinstance(x, Tensor) and is_sparse_operand(x):  # torch.sum(sparse, dim): a sparse result
        return x.sum(dim, keepdim)
    if dim is None and axis is None and not keepdim and not keepdims:
        data = x._data
        if data.dtype.kind == "f" and type(data) is np.ndarray:  # straight into a 0-d array, not a NumPy scalar
            return make(_add_reduce(data, None, None, np.empty((), dtype=data.dtype)), (x,), sum_backward, _ALL)
        return make(data.sum(dtype=_sum_dtype(data)), (x,), sum_backward, _ALL)
    dims, keepdim = _resolve(x, dim, keepdim, axis, keepdims, "sum")
    return make(x._data.sum(axis=dims, keepdims=keepdim, dtype=_sum_dtype(x._data)), (x,), _SUM_DIMS,
                (dims, keepdim))


def _sum_dtype(data):
    """PyTorch sums every integer and bool dtype as int64 (NumPy: uint64 for unsigned ones)."""
    return np.int64 if data.dtype.kind in "biu" else None


@rule("mean")
def mean_backward(g, out, ins, node):
    """z = (1/n) sum_i a_i:  dz/da_i = 1/n."""
    (x,) = ins
    dims, keepdim = node._ctx
    n = _count(x.shape, dims)
    g = _kept(g, x.shape, dims, keepdim) * (1.0 / n if n else float("nan"))
    return (A.broadcast_to(g, x.shape),)


_MEAN_DIMS = Rule("mean", mean_backward.backward, shows=shown_as("MeanBackward1"))


@register("mean", methods=("mean",))
def mean(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """Arithmetic mean over ``dim`` (all dimensions by default)."""
    if x._data.dtype.kind not in "fc":
        raise TypeError(f"mean: needs a floating tensor, got dtype {x._data.dtype}")
    if dim is None and axis is None and not keepdim and not keepdims:
        (dims, keepdim), rule_fn = _ALL, mean_backward
    else:
        (dims, keepdim), rule_fn = _resolve(x, dim, keepdim, axis, keepdims, "mean"), _MEAN_DIMS
    n = _count(x._data.shape, dims)
    data = x._data.sum(axis=dims, keepdims=keepdim)
    data = data * (1.0 / n) if n else data * float("nan")
    return make(data, (x,), rule_fn, (dims, keepdim))


# ---------------------------------------------------------------------------
# max, min
# ---------------------------------------------------------------------------


@rule("amax", reads=(0, "out"))
def extreme_backward(g, out, ins, node):
    """z = max_i a_i: the gradient goes to the maximal elements, split evenly on ties.

    (PyTorch's rule for ``amax``/``amin`` and for ``max()`` without ``dim``.)
    ``max()``/``min()`` of everything: a nan result came from the nan elements,
    so they share the gradient (PyTorch's too; ``amax`` gives nan everywhere there).
    """
    (x,) = ins
    dims, keepdim, nan_takes_gradient = node._ctx
    x_data = x._data if isinstance(x, Tensor) else x  # the mask is a constant
    z = _kept(out._data if isinstance(out, Tensor) else out, x.shape, dims, keepdim)
    hit = x_data == z
    if nan_takes_gradient:  # (only a 0-d z: this flag is for a full reduction)
        if isinstance(x_data, np.ndarray):
            if z != z:
                hit = x_data != x_data
        else:  # on a device, chosen there: asking whether z is nan would wait for the device
            hit = array_module(x_data).where(z != z, x_data != x_data, hit)
    count = hit.sum(axis=dims, keepdims=True)
    return (_kept(g, x.shape, dims, keepdim) * hit / count,)


def _extreme(x: Tensor, dim, keepdim, axis, keepdims, op: str, fn, nan_takes_gradient: bool = False) -> Tensor:
    """``fn`` ("max" or "min", of the array's module) over ``dim``, with the rule that splits ties."""
    dims, keepdim = _resolve(x, dim, keepdim, axis, keepdims, op)
    xd = x._data
    try:
        data = getattr(array_module(xd), fn)(xd, axis=dims, keepdims=keepdim)
    except ValueError:
        raise _reduce_error(op, x) from None
    return make(data, (x,), extreme_backward, (dims, keepdim, nan_takes_gradient))


@register("amax", methods=("amax",))
def amax(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """Largest value over ``dim`` (ties share the gradient evenly)."""
    return _extreme(x, dim, keepdim, axis, keepdims, "amax", "max")


@register("amin", methods=("amin",))
def amin(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """Smallest value over ``dim`` (ties share the gradient evenly)."""
    return _extreme(x, dim, keepdim, axis, keepdims, "amin", "min")


@rule("max_dim", shows=shown_as("MaxBackward0"))
def select_backward(g, out, ins, node):
    """z = a[argmax]: the gradient goes to the selected index only (PyTorch's max(dim))."""
    (x,) = ins
    d, keepdim, index = node._ctx
    if not keepdim:
        g = g.reshape(index.shape)
    n = x.shape[d]
    positions = array_module(index).arange(n).reshape(tuple(n if i == d else 1 for i in range(len(x.shape))))
    return (g * (positions == index),)


_MIN_DIM = Rule("min_dim", select_backward.backward, shows=shown_as("MinBackward0"))


def _extreme_dim(x: Tensor, dim, keepdim, axis, keepdims, op: str, arg, fn):
    """``(values, indices)`` along one dimension, as ``torch.max(x, dim)``."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    if isinstance(dim, (tuple, list)):  # several dims: values only (as amax/amin)
        return _extreme(x, dim, keepdim, None, None, op, op)
    xd = x._data
    xp = array_module(xd)
    if xd.ndim == 0:
        normalize_dims(dim, 0, op)
        return ValuesIndices(forward_of("clone")(x), constant(xp.zeros((), dtype=np.int64)))
    d = normalize_dim(dim, xd.ndim, op)
    try:
        index = getattr(xp, arg)(xd, axis=d, keepdims=True)
    except ValueError:
        raise _reduce_error(op, x) from None
    values = getattr(xp, fn)(xd, axis=d, keepdims=keepdim)
    indices = index if keepdim else index.squeeze(d)
    rule_fn = _MIN_DIM if op == "min" else select_backward
    return ValuesIndices(make(values, (x,), rule_fn, (d, keepdim, index)), constant(indices))


@register("max", methods=("max",))
def max(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Largest value.

    * ``x.max()``: the maximum of all elements (ties share the gradient evenly);
    * ``x.max(dim)``: ``(values, indices)`` along ``dim``, as ``torch.max``
      (the gradient goes to the returned index);
    * ``x.max(dim=(0, 2))``: the values over several dims, as :func:`amax`;
    * ``x.max(other_tensor)``: elementwise :func:`maximum`.
    """
    if isinstance(dim, Tensor):
        return forward_of("maximum")(x, dim)
    if dim is None and axis is None:
        return _extreme(x, None, keepdim, None, keepdims, "max", "max", nan_takes_gradient=True)
    return _extreme_dim(x, dim, keepdim, axis, keepdims, "max", "argmax", "max")


@register("min", methods=("min",))
def min(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Smallest value; see :func:`max` for the forms."""
    if isinstance(dim, Tensor):
        return forward_of("minimum")(x, dim)
    if dim is None and axis is None:
        return _extreme(x, None, keepdim, None, keepdims, "min", "min", nan_takes_gradient=True)
    return _extreme_dim(x, dim, keepdim, axis, keepdims, "min", "argmin", "min")


@register("argmax", methods=("argmax",))
def argmax(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """Index of the largest value (of the flattened tensor when ``dim`` is None)."""
    return _arg(x, dim, keepdim, axis, keepdims, "argmax", "argmax")


@register("argmin", methods=("argmin",))
def argmin(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """Index of the smallest value (of the flattened tensor when ``dim`` is None)."""
    return _arg(x, dim, keepdim, axis, keepdims, "argmin", "argmin")


def _arg(x, dim, keepdim, axis, keepdims, op, fn):
    """``fn`` ("argmax" or "argmin", of the array's module) over ``dim``."""
    dim = pick(dim, axis, None, "dim", "axis", op)
    keepdim = keepdim if keepdims is None else keepdims
    xd = x._data
    fn = getattr(array_module(xd), fn)
    try:
        if dim is None:  # the index into the flattened tensor; keepdim keeps every dim as size 1 (PyTorch)
            index = fn(xd)
            return constant(index.reshape((1,) * xd.ndim) if keepdim else index)
        d = normalize_dim(dim, xd.ndim, op)
        return constant(fn(xd, axis=d, keepdims=bool(keepdim)))
    except ValueError:
        raise _reduce_error(op, x) from None


# ---------------------------------------------------------------------------
# var, std, logsumexp
# ---------------------------------------------------------------------------


def _correction(correction, unbiased, ddof) -> float:
    if correction is not None:
        return correction
    if ddof is not None:
        return ddof
    if unbiased is not None:
        return 1 if unbiased else 0
    return 1


def _var_parts(x: Tensor, dim, unbiased, keepdim, correction, axis, keepdims, ddof, op):
    dims, keepdim = _resolve(x, dim, keepdim, axis, keepdims, op)
    if x._data.dtype.kind not in "fc":
        raise TypeError(f"{op}: needs a floating tensor, got dtype {x._data.dtype}")
    c = _correction(correction, unbiased, ddof)
    n = _count(x._data.shape, dims)
    centred = x._data - x._data.mean(axis=dims, keepdims=True) if n else x._data
    with quiet():  # n <= c: inf/nan, as PyTorch
        var = (centred * centred).sum(axis=dims, keepdims=keepdim) / builtins.max(n - c, 0)
    return var, (dims, keepdim, n - c)


@rule("var", reads=(0,))
def var_backward(g, out, ins, node):
    """z = sum_i (a_i - mean)^2 / (n - c):  dz/da_i = 2 (a_i - mean) / (n - c)."""
    (x,) = ins
    dims, keepdim, dof = node._ctx
    centred = x - x.mean(axis=dims, keepdims=True)
    return (_kept(g, x.shape, dims, keepdim) * centred * (2.0 / dof if dof > 0 else float("nan")),)


@register("var", methods=("var",))
def var(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None, ddof=None):
    """Variance ``sum (x - mean)^2 / (n - correction)``; ``correction=1`` by default, as PyTorch
    (NumPy's ``ddof`` and PyTorch's legacy ``unbiased`` are accepted)."""
    data, ctx = _var_parts(x, dim, unbiased, keepdim, correction, axis, keepdims, ddof, "var")
    return make(data, (x,), var_backward, ctx)


@rule("std", reads=(0, "out"))
def std_backward(g, out, ins, node):
    """z = sqrt(var):  dz/da_i = (a_i - mean) / ((n - c) z), and 0 where z = 0 (as PyTorch).

    A constant slice has z = 0 and every a_i - mean = 0: the limit 0/0 is taken
    as 0 (the subgradient PyTorch uses), not nan.
    """
    (x,) = ins
    dims, keepdim, dof = node._ctx
    centred = x - x.mean(axis=dims, keepdims=True)
    z = _kept(out, x.shape, dims, keepdim)
    z_is_zero = (z._data if isinstance(z, Tensor) else z) == 0
    # dividing by inf where z = 0 gives the 0 without a 0/0
    return (_kept(g, x.shape, dims, keepdim) * centred / (A.where(z_is_zero, float("inf"), z) * dof),)


@register("std", methods=("std",))
def std(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None, ddof=None):
    """Standard deviation, ``sqrt(var)`` (same arguments as :func:`var`)."""
    data, ctx = _var_parts(x, dim, unbiased, keepdim, correction, axis, keepdims, ddof, "std")
    return make(array_module(data).sqrt(data), (x,), std_backward, ctx)


@rule("logsumexp", reads=(0, "out"))
def logsumexp_backward(g, out, ins, node):
    """z = log sum_i exp(a_i):  dz/da_i = exp(a_i - z) (the softmax)."""
    (x,) = ins
    dims, keepdim = node._ctx
    return (_kept(g, x.shape, dims, keepdim) * A.exp(x - _kept(out, x.shape, dims, keepdim)),)


def logsumexp_array(x, dims, keepdim: bool):
    """``log(sum(exp(x)))`` over ``dims`` without overflow: shift by the maximum first."""
    xp = array_module(x)
    shift = xp.max(x, axis=dims, keepdims=True)
    shift = xp.where(xp.isfinite(shift), shift, 0)  # all -inf (or inf) along an axis
    with quiet():  # log(0) = -inf when every element is -inf
        out = xp.log(xp.exp(x - shift).sum(axis=dims, keepdims=True)) + shift
    if not keepdim:
        out = out.reshape(()) if dims is None else out.squeeze(axis=dims)
    return out


@register("logsumexp", methods=("logsumexp",))
def logsumexp(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """``log(sum(exp(x), dim))``, stable for large inputs."""
    dims, keepdim = _resolve(x, dim, keepdim, axis, keepdims, "logsumexp")
    if x._data.size == 0:  # no maximum to shift by, nothing to overflow: a sum of no terms is 0, log 0 = -inf
        xp = array_module(x._data)
        with quiet():
            data = xp.log(xp.exp(x._data).sum(axis=dims, keepdims=keepdim))
    else:
        data = logsumexp_array(x._data, dims, keepdim)
    return make(data, (x,), logsumexp_backward, (dims, keepdim))


# ---------------------------------------------------------------------------
# logic (no gradient)
# ---------------------------------------------------------------------------


@register("all", methods=("all",))
def all(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """True where every element along ``dim`` is nonzero."""
    dims, keepdim = _resolve(x, dim, keepdim, axis, keepdims, "all")
    return constant(array_module(x._data).all(x._data, axis=dims, keepdims=keepdim))


@register("any", methods=("any",))
def any(x: Tensor, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """True where some element along ``dim`` is nonzero."""
    dims, keepdim = _resolve(x, dim, keepdim, axis, keepdims, "any")
    return constant(array_module(x._data).any(x._data, axis=dims, keepdims=keepdim))


@register("count_nonzero", methods=("count_nonzero",))
def count_nonzero(x: Tensor, dim=None) -> Tensor:
    """The number of nonzero elements along ``dim`` (an int or a tuple; all by default), int64."""
    dims = normalize_dims(dim, x._data.ndim, "count_nonzero")
    xp = array_module(x._data)
    return constant(xp.asarray((x._data != 0).sum(axis=dims), dtype=xp.int64))


# ---------------------------------------------------------------------------
# nansum, nanmean: nan treated as absent
# ---------------------------------------------------------------------------
# Composed: sum of where(isnan(x), 0, x).  where's rule sends no gradient to
# the nan positions, torch's gradient (g * ~isnan(x)).


def _nan_zeroed(x: Tensor):
    """``x`` with its nan set to 0 (a graph node), and the constant mask of the kept elements."""
    if x._data.dtype.kind not in "fc":
        return x, None
    kept = ~array_module(x._data).isnan(x._data)
    return forward_of("where")(constant(kept), x, 0.0), kept


@register("nansum", methods=("nansum",))
def nansum(x: Tensor, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
    """Sum over ``dim`` with nan counted as zero (as ``torch.nansum``)."""
    if dtype is not None:
        x = forward_of("astype")(x, dtype)
    zeroed, _ = _nan_zeroed(x)
    return sum(zeroed, dim, keepdim, axis=axis, keepdims=keepdims)


@register("nanmean", methods=("nanmean",))
def nanmean(x: Tensor, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
    """Mean over ``dim`` of the elements that are not nan (nan where all are, as ``torch.nanmean``)."""
    if dtype is not None:
        x = forward_of("astype")(x, dtype)
    if x._data.dtype.kind not in "fc":
        raise TypeError(f"nanmean: needs a floating tensor, got dtype {x._data.dtype}")
    zeroed, kept = _nan_zeroed(x)
    dims, keepdim = _resolve(x, dim, keepdim, axis, keepdims, "nanmean")
    total = sum(zeroed, dims, keepdim)
    count = kept.sum(axis=dims, keepdims=keepdim).astype(x._data.dtype)
    return forward_of("div")(total, constant(count))


def _moments(x: Tensor, spread, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # torch's overload var_mean(x, unbiased)
        dim, unbiased = None, dim
    return spread(x, dim, unbiased, keepdim, correction=correction), mean(x, dim, keepdim)


@register("var_mean")
def var_mean(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(x), mean(x))`` over the same dims (``torch.var_mean``; arguments as :func:`var`)."""
    return _moments(x, var, dim, unbiased, keepdim, correction)


@register("std_mean")
def std_mean(x: Tensor, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(x), mean(x))`` over the same dims (``torch.std_mean``; arguments as :func:`var`)."""
    return _moments(x, std, dim, unbiased, keepdim, correction)

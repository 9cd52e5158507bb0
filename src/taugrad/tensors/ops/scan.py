"""Scans and products: ``cumsum``, ``cumprod``, ``prod``.

Notation along the scanned dimension: ``a_0 .. a_{n-1}``, ``g`` the incoming
gradient, ``revcumsum(v)_i = sum_{j >= i} v_j`` (a cumulative sum from the end).

The product rules never divide by an element of ``a`` when it is zero: the
product of "all the others" is written as (product of those before) times
(product of those after), as PyTorch's rules give the exact answer there.
"""
from __future__ import annotations

import operator

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.args import normalize_dim, pick
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import Tensor, _dtype_of, array_module, make
from taugrad.tensors.core.rule import Rule, forward_of, register, rule, shown_as


# ---------------------------------------------------------------------------
# helpers that work on arrays and on Tensors
# ---------------------------------------------------------------------------


def _flip(v, d: int):
    return forward_of("flip")(v, d) if isinstance(v, Tensor) else array_module(v).flip(v, axis=d)


def _cat(parts, d: int):
    if any(isinstance(p, Tensor) for p in parts):
        return forward_of("cat")([p if isinstance(p, Tensor) else Tensor(p) for p in parts], d)
    return array_module(parts[0]).concatenate(parts, axis=d)


def _revcumsum(v, d: int):
    """``sum_{j >= i} v_j`` along ``d``."""
    return _flip(_flip(v, d).cumsum(d), d)


def _part(v, d: int, lo, hi):
    return v[(slice(None),) * d + (slice(lo, hi),)]


def _exclusive_cumprod(a, d: int):
    """``prod_{k < i} a_k`` along ``d`` (1 for i = 0): the cumprod of ``[1, a_0, ..., a_{n-2}]``."""
    ones = A.zeros(_part(a, d, 0, 1).shape, a) + 1  # a constant: one slice of ones
    return _cat([ones, _part(a, d, 0, -1)], d).cumprod(d)


def _dtype_arg(x: Tensor, dtype):
    """PyTorch's accumulation dtype: ``dtype`` if given, int64 for ints and bools, else x's."""
    if dtype is not None:
        return _dtype_of(dtype)
    kind = x._data.dtype.kind
    return np.dtype(np.int64) if kind in "biu" else x._data.dtype


def _scan_dim(x: Tensor, dim, axis, op: str) -> int:
    dim = pick(dim, axis, None, "dim", "axis", op)
    if dim is None:
        raise TypeError(f"{op}: dim is required (as in PyTorch)")
    if x._data.ndim == 0:
        if dim not in (0, -1):
            raise IndexError(f"{op}: dim {dim} out of range for a 0-d tensor")
        return 0
    return normalize_dim(dim, x._data.ndim, op)


# ---------------------------------------------------------------------------
# cumsum
# ---------------------------------------------------------------------------


@rule("cumsum")
def cumsum_backward(g, out, ins, node):
    """z_i = sum_{k <= i} a_k:  dz_j/da_i = 1 for j >= i, so grad_a = revcumsum(g)."""
    d = node._ctx
    if g.ndim == 0:
        return (g,)
    return (_revcumsum(g, d),)


@register("cumsum", methods=("cumsum",))
def cumsum(x: Tensor, dim=None, *, dtype=None, axis=None) -> Tensor:
    """Running sums along ``dim``: ``z_i = x_0 + ... + x_i`` (ints accumulate in int64)."""
    d = _scan_dim(x, dim, axis, "cumsum")
    dtype = _dtype_arg(x, dtype)
    data = x._data.astype(dtype, copy=False)
    return make(data.cumsum(axis=d) if data.ndim else data.copy(), (x,), cumsum_backward, d)


# ---------------------------------------------------------------------------
# cumprod
# ---------------------------------------------------------------------------


@rule("cumprod", reads=(0, "out"))
def cumprod_backward(g, out, ins, node):
    """z_j = prod_{k <= j} a_k:  grad_i = sum_{j >= i} g_j prod_{k <= j, k != i} a_k.

    Without zeros in a: grad = revcumsum(g z) / a.  With zeros, written
    without division: grad_i = (prod_{k < i} a_k) S_i, where
    S_i = sum_{j >= i} g_j prod_{i < k <= j} a_k is the backward recurrence
    S_{n-1} = g_{n-1},  S_i = g_i + a_{i+1} S_{i+1}.
    """
    (a,) = ins
    d = node._ctx
    if g.ndim == 0:
        return (g,)
    a_data = a._data if isinstance(a, Tensor) else a
    if (a_data != 0).all():
        return (_revcumsum(g * out, d) / a,)
    n = a.shape[d]
    s = [None] * n
    s[n - 1] = _part(g, d, n - 1, n)
    for i in range(n - 2, -1, -1):
        s[i] = _part(g, d, i, i + 1) + _part(a, d, i + 1, i + 2) * s[i + 1]
    return (_exclusive_cumprod(a, d) * _cat(s, d),)


@register("cumprod", methods=("cumprod",))
def cumprod(x: Tensor, dim=None, *, dtype=None, axis=None) -> Tensor:
    """Running products along ``dim``: ``z_i = x_0 * ... * x_i`` (ints accumulate in int64)."""
    d = _scan_dim(x, dim, axis, "cumprod")
    data = x._data.astype(_dtype_arg(x, dtype), copy=False)
    with quiet():
        result = data.cumprod(axis=d) if data.ndim else data.copy()
    return make(result, (x,), cumprod_backward, d)


# ---------------------------------------------------------------------------
# prod
# ---------------------------------------------------------------------------


@rule("prod", reads=(0,))
def prod_backward(g, out, ins, node):
    """z = prod_k a_k:  dz/da_i = prod_{k != i} a_k = (prod_{k < i} a_k) (prod_{k > i} a_k).

    (Exact when some a_k are zero: one zero gets the product of the others,
    everything else 0; two or more zeros give 0 everywhere.)
    """
    (a,) = ins
    d, keepdim = node._ctx
    shape = a.shape
    if d is None:  # the whole tensor: work on it flattened
        flat = a.reshape(-1)
        if flat.shape[0] == 0:
            return (g * a,)  # no elements, no gradient (shape ())
        others = _exclusive_cumprod(flat, 0) * _flip(_exclusive_cumprod(_flip(flat, 0), 0), 0)
        return ((g * others).reshape(shape),)
    if not keepdim:
        g = g.reshape(shape[:d] + (1,) + shape[d + 1:])
    if shape[d] == 0:
        return (g * a,)
    others = _exclusive_cumprod(a, d) * _flip(_exclusive_cumprod(_flip(a, d), d), d)
    return (g * others,)


#: the same rule along one dim, which PyTorch numbers 1
_PROD_DIM = Rule("prod", prod_backward.backward, reads=(0,), shows=shown_as("ProdBackward1"))


@register("prod", methods=("prod",))
def prod(x: Tensor, dim=None, keepdim: bool = False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
    """Product of all elements, or along one ``dim`` (ints multiply in int64, as PyTorch)."""
    dim = pick(dim, axis, None, "dim", "axis", "prod")
    keepdim = bool(keepdim if keepdims is None else keepdims)
    data = x._data.astype(_dtype_arg(x, dtype), copy=False)
    if dim is None:
        with quiet():
            return make(data.prod(), (x,), prod_backward, (None, False))  # make() turns a NumPy scalar to 0-d
    try:
        operator.index(dim)
    except TypeError:
        raise TypeError(f"prod: dim must be an int (one dimension, as in PyTorch), got {dim!r}") from None
    if data.ndim == 0:
        if dim not in (0, -1):
            raise IndexError(f"prod: dim {dim} out of range for a 0-d tensor")
        return make(data.copy(), (x,), prod_backward, (None, False))
    d = normalize_dim(dim, data.ndim, "prod")
    with quiet():
        result = data.prod(axis=d, keepdims=keepdim)
    return make(result, (x,), _PROD_DIM, (d, keepdim))

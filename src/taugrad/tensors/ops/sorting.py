"""Sorting and searching: ``sort``, ``argsort``, ``topk``, ``unique``.

``sort`` and ``topk`` pick elements of ``x`` along one dimension, so their
rule puts each gradient back where its element came from: with the picked
positions written as an index key ``key`` (``values = x[key]``),

    grad_x = zeros(x.shape);  grad_x[key] = g

(no position is picked twice).  On Tensors (``create_graph=True``) that is the
differentiable ``index_scatter`` op, so the rules have second derivatives.
"""
from __future__ import annotations

import operator
from collections import namedtuple

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.core.node import Tensor, array_module, constant, make
from taugrad.tensors.core.rule import register, rule

#: what ``sort`` and ``topk`` return, like ``torch.return_types.sort``
ValuesIndices = namedtuple("ValuesIndices", "values indices")


def along_key(indices, d: int) -> tuple:
    """The index key picking ``x[..., indices[i], ...]`` along dim ``d`` (NumPy's take_along_axis).

    Every other dim ``j`` indexes itself (an ``arange`` shaped to broadcast),
    so ``x[key][i] == x[i with i_d replaced by indices[i]]``.
    """
    xp = array_module(indices)
    ndim = indices.ndim
    key = []
    for j, n in enumerate(indices.shape):
        if j == d:
            key.append(indices)
        else:
            key.append(xp.arange(n).reshape(tuple(n if i == j else 1 for i in range(ndim))))
    return tuple(key)


def _put_back(g, x, node):
    """The gradient of picked elements, placed at the positions they were picked from."""
    return (A.scatter_add(g, node._ctx, x.shape, True),)


@rule("sort")
def sort_backward(g, out, ins, node):
    """z = a[key] (a permutation along dim):  grad_a[key] = g, as each element moved once."""
    return _put_back(g, ins[0], node)


@rule("topk")
def topk_backward(g, out, ins, node):
    """z = a[key] (the k picked elements):  grad_a[key] = g, zeros at the elements not picked."""
    return _put_back(g, ins[0], node)


def _argsort(data, d: int, descending: bool):
    """Stable sort order along ``d``; NaN counts as the largest value, as in PyTorch.

    Descending: sort the reversed array ascending and map back, which keeps
    equal elements in their original order (``argsort(-x)`` would not, and
    would move NaN to the end).
    """
    xp = array_module(data)
    if not descending:
        return xp.argsort(data, axis=d, kind="stable")
    n = data.shape[d]
    flipped = xp.flip(data, axis=d)
    order = xp.argsort(flipped, axis=d, kind="stable")
    return (n - 1) - xp.flip(order, axis=d)


def _dim(x: Tensor, dim, op: str) -> int:
    if x._data.ndim == 0:
        if dim not in (0, -1):
            raise IndexError(f"{op}: dim {dim} out of range for a 0-d tensor")
        return 0
    return normalize_dim(dim, x._data.ndim, op)


def _gathered(x: Tensor, order, d: int, rule_fn) -> ValuesIndices:
    if x._data.ndim == 0:  # a single element: itself, at index 0
        key = ()
        zero = array_module(x._data).zeros((), dtype=np.int64)
        return ValuesIndices(make(x._data.copy(), (x,), rule_fn, key), constant(zero))
    key = along_key(order, d)
    return ValuesIndices(make(x._data[key], (x,), rule_fn, key), constant(order.astype(np.int64, copy=False)))


@register("sort", methods=("sort",))
def sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> ValuesIndices:
    """``(values, indices)`` of ``x`` sorted along ``dim`` (ascending unless ``descending``).

    The sort is always stable (equal elements keep their order), which is one
    of the orders ``stable=False`` allows; NaN sorts as the largest value.
    """
    d = _dim(x, dim, "sort")
    if x._data.ndim == 0:
        return _gathered(x, None, 0, sort_backward)
    return _gathered(x, _argsort(x._data, d, bool(descending)), d, sort_backward)


@register("argsort", methods=("argsort",))
def argsort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``x`` along ``dim`` (``sort(...).indices``; int64, no gradient)."""
    d = _dim(x, dim, "argsort")
    if x._data.ndim == 0:
        return constant(array_module(x._data).zeros((), dtype=np.int64))
    return constant(_argsort(x._data, d, bool(descending)).astype(np.int64, copy=False))


@register("topk", methods=("topk",))
def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:
    """``(values, indices)`` of the ``k`` largest (or smallest) elements along ``dim``.

    They come sorted (largest first for ``largest=True``) whatever ``sorted``
    says; ties are taken in index order.  The gradient goes to the picked elements.
    """
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"topk: k must be an int, got {k!r}") from None
    d = _dim(x, dim, "topk")
    n = x._data.shape[d] if x._data.ndim else 1
    if not 0 <= k <= n:
        raise ValueError(f"topk: k ({k}) out of range for a dimension of size {n}")
    if x._data.ndim == 0:  # the element itself (for k = 0 too, as PyTorch)
        return _gathered(x, None, 0, topk_backward)
    order = _argsort(x._data, d, bool(largest))
    order = order[(slice(None),) * d + (slice(0, k),)]
    return _gathered(x, order, d, topk_backward)


@register("unique", methods=("unique",))
def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim=None):
    """The distinct elements of ``x`` (or distinct slices along ``dim``), in ascending order.

    With ``return_inverse``: also where each element of ``x`` went
    (``result[inverse] == x``), shaped as ``x`` (as the size of ``dim``);
    with ``return_counts``: how often each one occurs.  No gradient.
    """
    xp = array_module(x._data)
    data = x._data
    if dim is None:
        # equal_nan=False: every nan is its own element, as in torch (NumPy collapses them by default)
        values, inverse, counts = xp.unique(data.reshape(-1), return_inverse=True, return_counts=True,
                                            equal_nan=False)
        inverse = inverse.reshape(data.shape)
    else:
        d = normalize_dim(dim, data.ndim, "unique")
        values, inverse, counts = xp.unique(data, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
    result = [constant(values)]
    if return_inverse:
        result.append(constant(inverse.astype(np.int64, copy=False)))
    if return_counts:
        result.append(constant(counts.astype(np.int64, copy=False)))
    return result[0] if len(result) == 1 else tuple(result)


@register("searchsorted")
def searchsorted(sorted_sequence: Tensor, values, *, out_int32: bool = False, right: bool = False, side=None,
                 sorter=None) -> Tensor:
    """Where each of ``values`` would be inserted into the ascending 1-D ``sorted_sequence`` to keep it
    sorted: the first such place, or the last with ``right=True`` (``side='right'``)."""
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ValueError("searchsorted: right=True and side='left' disagree")
        right = side == "right"
    seq = sorted_sequence._data
    if seq.ndim != 1:
        raise ValueError(f"searchsorted: only a 1-D sorted_sequence is supported, got shape {tuple(sorted_sequence.shape)}")
    xp = array_module(seq)
    v = values._data if isinstance(values, Tensor) else xp.asarray(values)
    order = None if sorter is None else (sorter._data if isinstance(sorter, Tensor) else xp.asarray(sorter))
    found = xp.searchsorted(seq, v, side="right" if right else "left", sorter=order)
    return constant(found.astype(xp.int32 if out_int32 else xp.int64, copy=False))


@register("bucketize")
def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each element of ``input`` between the ascending ``boundaries``: i with
    ``boundaries[i-1] < x <= boundaries[i]`` (``<=`` and ``<`` swapped with ``right=True``)."""
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)

"""Triangular parts of matrices: ``tril`` and ``triu``.

Both keep the elements on one side of a diagonal of the last two dimensions
and zero the others, so the rule keeps the same elements of the gradient:
``grad = where(mask, g, 0)`` with the same constant mask.
"""
from __future__ import annotations

import operator

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.node import Tensor, array_module, constant, make
from taugrad.tensors.core.rule import register, rule


def _mask(x: Tensor, diagonal, upper: bool, op: str):
    """True where ``tril``/``triu`` keeps an element of the last two dims (broadcasts over the rest)."""
    if x._data.ndim < 2:
        raise ValueError(f"{op}: needs a tensor of at least 2 dimensions, got shape {tuple(x.shape)}")
    try:
        k = operator.index(diagonal)
    except TypeError:
        raise TypeError(f"{op}: diagonal must be an int, got {diagonal!r}") from None
    xp = array_module(x._data)
    n, m = x._data.shape[-2:]
    col_minus_row = xp.arange(m)[None, :] - xp.arange(n)[:, None]
    return col_minus_row >= k if upper else col_minus_row <= k


@rule("tril")
def tril_backward(g, out, ins, node):
    """z = a where mask else 0 (mask: the lower triangle):  dz/da = mask."""
    return (A.where(node._ctx, g, 0.0),)


@rule("triu")
def triu_backward(g, out, ins, node):
    """z = a where mask else 0 (mask: the upper triangle):  dz/da = mask."""
    return (A.where(node._ctx, g, 0.0),)


def _triangle(x: Tensor, diagonal, upper: bool, op: str) -> Tensor:
    mask = _mask(x, diagonal, upper, op)
    data = array_module(x._data).where(mask, x._data, 0).astype(x._data.dtype, copy=False)
    return make(data, (x,), triu_backward if upper else tril_backward, mask)


@register("tril", methods=("tril",))
def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims: elements with ``col - row <= diagonal``, zeros elsewhere.

    ``diagonal=0`` keeps the main diagonal, ``-1`` starts below it, ``1`` above.
    """
    return _triangle(x, diagonal, False, "tril")


@register("triu", methods=("triu",))
def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims: elements with ``col - row >= diagonal``, zeros elsewhere."""
    return _triangle(x, diagonal, True, "triu")


@register("nonzero", methods=("nonzero",))
def nonzero(x: Tensor, *, as_tuple: bool = False):
    """The indices of the nonzero elements: an (n, ndim) int64 tensor, or with ``as_tuple`` one
    int64 index tensor per dimension (a 0-d tensor counts as one of shape (1,), as torch)."""
    data = x._data
    xp = array_module(data)
    found = xp.nonzero(data.reshape(1) if data.ndim == 0 else data)
    found = tuple(i.astype(xp.int64, copy=False) for i in found)
    if as_tuple:
        return tuple(constant(i) for i in found)
    if data.ndim == 0:
        return constant(xp.zeros((found[0].shape[0], 0), dtype=xp.int64))
    return constant(xp.stack(found, axis=1))


@register("argwhere", methods=("argwhere",))
def argwhere(x: Tensor) -> Tensor:
    """The (n, ndim) int64 indices of the nonzero elements: ``nonzero(x)``, as ``torch.argwhere``."""
    return nonzero(x)

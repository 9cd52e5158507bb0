r"""Cholesky factor and triangular solves, as differentiable ops for the multivariate normal.

* ``cholesky(A) = L`` with ``A = L L^T``, ``L`` lower triangular.  Backward
  (Murray, 2016): ``P = Phi(L^T G)`` (lower triangle, diagonal halved),
  ``S = L^{-T} P L^{-1}``, ``dA = (S + S^T) / 2``.
* ``solve_triangular(L, B) = X`` with ``L X = B``.  Backward:
  ``dB = L^{-T} G``,  ``dL = -tril(dB X^T)``.

Both are differentiable once (their backward runs on arrays).
"""
from __future__ import annotations

from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.custom_function import Function, once_differentiable

__all__ = ["cholesky", "solve_triangular"]


def _t(a):
    return array_module(a).swapaxes(a, -1, -2)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, a: Tensor):
        xp = array_module(a._data)
        try:
            low = xp.linalg.cholesky(a._data)
        except Exception as error:  # NumPy's LinAlgError, or the device library's
            raise ValueError(f"cholesky: the input is not positive-definite ({error})") from None
        ctx.low = low
        return Tensor(low)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        low = ctx.low
        xp = array_module(low)
        p = xp.tril(_t(low) @ g._data)
        n = p.shape[-1]
        idx = xp.arange(n)
        p[..., idx, idx] *= 0.5
        x = xp.linalg.solve(_t(low), p)           # L^{-T} P
        s = _t(xp.linalg.solve(_t(low), _t(x)))   # (L^{-T} (L^{-T} P)^T)^T = L^{-T} P L^{-1}
        return Tensor(0.5 * (s + _t(s)))


class _SolveTriangular(Function):
    @staticmethod
    def forward(ctx, low: Tensor, b: Tensor):
        xp = array_module(low._data)
        x = xp.linalg.solve(low._data, b._data)
        ctx.arrays = (low._data, x)
        return Tensor(x)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        low, x = ctx.arrays
        xp = array_module(low)
        db = xp.linalg.solve(_t(low), g._data)
        dl = -xp.tril(db @ _t(x))
        return Tensor(dl), Tensor(db)


def cholesky(a: Tensor) -> Tensor:
    """The lower Cholesky factor of a (batch of) symmetric positive-definite matrices."""
    return _Cholesky.apply(a)


def solve_triangular(low: Tensor, b: Tensor) -> Tensor:
    """``X`` with ``low @ X = b`` for lower-triangular ``low`` (same batch shape; ``b`` is (..., n, m))."""
    return _SolveTriangular.apply(low, b)

r"""Multivariate normal ``N(loc, Sigma)``, parameterised by ``covariance_matrix``, ``precision_matrix``
(``Sigma^{-1}``) or the Cholesky factor ``scale_tril`` of ``Sigma``.

With ``Sigma = L L^T`` (``L = scale_tril``) and ``k`` the dimension::

    log p(x) = -(k log(2 pi) + |L^{-1} (x - loc)|^2) / 2 - sum_i log L_ii
    H        = k (1 + log(2 pi)) / 2 + sum_i log L_ii
    rsample  = loc + L eps,  eps ~ N(0, I)
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from taugrad.distributions import constraints
from taugrad.distributions.distribution import Distribution, draw, lazy_property
from taugrad.distributions.triangular import cholesky, solve_triangular
from taugrad.tensors.core.node import Tensor

__all__ = ["MultivariateNormal"]


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def batch_mahalanobis(low: Tensor, diff: Tensor) -> Tensor:
    """``|L^{-1} diff|^2`` over the last dimension, ``L`` broadcast to ``diff``'s batch."""
    k = diff.shape[-1]
    batch = np.broadcast_shapes(tuple(low.shape[:-2]), tuple(diff.shape[:-1]))
    low = low.expand(batch + (k, k))
    diff = diff.expand(batch + (k,))
    solved = solve_triangular(low, diff.unsqueeze(-1)).squeeze(-1)
    return (solved ** 2).sum(-1)


def _eye_like(matrix: Tensor) -> Tensor:
    k = matrix.shape[-1]
    return Tensor(np.eye(k, dtype=matrix._data.dtype)).to(matrix.device).expand(tuple(matrix.shape))


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    """``L`` with ``L L^T = P^{-1}``: from the Cholesky factor of ``P`` with rows and columns reversed
    (``flip(P) = F F^T`` gives ``P^{-1} = L L^T`` with ``L = (flip(F)^T)^{-1}``, lower triangular)."""
    low_f = cholesky(precision.flip((-2, -1)))
    low_inv = low_f.flip((-2, -1)).transpose(-2, -1)
    return solve_triangular(low_inv, _eye_like(low_inv))


def _half_log_det(low: Tensor) -> Tensor:
    return low.diagonal(dim1=-2, dim2=-1).log().sum(-1)


class MultivariateNormal(Distribution):
    r"""``N(loc, covariance_matrix)``, ``N(loc, precision_matrix^{-1})`` or ``N(loc, scale_tril scale_tril^T)``
    (exactly one of the three)."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: Any = None) -> None:
        loc = _tensor(loc)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        if scale_tril is not None:
            scale_tril = _tensor(scale_tril)
            if scale_tril.ndim < 2:
                raise ValueError("scale_tril matrix must be at least two-dimensional, with optional leading batch "
                                 "dimensions")
            matrix = scale_tril
        elif covariance_matrix is not None:
            covariance_matrix = _tensor(covariance_matrix)
            if covariance_matrix.ndim < 2:
                raise ValueError("covariance_matrix must be at least two-dimensional, with optional leading batch "
                                 "dimensions")
            matrix = covariance_matrix
        else:
            precision_matrix = _tensor(precision_matrix)
            if precision_matrix.ndim < 2:
                raise ValueError("precision_matrix must be at least two-dimensional, with optional leading batch "
                                 "dimensions")
            matrix = precision_matrix
        k = loc.shape[-1]
        if tuple(matrix.shape[-2:]) != (k, k):
            raise ValueError(f"MultivariateNormal: the matrix must be ({k}, {k}) to match loc, got "
                             f"{tuple(matrix.shape[-2:])}")
        batch_shape = tuple(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(batch_shape + (k, k))
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (k, k))
        else:
            self.precision_matrix = precision_matrix.expand(batch_shape + (k, k))
        self.loc = loc.expand(batch_shape + (k,))
        super().__init__(batch_shape, (k,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape * 2)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        low_inv = solve_triangular(self._unbroadcasted_scale_tril, _eye_like(self._unbroadcasted_scale_tril))
        return (low_inv.transpose(-1, -2) @ low_inv).expand(self._batch_shape + self._event_shape * 2)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        low = self._unbroadcasted_scale_tril
        return (low @ low.transpose(-1, -2)).expand(self._batch_shape + self._event_shape * 2)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (self._unbroadcasted_scale_tril ** 2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = draw(lambda g, s: g.standard_normal(s), shape, self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self) -> Tensor:
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h if not self._batch_shape else h.expand(self._batch_shape)

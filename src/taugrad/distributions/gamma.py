r"""Gamma and Beta distributions.

Gamma(concentration a, rate b) on ``x > 0``::

    log p(x) = a log b + (a - 1) log x - b x - lgamma(a)
    H        = a - log b + lgamma(a) + (1 - a) digamma(a)

Beta(a = concentration1, b = concentration0) on ``[0, 1]``::

    log p(x) = (a - 1) log x + (b - 1) log(1 - x) + lgamma(a + b) - lgamma(a) - lgamma(b)
    H        = lgamma(a) + lgamma(b) - lgamma(a + b) - (a - 1) psi(a) - (b - 1) psi(b) + (a + b - 2) psi(a + b)

``Gamma.rsample`` is ``z / rate`` with ``z`` a Gamma(a, 1) draw, and ``Beta.rsample`` a
Beta(a, b) draw; both are differentiated in their parameters by implicit
differentiation of their CDF at the drawn point (:mod:`taugrad.distributions.special`),
the gradient PyTorch approximates.
"""
from __future__ import annotations

import numbers
from typing import Any

from taugrad.distributions import constraints
from taugrad.distributions.distribution import Distribution, broadcast_all
from taugrad.distributions.special import digamma, lgamma, standard_beta, standard_gamma
from taugrad.tensors.core.node import Tensor

__all__ = ["Gamma", "Beta"]


def _xlogy(x: Tensor, y: Any) -> Tensor:
    """``x * log(y)``, 0 where ``x == 0`` (so a Gamma(1) density at 0 is finite)."""
    return x.xlogy(y)


class Gamma(Distribution):
    r"""Gamma distribution with shape ``concentration`` and inverse scale ``rate``; mean ``a / b``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: Any = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(() if scalar else tuple(self.concentration.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        z = standard_gamma(self.concentration, shape[:len(shape) - len(self._batch_shape)])
        return z / self.rate

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return _xlogy(a, b) + _xlogy(a - 1, value) - b * value - lgamma(a)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)


class Beta(Distribution):
    r"""Beta distribution with ``concentration1`` (a, the exponent of x) and ``concentration0`` (b, of 1 - x)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: Any = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        scalar = isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number)
        super().__init__(() if scalar else tuple(self.concentration1.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return (a - 1) / (a + b - 2)

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return standard_beta(self.concentration1, self.concentration0, shape[:len(shape) - len(self._batch_shape)])

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (_xlogy(a - 1, value) + _xlogy(b - 1, 1 - value) + lgamma(a + b) - lgamma(a) - lgamma(b))

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (lgamma(a) + lgamma(b) - lgamma(total) - (a - 1) * digamma(a) - (b - 1) * digamma(b)
                + (total - 2) * digamma(total))

r"""Continuous distributions on the real line with closed forms: Normal, Laplace, Uniform, Exponential.

=============  ====================================================  ==================================
               log density                                           reparameterised draw
=============  ====================================================  ==================================
Normal         -(x-\mu)^2 / (2\sigma^2) - log \sigma - log\sqrt{2\pi}  \mu + \sigma \epsilon,  \epsilon ~ N(0, 1)
Laplace        -log(2b) - |x - \mu| / b                                \mu - b sign(u) log(1 - |u|),  u ~ U(-1, 1)
Uniform        -log(high - low) on [low, high)                        low + u (high - low),  u ~ U(0, 1)
Exponential    log \lambda - \lambda x  (x >= 0)                       e / \lambda,  e ~ Exp(1)
=============  ====================================================  ==================================
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from taugrad.distributions import constraints
from taugrad.distributions.distribution import Distribution, broadcast_all, draw
from taugrad.tensors.core.node import Tensor

__all__ = ["Normal", "Laplace", "Uniform", "Exponential"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _shape_of(*params: Any) -> tuple:
    """PyTorch's batch shape: () when every parameter was a Python number."""
    if all(isinstance(p, numbers.Number) for p in params[1:]):
        return ()
    return tuple(params[0].shape)


class Normal(Distribution):
    r"""Normal (Gaussian) distribution ``N(loc, scale^2)``; ``rsample`` is ``loc + scale * eps``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: Any = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_shape_of(self.loc, loc, scale), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = draw(lambda g, s: g.standard_normal(s), self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - _HALF_LOG_2PI

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def entropy(self) -> Tensor:
        return 0.5 + _HALF_LOG_2PI + self.scale.log()


class Laplace(Distribution):
    r"""Laplace distribution, density ``exp(-|x - loc| / scale) / (2 scale)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: Any = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_shape_of(self.loc, loc, scale), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = float(np.finfo(self.loc._data.dtype).eps)
        # u in (-1, 1): -1 itself would give log(0)
        u = draw(lambda g, s: g.uniform(-1.0 + eps, 1.0, s), self._extended_shape(sample_shape), self.loc)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Uniform(Distribution):
    r"""Uniform distribution on ``[low, high)``; ``rsample`` is ``low + u (high - low)``."""

    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low: Any, high: Any, validate_args: Any = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(_shape_of(self.low, low, high), validate_args=validate_args)

    @constraints.dependent_property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return float("nan") * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = draw(lambda g, s: g.random(s), self._extended_shape(sample_shape), self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).type_as(self.low)
        ub = (self.high > value).type_as(self.low)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()


class Exponential(Distribution):
    r"""Exponential distribution with ``rate`` ``\lambda``: density ``\lambda exp(-\lambda x)`` on ``x >= 0``."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: Any = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, numbers.Number) else tuple(self.rate.shape),
                         validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return self.rate * 0

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        e = draw(lambda g, s: g.standard_exponential(s), self._extended_shape(sample_shape), self.rate)
        return e / self.rate

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

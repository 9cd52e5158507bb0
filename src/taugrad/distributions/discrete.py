r"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical.

Each takes ``probs`` or ``logits`` (exactly one); the other is computed when
first read.  For Categorical, ``logits`` are normalised log-probabilities
(``logits - logsumexp(logits)``), ``probs`` their softmax, and::

    log p(k) = logits[k],   H = -sum_k probs[k] logits[k]

Bernoulli: ``log p(x) = x l - softplus(l)``, ``H = softplus(l) - p l``
with ``l`` the logit.  There is no ``rsample``: a discrete draw has no
reparameterisation (use ``log_prob`` for score-function gradients, REINFORCE).
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from taugrad.distributions import constraints
from taugrad.distributions.distribution import (
    Distribution, broadcast_all, draw, lazy_property, logits_to_probs, probs_to_logits,
)
from taugrad.grad_mode import no_grad
from taugrad.tensors.core.node import Tensor
from taugrad.nn.functional import binary_cross_entropy_with_logits

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical"]


def _bce(logits: Tensor, target: Any) -> Tensor:
    """Elementwise ``softplus(l) - y l`` (binary cross-entropy with logits), broadcast; gradient
    ``sigmoid(l) - y`` for ``l`` (exact at 0 too) and ``-l`` for ``y``."""
    target = target if isinstance(target, Tensor) else logits.new_tensor(target)
    shape = np.broadcast_shapes(tuple(logits.shape), tuple(target.shape))
    if target.dtype != logits.dtype:
        target = target.to(logits.dtype)
    return binary_cross_entropy_with_logits(logits.expand(shape), target.expand(shape), reduction="none")


def _softplus(x: Tensor) -> Tensor:
    """``log(1 + exp(x))``, stable, with gradient ``sigmoid(x)``."""
    return _bce(x, x.new_zeros(tuple(x.shape)))


def _one_of(probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Bernoulli(Distribution):
    r"""``P(x = 1) = probs = sigmoid(logits)``; values 0 or 1 (in the parameter's dtype)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Any = None) -> None:
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        param = self.probs if probs is not None else self.logits
        super().__init__(() if isinstance(given, numbers.Number) else tuple(param.shape),
                         validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple:
        param = self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]
        return tuple(param.shape)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            p = self.probs.expand(self._extended_shape(sample_shape))
            u = draw(lambda g, s: g.random(s), tuple(p.shape), p)
            return (u < p).to(p.dtype)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -_bce(self.logits, value)

    def entropy(self) -> Tensor:
        return _bce(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        like = self.probs if "probs" in self.__dict__ else self.logits
        values = Tensor(np.arange(2).astype(like._data.dtype).reshape((-1,) + (1,) * len(self._batch_shape)))
        return values.expand((2,) + self._batch_shape) if expand else values


class Categorical(Distribution):
    r"""One of ``K`` categories ``0 .. K-1`` with probabilities ``probs`` (the last dimension; normalised)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Any = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            probs = probs if isinstance(probs, Tensor) else Tensor(probs)
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            logits = logits if isinstance(logits, Tensor) else Tensor(logits)
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(tuple(self._param.shape[:-1]), validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @constraints.dependent_property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> tuple:
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        return self.probs.new_full(self._extended_shape(), float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.probs.new_full(self._extended_shape(), float("nan"))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Draws by inverting the cumulative probabilities: ``k`` with ``cdf[k-1] <= u < cdf[k]``."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            probs = self.probs.detach().cpu().numpy()
        cdf = np.cumsum(probs, -1)
        cdf = cdf / cdf[..., -1:]
        u = draw(lambda g, s: g.random(s), shape, Tensor(np.zeros((), np.float64))).numpy()
        flat_cdf = np.broadcast_to(cdf, shape + (self._num_events,))
        k = (u[..., None] >= flat_cdf).sum(-1)
        k = np.minimum(k, self._num_events - 1).astype(np.int64)
        return Tensor(k).to(self._param.device)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = np.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape))
        log_pmf = self.logits.expand(shape)
        index = value.expand(shape[:-1] + (1,))
        return log_pmf.gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = float(np.finfo(self.logits._data.dtype).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = Tensor(np.arange(self._num_events, dtype=np.int64).reshape((-1,) + (1,) * len(self._batch_shape)))
        return values.expand((self._num_events,) + self._batch_shape) if expand else values


class OneHotCategorical(Distribution):
    r"""A Categorical draw as a one-hot vector of length ``K`` (``event_shape = (K,)``)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Any = None) -> None:
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(tuple(param.shape[:-1]), tuple(param.shape[-1:]), validate_args=validate_args)

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> tuple:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        k = probs.argmax(-1).detach().cpu().numpy()
        return Tensor(np.eye(self._event_shape[0], dtype=probs._data.dtype)[k]).to(probs.device)

    @property
    def variance(self) -> Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        probs = self._categorical.probs
        k = self._categorical.sample(sample_shape).cpu().numpy()
        return Tensor(np.eye(self._event_shape[0], dtype=probs._data.dtype)[k]).to(probs.device)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._event_shape[0]
        dtype = self._categorical._param._data.dtype
        values = Tensor(np.eye(n, dtype=dtype).reshape((n,) + (1,) * len(self._batch_shape) + (n,)))
        return values.expand((n,) + self._batch_shape + (n,)) if expand else values

r"""Special functions the Gamma family needs, as differentiable taugrad ops.

* ``lgamma(x) = log |Gamma(x)|``,  d/dx = ``digamma(x)``;
* ``digamma(x) = psi(x) = Gamma'(x) / Gamma(x)``,  d/dx = ``trigamma(x)``;
* ``trigamma(x) = psi'(x)`` (first order only);
* ``standard_gamma_grad(alpha, x)``: the derivative ``dx/dalpha`` of a
  Gamma(alpha, 1) draw ``x = F^{-1}(u; alpha)`` at fixed ``u`` (implicit
  reparameterisation): ``dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha)``.

psi and psi' use the recurrences ``psi(x) = psi(x + 1) - 1/x``,
``psi'(x) = psi'(x + 1) + 1/x^2`` up to ``x >= 10``, then their asymptotic
(Bernoulli-number) series, accurate there to about 1e-16 relative; below 1/2,
the reflection formulas.  ``lgamma`` is Python's ``math.lgamma`` per element.
"""
from __future__ import annotations

import math

import numpy as np

from taugrad.distributions.distribution import draw
from taugrad.tensors.core.backend import device_of, to_device
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.custom_function import Function, once_differentiable

__all__ = ["lgamma", "digamma", "trigamma", "standard_gamma_grad"]


def _host(x) -> np.ndarray:
    return np.asarray(to_device(x, device_of(np.zeros(0))) if not isinstance(x, np.ndarray) else x, dtype=np.float64)


def _back(values: np.ndarray, like) -> object:
    values = values.astype(like.dtype, copy=False)
    return values if isinstance(like, np.ndarray) else to_device(values, device_of(like))


def _lgamma_one(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole (0, -1, -2, ...)
        return math.inf


_lgamma_ufunc = np.frompyfunc(_lgamma_one, 1, 1)


def lgamma_array(x) -> np.ndarray:
    a = _host(x)
    return _back(np.asarray(_lgamma_ufunc(a), dtype=np.float64), x)


def digamma_array(x):
    a = _host(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = a < 0.5
        z = np.where(reflect, 1.0 - a, a)
        shift = np.zeros_like(z)
        for _ in range(10):  # psi(z) = psi(z + 1) - 1/z until z >= 10
            small = z < 10
            shift -= np.where(small, 1.0 / z, 0.0)
            z = np.where(small, z + 1.0, z)
        r = 1.0 / (z * z)
        series = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132 - r * (691 / 32760))))))
        psi = np.log(z) - 0.5 / z - series + shift
        # psi(1 - a) - psi(a) = pi cot(pi a)
        psi = np.where(reflect, psi - math.pi / np.tan(math.pi * a), psi)
        psi = np.where((a <= 0) & (a == np.floor(a)), np.where(a == 0, -np.inf, np.nan), psi)
    return _back(psi, x)


def trigamma_array(x):
    a = _host(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = a < 0.5
        z = np.where(reflect, 1.0 - a, a)
        shift = np.zeros_like(z)
        for _ in range(10):  # psi'(z) = psi'(z + 1) + 1/z^2 until z >= 10
            small = z < 10
            shift += np.where(small, 1.0 / (z * z), 0.0)
            z = np.where(small, z + 1.0, z)
        r = 1.0 / (z * z)
        series = 1 / 6 - r * (1 / 30 - r * (1 / 42 - r * (1 / 30 - r * (5 / 66 - r * (691 / 2730)))))
        psi1 = 1.0 / z + 0.5 * r + series * r / z + shift
        # psi'(1 - a) + psi'(a) = pi^2 / sin^2(pi a)
        psi1 = np.where(reflect, (math.pi / np.sin(math.pi * a)) ** 2 - psi1, psi1)
        psi1 = np.where((a <= 0) & (a == np.floor(a)), np.inf, psi1)
    return _back(psi1, x)


class _Trigamma(Function):
    @staticmethod
    def forward(ctx, x: Tensor):
        return Tensor(trigamma_array(x._data))

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        raise NotImplementedError("the derivative of trigamma (polygamma(2, x)) is not implemented")


class _Digamma(Function):
    @staticmethod
    def forward(ctx, x: Tensor):
        ctx.save_for_backward(x)
        return Tensor(digamma_array(x._data))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _Trigamma.apply(x)


class _Lgamma(Function):
    @staticmethod
    def forward(ctx, x: Tensor):
        ctx.save_for_backward(x)
        return Tensor(lgamma_array(x._data))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _Digamma.apply(x)


def lgamma(x: Tensor) -> Tensor:
    """``log |Gamma(x)|`` (inf at the poles); its derivative is :func:`digamma`."""
    return _Lgamma.apply(x)


def digamma(x: Tensor) -> Tensor:
    """``psi(x) = d/dx log Gamma(x)``; its derivative is :func:`trigamma`."""
    return _Digamma.apply(x)


def trigamma(x: Tensor) -> Tensor:
    """``psi'(x)``, differentiable once no further."""
    return _Trigamma.apply(x)


def standard_gamma_grad_array(alpha, x):
    r"""``dx/dalpha`` of a Gamma(alpha, 1) draw ``x``, by implicit differentiation of its CDF ``P(alpha, x)``.

    Below ``x = alpha + 1``, from the series ``P = e^{-x} x^a / Gamma(a + 1) S_0``,
    ``S_0 = sum_n x^n / ((a+1)...(a+n))`` and its derivative ``S_1`` in ``a``:
    ``dx/da = -(x / a) (S_0 (log x - psi(a + 1)) + S_1)``.  Above, from the
    continued fraction ``Gamma(a, x) = e^{-x} x^a / K`` of the upper tail
    ``Q = 1 - P`` (evaluated from its tail, with its derivative ``K'``):
    ``dx/da = (x / K) (log x - K'/K - psi(a))``.  Both avoid subtracting
    nearly equal probabilities.
    """
    a = np.broadcast_to(_host(alpha), np.broadcast_shapes(np.shape(alpha), np.shape(x))).astype(np.float64)
    v = np.broadcast_to(_host(x), a.shape).astype(np.float64)
    out = np.zeros(a.shape)
    lower = v < a + 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if lower.any():
            al, xl = a[lower], v[lower]
            term, dterm = np.ones_like(al), np.zeros_like(al)
            s0, s1 = np.ones_like(al), np.zeros_like(al)
            for n in range(1, 2000):
                ratio = xl / (al + n)
                dterm = (dterm - term / (al + n)) * ratio  # d/da of term_n = term_{n-1} x / (a + n)
                term = term * ratio
                s0 += term
                s1 += dterm
                if np.all(term <= 1e-17 * s0) and np.all(np.abs(dterm) <= 1e-17 * np.abs(s1) + 1e-300):
                    break
            out[lower] = -(xl / al) * (s0 * (np.log(xl) - digamma_array(al + 1.0)) + s1)
        upper = ~lower
        if upper.any():
            au, xu = a[upper], v[upper]
            depth = 400
            k = xu + 2 * depth + 1 - au  # b_N
            dk = -np.ones_like(au)
            for n in range(depth, 0, -1):
                b, db = xu + 2 * (n - 1) + 1 - au, -1.0
                an, dan = n * (n - au), -float(n)
                k, dk = b - an / k, db - (dan * k - an * dk) / (k * k)
            out[upper] = (xu / k) * (np.log(xu) - dk / k - digamma_array(au))
    return _back(out, x if not isinstance(x, (int, float)) else np.zeros(0))


class _StandardGamma(Function):
    """A Gamma(alpha, 1) draw, differentiable in ``alpha`` by implicit reparameterisation."""

    @staticmethod
    def forward(ctx, alpha: Tensor, sample_shape: tuple):
        shape = tuple(sample_shape) + tuple(alpha.shape)
        a = np.broadcast_to(_host(alpha._data), shape)
        x = draw(lambda g, s: g.standard_gamma(a, s), shape, alpha)
        tiny = float(np.finfo(alpha._data.dtype).tiny)
        x = x.clamp(min=tiny)  # as PyTorch: a draw that underflowed to 0 would have log density -inf
        ctx.save_for_backward(alpha, x)
        ctx.sample_dims = len(tuple(sample_shape))
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        alpha, x = ctx.saved_tensors
        grad = g._data * standard_gamma_grad_array(np.broadcast_to(_host(alpha._data), x.shape), x._data)
        if ctx.sample_dims:
            grad = grad.sum(tuple(range(ctx.sample_dims)))
        return Tensor(grad.astype(alpha._data.dtype, copy=False)), None


def standard_gamma(alpha: Tensor, sample_shape: tuple = ()) -> Tensor:
    """A draw of shape ``sample_shape + alpha.shape`` from Gamma(alpha, 1), reparameterised in ``alpha``."""
    return _StandardGamma.apply(alpha, tuple(sample_shape))


def standard_gamma_grad(alpha: Tensor, x: Tensor) -> Tensor:
    """``dx/dalpha`` of Gamma(alpha, 1) draws ``x`` (no graph); see :func:`standard_gamma_grad_array`."""
    return Tensor(standard_gamma_grad_array(alpha._data, x._data))

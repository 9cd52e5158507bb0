r"""Special functions the Gamma family needs, as differentiable taugrad ops.

* ``lgamma(x) = log |Gamma(x)|``,  d/dx = ``digamma(x)``;
* ``digamma(x) = psi(x) = Gamma'(x) / Gamma(x)``,  d/dx = ``trigamma(x)``;
* ``trigamma(x) = psi'(x)`` (first order only);
* ``standard_gamma_grad(alpha, x)``: the derivative ``dx/dalpha`` of a
  Gamma(alpha, 1) draw ``x = F^{-1}(u; alpha)`` at fixed ``u`` (implicit
  reparameterisation): ``dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha)``;
  ``beta_grad_array`` the same for a Beta(a, b) draw, in ``a`` and ``b``.

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

__all__ = ["lgamma", "digamma", "trigamma", "standard_gamma", "standard_gamma_grad", "standard_beta"]


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


def _beta_series(x, a, b):
    """``S = sum_n c_n x^n`` (``c_0 = 1``, ``c_n = c_{n-1} (a + b + n - 1) / (a + n)``) and its derivatives in
    ``a`` and ``b``: ``I_x(a, b) = x^a (1 - x)^b S / (a B(a, b))``."""
    term, da, db = np.ones_like(x), np.zeros_like(x), np.zeros_like(x)
    s, s_a, s_b = np.ones_like(x), np.zeros_like(x), np.zeros_like(x)
    for n in range(1, 20000):
        up = 1.0 / (a + b + n - 1)
        ratio = x * (a + b + n - 1) / (a + n)
        da = (da + term * (up - 1.0 / (a + n))) * ratio  # d/da of term_n = term_{n-1} * ratio
        db = (db + term * up) * ratio
        term = term * ratio
        s, s_a, s_b = s + term, s_a + da, s_b + db
        if np.all(term <= 1e-17 * s) and np.all(np.abs(da) <= 1e-17 * np.abs(s_a) + 1e-300) \
                and np.all(np.abs(db) <= 1e-17 * np.abs(s_b) + 1e-300):
            break
    return s, s_a, s_b


def beta_grad_array(x, a, b):
    r"""``(dx/da, dx/db)`` of a Beta(a, b) draw ``x`` at fixed ``u = I_x(a, b)`` (implicit reparameterisation).

    From the series ``I_x(a, b) = x^a (1 - x)^b S / (a B(a, b))`` (its
    derivatives ``S_a``, ``S_b`` summed alongside), with
    ``d log B / da = psi(a) - psi(a + b)``::

        dx/da = -(x (1 - x) / a) (S (log x - 1/a - psi(a) + psi(a + b)) + S_a)
        dx/db = -(x (1 - x) / a) (S (log(1 - x) - psi(b) + psi(a + b)) + S_b)

    Above the mean the series runs on ``1 - x`` with the parameters swapped
    (``I_x(a, b) = 1 - I_{1-x}(b, a)``), where it converges faster.
    """
    shape = np.broadcast_shapes(np.shape(x), np.shape(a), np.shape(b))
    x, a, b = (np.broadcast_to(_host(v), shape).astype(np.float64) for v in (x, a, b))
    flip = x > a / (a + b)
    p, q, y = np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1.0 - x, x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s, s_p, s_q = _beta_series(y, p, q)
        psi_pq = digamma_array(p + q)
        scale = -(y * (1.0 - y) / p)
        dy_dp = scale * (s * (np.log(y) - 1.0 / p - digamma_array(p) + psi_pq) + s_p)
        dy_dq = scale * (s * (np.log1p(-y) - digamma_array(q) + psi_pq) + s_q)
    # y = 1 - x when flipped, and (p, q) = (b, a) there
    dx_da = np.where(flip, -dy_dq, dy_dp)
    dx_db = np.where(flip, -dy_dp, dy_dq)
    return dx_da, dx_db


class _StandardBeta(Function):
    """A Beta(a, b) draw, differentiable in ``a`` and ``b`` by implicit reparameterisation."""

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor, sample_shape: tuple):
        shape = tuple(sample_shape) + tuple(a.shape)
        ah, bh = np.broadcast_to(_host(a._data), shape), np.broadcast_to(_host(b._data), shape)
        x = draw(lambda g, s: g.beta(ah, bh, s), shape, a)
        info = np.finfo(a._data.dtype)
        # a draw rounded to 0 or 1 has log density -inf and no finite gradient: kept just inside, as PyTorch
        x = x.clamp(min=float(info.tiny), max=1.0 - float(info.epsneg))
        ctx.save_for_backward(a, b, x)
        ctx.sample_dims = len(tuple(sample_shape))
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        a, b, x = ctx.saved_tensors
        da, db = beta_grad_array(x._data, a._data, b._data)
        lead = tuple(range(ctx.sample_dims))
        grads = []
        for d, p in ((da, a), (db, b)):
            grad = _host(g._data) * d
            if lead:
                grad = grad.sum(lead)
            grads.append(Tensor(_back(grad, p._data)))
        return grads[0], grads[1], None


def standard_beta(a: Tensor, b: Tensor, sample_shape: tuple = ()) -> Tensor:
    """A draw of shape ``sample_shape + a.shape`` from Beta(a, b) (same shapes), reparameterised in both."""
    return _StandardBeta.apply(a, b, tuple(sample_shape))

"""Exponentials and logarithms: exp, exp2, expm1, log, log2, log10, log1p, and the log-odds logit.

Each op evaluates a ufunc of the tensor's array module (IEEE: log(0) = -inf,
log(-1) = nan, exp overflowing to inf, silently, as PyTorch); integer and bool
tensors give the default float dtype.  The rules are the textbook derivatives,
written so they also run on Tensors for ``create_graph=True``.
"""
from __future__ import annotations

import math

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.node import Tensor, array_module, make
from taugrad.tensors.core.rule import NEW, register, rule

_LN10 = math.log(10.0)
_LN2 = math.log(2.0)


@rule("exp", reads=("out",), gives=NEW)
def exp_backward(g, out, ins, node):
    """z = exp(a):  dz/da = exp(a) = z."""
    return (g * out,)


@register("exp", methods=("exp",))
def exp(a: Tensor) -> Tensor:
    """``e ** a``."""
    return make(A.float_data("exp", "exp", a), (a,), exp_backward)


@rule("log", reads=(0,), gives=NEW)
def log_backward(g, out, ins, node):
    """z = log(a):  dz/da = 1/a."""
    return (g / ins[0],)


@register("log", methods=("log",))
def log(a: Tensor) -> Tensor:
    """Natural logarithm (IEEE: log(0) = -inf, log(-1) = nan)."""
    return make(A.float_data("log", "log", a), (a,), log_backward)


@rule("log1p", reads=(0,), gives=NEW)
def log1p_backward(g, out, ins, node):
    """z = log(1 + a):  dz/da = 1/(1 + a)."""
    return (g / (1.0 + ins[0]),)


@register("log1p", methods=("log1p",))
def log1p(a: Tensor) -> Tensor:
    """``log(1 + a)``, accurate for small ``a``."""
    return make(A.float_data("log1p", "log1p", a), (a,), log1p_backward)


@rule("log10", reads=(0,), gives=NEW)
def log10_backward(g, out, ins, node):
    """z = log10(a) = ln(a) / ln(10):  dz/da = 1 / (a ln 10)."""
    return (g / (ins[0] * _LN10),)


@register("log10", methods=("log10",))
def log10(a: Tensor) -> Tensor:
    """Base-10 logarithm."""
    return A.unary("log10", "log10", a, log10_backward)


@rule("log2", reads=(0,), gives=NEW)
def log2_backward(g, out, ins, node):
    """z = log2(a) = ln(a) / ln(2):  dz/da = 1 / (a ln 2)."""
    return (g / (ins[0] * _LN2),)


@register("log2", methods=("log2",))
def log2(a: Tensor) -> Tensor:
    """Base-2 logarithm."""
    return A.unary("log2", "log2", a, log2_backward)


@rule("expm1", reads=("out",), gives=NEW)
def expm1_backward(g, out, ins, node):
    """z = exp(a) - 1:  dz/da = exp(a) = z + 1."""
    return (g * (out + 1.0),)


@register("expm1", methods=("expm1",))
def expm1(a: Tensor) -> Tensor:
    """``exp(a) - 1``, accurate for small ``a``."""
    return A.unary("expm1", "expm1", a, expm1_backward)


@rule("exp2", reads=("out",), gives=NEW)
def exp2_backward(g, out, ins, node):
    """z = 2^a:  dz/da = 2^a ln 2 = z ln 2."""
    return (g * (out * _LN2),)


@register("exp2", methods=("exp2",))
def exp2(a: Tensor) -> Tensor:
    """``2 ** a``."""
    return A.unary("exp2", "exp2", a, exp2_backward)


@rule("logit", reads=(0,), gives=NEW)
def logit_backward(g, out, ins, node):
    """z = log(a / (1 - a)):  dz/da = 1 / (a (1 - a)).

    With ``eps`` the input is first clamped to [eps, 1 - eps], so the gradient
    is 0 where the clamp acted (as PyTorch's rule).
    """
    a = ins[0]
    grad = g / (a * (1.0 - a))
    eps = node._ctx
    if eps is None:
        return (grad,)
    return (A.where((a < eps) | (a > 1.0 - eps), 0.0, grad),)


@register("logit", methods=("logit",))
def logit(a: Tensor, eps=None) -> Tensor:
    """The log-odds ``log(a / (1 - a))``, the inverse of ``sigmoid``; with ``eps``, ``a`` is first
    clamped to [eps, 1 - eps] (so 0 and 1 give finite values), as ``torch.logit``."""
    def log_odds(ad):
        xp = array_module(ad)
        if eps is not None:
            ad = xp.clip(ad, eps, 1.0 - eps)
        return xp.log(ad / (1.0 - ad))

    return A.unary("logit", log_odds, a, logit_backward, None if eps is None else float(eps))

"""Trigonometric and hyperbolic functions: sin, cos, tan, their inverses, atan2, sinh, cosh, tanh,
their inverses asinh, acosh, atanh, and degrees <-> radians.

Each op evaluates a ufunc of the tensor's array module (IEEE answers outside the
domain, silently, as PyTorch) and its rule is the textbook derivative, written
with operators and :mod:`~taugrad.tensors.ops.anyarray` so it also runs on
Tensors for ``create_graph=True``.
"""
from __future__ import annotations

import math

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import Tensor, array_module, make, operand
from taugrad.tensors.core.rule import NEW, register, rule

_RADIANS_PER_DEGREE = math.pi / 180.0
_DEGREES_PER_RADIAN = 180.0 / math.pi


def _sqrt(x):
    return x.sqrt() if isinstance(x, Tensor) else array_module(x).sqrt(x)


def _cosh(x):
    return x.cosh() if isinstance(x, Tensor) else array_module(x).cosh(x)


def _sinh(x):
    return x.sinh() if isinstance(x, Tensor) else array_module(x).sinh(x)


@rule("sin", reads=(0,), gives=NEW)
def sin_backward(g, out, ins, node):
    """z = sin(a):  dz/da = cos(a)."""
    a = ins[0]
    return (g * (a.cos() if isinstance(a, Tensor) else array_module(a).cos(a)),)


@register("sin", methods=("sin",))
def sin(a: Tensor) -> Tensor:
    return make(A.float_data("sin", "sin", a), (a,), sin_backward)


@rule("cos", reads=(0,), gives=NEW)
def cos_backward(g, out, ins, node):
    """z = cos(a):  dz/da = -sin(a)."""
    a = ins[0]
    return (-g * (a.sin() if isinstance(a, Tensor) else array_module(a).sin(a)),)


@register("cos", methods=("cos",))
def cos(a: Tensor) -> Tensor:
    return make(A.float_data("cos", "cos", a), (a,), cos_backward)


@rule("deg2rad", gives=NEW)
def deg2rad_backward(g, out, ins, node):
    """z = a pi / 180:  dz/da = pi / 180."""
    return (g * _RADIANS_PER_DEGREE,)


@register("deg2rad", methods=("deg2rad",))
def deg2rad(a: Tensor) -> Tensor:
    """Degrees to radians, ``a * pi / 180``."""
    return A.unary("deg2rad", lambda x: x * x.dtype.type(_RADIANS_PER_DEGREE), a, deg2rad_backward)


@rule("rad2deg", gives=NEW)
def rad2deg_backward(g, out, ins, node):
    """z = a 180 / pi:  dz/da = 180 / pi."""
    return (g * _DEGREES_PER_RADIAN,)


@register("rad2deg", methods=("rad2deg",))
def rad2deg(a: Tensor) -> Tensor:
    """Radians to degrees, ``a * 180 / pi``."""
    return A.unary("rad2deg", lambda x: x * x.dtype.type(_DEGREES_PER_RADIAN), a, rad2deg_backward)


@rule("tan", reads=("out",), gives=NEW)
def tan_backward(g, out, ins, node):
    """z = tan(a):  dz/da = 1 + tan(a)^2 = 1 + z^2."""
    return (g * (1.0 + out * out),)


@register("tan", methods=("tan",))
def tan(a: Tensor) -> Tensor:
    """Tangent."""
    return A.unary("tan", "tan", a, tan_backward)


@rule("asin", reads=(0,), gives=NEW)
def asin_backward(g, out, ins, node):
    """z = asin(a):  dz/da = 1 / sqrt(1 - a^2)."""
    a = ins[0]
    return (g / _sqrt(1.0 - a * a),)


@register("asin", methods=("asin", "arcsin"))
def asin(a: Tensor) -> Tensor:
    """Inverse sine (nan outside [-1, 1])."""
    return A.unary("asin", "arcsin", a, asin_backward)


@rule("acos", reads=(0,), gives=NEW)
def acos_backward(g, out, ins, node):
    """z = acos(a):  dz/da = -1 / sqrt(1 - a^2)."""
    a = ins[0]
    return (-g / _sqrt(1.0 - a * a),)


@register("acos", methods=("acos", "arccos"))
def acos(a: Tensor) -> Tensor:
    """Inverse cosine (nan outside [-1, 1])."""
    return A.unary("acos", "arccos", a, acos_backward)


@rule("atan", reads=(0,), gives=NEW)
def atan_backward(g, out, ins, node):
    """z = atan(a):  dz/da = 1 / (1 + a^2)."""
    a = ins[0]
    return (g / (1.0 + a * a),)


@register("atan", methods=("atan", "arctan"))
def atan(a: Tensor) -> Tensor:
    """Inverse tangent."""
    return A.unary("atan", "arctan", a, atan_backward)


@rule("sinh", reads=(0,), gives=NEW)
def sinh_backward(g, out, ins, node):
    """z = sinh(a):  dz/da = cosh(a)."""
    return (g * _cosh(ins[0]),)


@register("sinh", methods=("sinh",))
def sinh(a: Tensor) -> Tensor:
    """Hyperbolic sine."""
    return A.unary("sinh", "sinh", a, sinh_backward)


@rule("cosh", reads=(0,), gives=NEW)
def cosh_backward(g, out, ins, node):
    """z = cosh(a):  dz/da = sinh(a)."""
    return (g * _sinh(ins[0]),)


@register("cosh", methods=("cosh",))
def cosh(a: Tensor) -> Tensor:
    """Hyperbolic cosine."""
    return A.unary("cosh", "cosh", a, cosh_backward)


@rule("asinh", reads=(0,), gives=NEW)
def asinh_backward(g, out, ins, node):
    """z = asinh(a):  dz/da = 1 / sqrt(a^2 + 1)."""
    a = ins[0]
    return (g / _sqrt(a * a + 1.0),)


@register("asinh", methods=("asinh", "arcsinh"))
def asinh(a: Tensor) -> Tensor:
    """Inverse hyperbolic sine."""
    return A.unary("asinh", "arcsinh", a, asinh_backward)


@rule("acosh", reads=(0,), gives=NEW)
def acosh_backward(g, out, ins, node):
    """z = acosh(a), a >= 1:  dz/da = 1 / (sqrt(a - 1) sqrt(a + 1))  (inf at a = 1; nan below, as PyTorch)."""
    a = ins[0]
    return (g / (_sqrt(a - 1.0) * _sqrt(a + 1.0)),)


@register("acosh", methods=("acosh", "arccosh"))
def acosh(a: Tensor) -> Tensor:
    """Inverse hyperbolic cosine (nan below 1)."""
    return A.unary("acosh", "arccosh", a, acosh_backward)


@rule("atanh", reads=(0,), gives=NEW)
def atanh_backward(g, out, ins, node):
    """z = atanh(a), |a| < 1:  dz/da = 1 / (1 - a^2)."""
    a = ins[0]
    return (g / (1.0 - a * a),)


@register("atanh", methods=("atanh", "arctanh"))
def atanh(a: Tensor) -> Tensor:
    """Inverse hyperbolic tangent (+-inf at +-1, nan beyond)."""
    return A.unary("atanh", "arctanh", a, atanh_backward)


@rule("atan2", reads=(0, 1), gives=NEW)
def atan2_backward(g, out, ins, node):
    """z = atan2(a, b), the angle of the point (b, a):
    dz/da = b / (a^2 + b^2),  dz/db = -a / (a^2 + b^2)."""
    a, b = ins
    pa, pb = node._prev
    r2 = a * a + b * b
    return (A.sum_to(g * b / r2, a.shape) if pa.requires_grad else None,
            A.sum_to(-g * a / r2, b.shape) if pb.requires_grad else None)


@register("atan2", methods=("atan2", "arctan2"))
def atan2(a: Tensor, b) -> Tensor:
    """Elementwise angle of the point ``(b, a)`` in ``(-pi, pi]``, with broadcasting."""
    a = a if isinstance(a, Tensor) else operand(a, b)
    b = operand(b, a)
    try:
        ad, bd = A.float_arrays(a, b)
        with quiet():
            data = array_module(ad).arctan2(ad, bd)
    except ValueError:
        raise ValueError(f"atan2: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot broadcast") from None
    except TypeError:
        raise TypeError(f"atan2: not supported for {a.dtype} and {b.dtype} operands") from None
    return make(data, (a, b), atan2_backward)


@rule("tanh", reads=("out",), gives=NEW)
def tanh_backward(g, out, ins, node):
    """z = tanh(a):  dz/da = 1 - z^2."""
    return (g * (1.0 - out * out),)


@register("tanh", methods=("tanh",))
def tanh(a: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return make(A.float_data("tanh", "tanh", a), (a,), tanh_backward)

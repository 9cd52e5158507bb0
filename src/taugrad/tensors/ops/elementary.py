"""More elementary functions: logs and exponentials in other bases, powers,
trigonometric and hyperbolic functions, ``atan2`` and one-sided clamps.

Each op evaluates a NumPy ufunc on the tensor's array (IEEE answers outside the
domain, silently, as PyTorch) and its rule is the textbook derivative, written
with operators and :mod:`~taugrad.tensors.ops.anyarray` so it also runs on
Tensors for ``create_graph=True``.
"""
from __future__ import annotations

import math

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.dtypes import DEFAULT_FLOAT, float_input, result_type
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import Tensor, array_module, make, operand
from taugrad.tensors.core.rule import G_OR_NEW, NEW, forward_of, register, rule

_LN10 = math.log(10.0)
_LN2 = math.log(2.0)
_RADIANS_PER_DEGREE = math.pi / 180.0
_DEGREES_PER_RADIAN = 180.0 / math.pi


def _unary(op: str, ufunc, a: Tensor, rule_fn, ctx=None, floating: bool = True) -> Tensor:
    """``ufunc`` (the name of a ufunc of the array's module, or a function of the array) of ``a``.

    ``floating``: the function's values are not integers, so an integer or bool
    tensor gives the default float dtype, as PyTorch (NumPy would give float64,
    or float16 for bool).
    """
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(a).__name__}")
    ad = float_input(a._data) if floating else a._data
    if type(ufunc) is str:
        ufunc = getattr(array_module(ad), ufunc)
    try:
        with quiet():
            data = ufunc(ad)
    except TypeError:
        raise TypeError(f"{op}: not supported for a tensor of dtype {a.dtype}") from None
    return make(data, (a,), rule_fn, ctx)


def _sqrt(x):
    return x.sqrt() if isinstance(x, Tensor) else array_module(x).sqrt(x)


def _cos(x):
    return x.cos() if isinstance(x, Tensor) else array_module(x).cos(x)


def _cosh(x):
    return x.cosh() if isinstance(x, Tensor) else array_module(x).cosh(x)


def _sinh(x):
    return x.sinh() if isinstance(x, Tensor) else array_module(x).sinh(x)


# ---------------------------------------------------------------------------
# logs and exponentials
# ---------------------------------------------------------------------------


@rule("log10", reads=(0,), gives=NEW)
def log10_backward(g, out, ins, node):
    """z = log10(a) = ln(a) / ln(10):  dz/da = 1 / (a ln 10)."""
    return (g / (ins[0] * _LN10),)


@register("log10", methods=("log10",))
def log10(a: Tensor) -> Tensor:
    """Base-10 logarithm."""
    return _unary("log10", "log10", a, log10_backward)


@rule("log2", reads=(0,), gives=NEW)
def log2_backward(g, out, ins, node):
    """z = log2(a) = ln(a) / ln(2):  dz/da = 1 / (a ln 2)."""
    return (g / (ins[0] * _LN2),)


@register("log2", methods=("log2",))
def log2(a: Tensor) -> Tensor:
    """Base-2 logarithm."""
    return _unary("log2", "log2", a, log2_backward)


@rule("expm1", reads=("out",), gives=NEW)
def expm1_backward(g, out, ins, node):
    """z = exp(a) - 1:  dz/da = exp(a) = z + 1."""
    return (g * (out + 1.0),)


@register("expm1", methods=("expm1",))
def expm1(a: Tensor) -> Tensor:
    """``exp(a) - 1``, accurate for small ``a``."""
    return _unary("expm1", "expm1", a, expm1_backward)


@rule("exp2", reads=("out",), gives=NEW)
def exp2_backward(g, out, ins, node):
    """z = 2^a:  dz/da = 2^a ln 2 = z ln 2."""
    return (g * (out * _LN2),)


@register("exp2", methods=("exp2",))
def exp2(a: Tensor) -> Tensor:
    """``2 ** a``."""
    return _unary("exp2", "exp2", a, exp2_backward)


# ---------------------------------------------------------------------------
# powers
# ---------------------------------------------------------------------------


@rule("rsqrt", reads=("out",), gives=NEW)
def rsqrt_backward(g, out, ins, node):
    """z = a^(-1/2):  dz/da = -a^(-3/2) / 2 = -z^3 / 2."""
    return (g * (-0.5 * out * out * out),)


def _rsqrt_array(x):
    return 1 / array_module(x).sqrt(x)


@register("rsqrt", methods=("rsqrt",))
def rsqrt(a: Tensor) -> Tensor:
    """``1 / sqrt(a)`` (inf at 0, nan below, as IEEE and PyTorch)."""
    return _unary("rsqrt", _rsqrt_array, a, rsqrt_backward)


@rule("square", reads=(0,), gives=NEW)
def square_backward(g, out, ins, node):
    """z = a^2:  dz/da = 2a."""
    return (g * (2.0 * ins[0]),)


@register("square", methods=("square",))
def square(a: Tensor) -> Tensor:
    """``a * a`` (a bool tensor squares as int64, as PyTorch)."""
    if a._data.dtype.kind == "b":
        a = forward_of("long")(a)
    return _unary("square", "square", a, square_backward, floating=False)


@rule("frac", gives=G_OR_NEW)
def frac_backward(g, out, ins, node):
    """z = a - trunc(a):  dz/da = 1 (trunc is piecewise constant)."""
    return (g,)


@register("frac", methods=("frac",))
def frac(a: Tensor) -> Tensor:
    """The fractional part ``a - trunc(a)``, with ``a``'s sign (``frac(-1.5) = -0.5``), as ``torch.frac``."""
    if a._data.dtype.kind in "biu":
        raise TypeError(f"frac: not supported for a tensor of dtype {a.dtype} (integers have no fractional part)")
    return _unary("frac", lambda x: x - array_module(x).trunc(x), a, frac_backward)


# ---------------------------------------------------------------------------
# trigonometric and hyperbolic functions
# ---------------------------------------------------------------------------


@rule("deg2rad", gives=NEW)
def deg2rad_backward(g, out, ins, node):
    """z = a pi / 180:  dz/da = pi / 180."""
    return (g * _RADIANS_PER_DEGREE,)


@register("deg2rad", methods=("deg2rad",))
def deg2rad(a: Tensor) -> Tensor:
    """Degrees to radians, ``a * pi / 180``."""
    return _unary("deg2rad", lambda x: x * x.dtype.type(_RADIANS_PER_DEGREE), a, deg2rad_backward)


@rule("rad2deg", gives=NEW)
def rad2deg_backward(g, out, ins, node):
    """z = a 180 / pi:  dz/da = 180 / pi."""
    return (g * _DEGREES_PER_RADIAN,)


@register("rad2deg", methods=("rad2deg",))
def rad2deg(a: Tensor) -> Tensor:
    """Radians to degrees, ``a * 180 / pi``."""
    return _unary("rad2deg", lambda x: x * x.dtype.type(_DEGREES_PER_RADIAN), a, rad2deg_backward)


@rule("tan", reads=("out",), gives=NEW)
def tan_backward(g, out, ins, node):
    """z = tan(a):  dz/da = 1 + tan(a)^2 = 1 + z^2."""
    return (g * (1.0 + out * out),)


@register("tan", methods=("tan",))
def tan(a: Tensor) -> Tensor:
    """Tangent."""
    return _unary("tan", "tan", a, tan_backward)


@rule("asin", reads=(0,), gives=NEW)
def asin_backward(g, out, ins, node):
    """z = asin(a):  dz/da = 1 / sqrt(1 - a^2)."""
    a = ins[0]
    return (g / _sqrt(1.0 - a * a),)


@register("asin", methods=("asin", "arcsin"))
def asin(a: Tensor) -> Tensor:
    """Inverse sine (nan outside [-1, 1])."""
    return _unary("asin", "arcsin", a, asin_backward)


@rule("acos", reads=(0,), gives=NEW)
def acos_backward(g, out, ins, node):
    """z = acos(a):  dz/da = -1 / sqrt(1 - a^2)."""
    a = ins[0]
    return (-g / _sqrt(1.0 - a * a),)


@register("acos", methods=("acos", "arccos"))
def acos(a: Tensor) -> Tensor:
    """Inverse cosine (nan outside [-1, 1])."""
    return _unary("acos", "arccos", a, acos_backward)


@rule("atan", reads=(0,), gives=NEW)
def atan_backward(g, out, ins, node):
    """z = atan(a):  dz/da = 1 / (1 + a^2)."""
    a = ins[0]
    return (g / (1.0 + a * a),)


@register("atan", methods=("atan", "arctan"))
def atan(a: Tensor) -> Tensor:
    """Inverse tangent."""
    return _unary("atan", "arctan", a, atan_backward)


@rule("sinh", reads=(0,), gives=NEW)
def sinh_backward(g, out, ins, node):
    """z = sinh(a):  dz/da = cosh(a)."""
    return (g * _cosh(ins[0]),)


@register("sinh", methods=("sinh",))
def sinh(a: Tensor) -> Tensor:
    """Hyperbolic sine."""
    return _unary("sinh", "sinh", a, sinh_backward)


@rule("cosh", reads=(0,), gives=NEW)
def cosh_backward(g, out, ins, node):
    """z = cosh(a):  dz/da = sinh(a)."""
    return (g * _sinh(ins[0]),)


@register("cosh", methods=("cosh",))
def cosh(a: Tensor) -> Tensor:
    """Hyperbolic cosine."""
    return _unary("cosh", "cosh", a, cosh_backward)


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
        ad, bd = _float_arrays(a, b)
        with quiet():
            data = array_module(ad).arctan2(ad, bd)
    except ValueError:
        raise ValueError(f"atan2: shapes {a.shape} and {b.shape} cannot broadcast") from None
    except TypeError:
        raise TypeError(f"atan2: not supported for {a.dtype} and {b.dtype} operands") from None
    return make(data, (a, b), atan2_backward)


# ---------------------------------------------------------------------------
# one-sided clamps (the gradient is clip's)
# ---------------------------------------------------------------------------


@register("clamp_min", methods=("clamp_min",))
def clamp_min(a: Tensor, min) -> Tensor:
    """``max(a, min)``: :func:`~taugrad.clamp` with only a lower bound."""
    return forward_of("clip")(a, min=min)


@register("clamp_max", methods=("clamp_max",))
def clamp_max(a: Tensor, max) -> Tensor:
    """``min(a, max)``: :func:`~taugrad.clamp` with only an upper bound."""
    return forward_of("clip")(a, max=max)


# ---------------------------------------------------------------------------
# two-operand functions: logaddexp, hypot, xlogy, lerp
# ---------------------------------------------------------------------------


def _pair(op: str, a, b):
    """Both operands as Tensors (either may be a number), with torch's one-line errors."""
    a = a if isinstance(a, Tensor) else operand(a, b)
    return a, operand(b, a)


def _float_arrays(a: Tensor, b: Tensor):
    """The operands' arrays at PyTorch's result dtype for a function with non-integer values:
    promoted as torch promotes (int64 with float32 is float32), an integer result made the default float."""
    ad, bd = a._data, b._data
    d = ad.dtype if ad.dtype == bd.dtype else result_type(ad, bd)
    if d.kind in "biu":
        d = DEFAULT_FLOAT[0]
    # each straight to the result dtype: through the integer one, a -3 meeting uint8 would wrap to 253
    return ad.astype(d, copy=False), bd.astype(d, copy=False)


def _pair_data(op: str, ufunc: str, a: Tensor, b: Tensor):
    try:
        ad, bd = _float_arrays(a, b)
        with quiet():
            return getattr(array_module(ad), ufunc)(ad, bd)
    except ValueError:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} cannot broadcast") from None
    except TypeError:
        raise TypeError(f"{op}: not supported for {a.dtype} and {b.dtype} operands") from None


@rule("logaddexp", reads=(0, 1, "out"), gives=NEW)
def logaddexp_backward(g, out, ins, node):
    """z = log(e^a + e^b):  dz/da = e^(a - z),  dz/db = e^(b - z)  (each at most 1: no overflow)."""
    a, b = ins
    pa, pb = node._prev
    return (A.sum_to(g * A.exp(a - out), a.shape) if pa.requires_grad else None,
            A.sum_to(g * A.exp(b - out), b.shape) if pb.requires_grad else None)


@register("logaddexp", methods=("logaddexp",))
def logaddexp(a: Tensor, b) -> Tensor:
    """``log(exp(a) + exp(b))`` without overflow, with broadcasting."""
    a, b = _pair("logaddexp", a, b)
    return make(_pair_data("logaddexp", "logaddexp", a, b), (a, b), logaddexp_backward)


@rule("hypot", reads=(0, 1, "out"), gives=NEW)
def hypot_backward(g, out, ins, node):
    """z = sqrt(a^2 + b^2):  dz/da = a / z,  dz/db = b / z  (nan at the origin, as torch)."""
    a, b = ins
    pa, pb = node._prev
    return (A.sum_to(g * a / out, a.shape) if pa.requires_grad else None,
            A.sum_to(g * b / out, b.shape) if pb.requires_grad else None)


@register("hypot", methods=("hypot",))
def hypot(a: Tensor, b) -> Tensor:
    """``sqrt(a^2 + b^2)`` without overflow of the squares, with broadcasting."""
    a, b = _pair("hypot", a, b)
    return make(_pair_data("hypot", "hypot", a, b), (a, b), hypot_backward)


def _xlogy_zero(a, b):
    """Where ``a * log(b)`` is replaced by 0: ``a == 0`` and ``b`` not nan (a constant mask)."""
    ad = a._data if isinstance(a, Tensor) else a
    bd = b._data if isinstance(b, Tensor) else b
    return (ad == 0) & ~array_module(bd).isnan(bd)


@rule("xlogy", reads=(0, 1), gives=NEW)
def xlogy_backward(g, out, ins, node):
    """z = a log(b) (0 where a = 0):  dz/da = log(b) (0 where a = 0 and b <= 0),  dz/db = a / b."""
    a, b = ins
    pa, pb = node._prev
    grad_a = grad_b = None
    if pa.requires_grad:
        ad = a._data if isinstance(a, Tensor) else a
        bd = b._data if isinstance(b, Tensor) else b
        with quiet():
            grad_a = A.sum_to(A.where((ad == 0) & (bd <= 0), 0.0, g * A.log(b)), a.shape)
    if pb.requires_grad:
        grad_b = A.sum_to(g * a / b, b.shape)
    return grad_a, grad_b


@register("xlogy", methods=("xlogy",))
def xlogy(a: Tensor, b) -> Tensor:
    """``a * log(b)``, 0 where ``a == 0`` (unless ``b`` is nan), as ``torch.xlogy``: the
    entropy term ``p log p`` with ``p = 0`` counts as 0."""
    a, b = _pair("xlogy", a, b)
    try:
        ad, bd = _float_arrays(a, b)
        xp = array_module(ad)
        with quiet():
            data = xp.where(_xlogy_zero(ad, bd), 0.0, ad * xp.log(bd))
            data = data.astype(ad.dtype, copy=False)
    except ValueError:
        raise ValueError(f"xlogy: shapes {a.shape} and {b.shape} cannot broadcast") from None
    return make(data, (a, b), xlogy_backward)


@register("lerp", methods=("lerp",))
def lerp(start: Tensor, end, weight) -> Tensor:
    """``start + weight * (end - start)`` (``weight`` a number or a tensor), as ``torch.lerp``;
    composed, so the gradients are ``1 - weight``, ``weight`` and ``end - start``."""
    end = operand(end, start)
    sub, mul, add = forward_of("sub"), forward_of("mul"), forward_of("add")
    return add(start, mul(sub(end, start), weight))


# ---------------------------------------------------------------------------
# nan_to_num
# ---------------------------------------------------------------------------


@rule("nan_to_num", gives=NEW)
def nan_to_num_backward(g, out, ins, node):
    """z = x where x is finite, else a constant:  dz/dx = 1 where x is finite, else 0.  Applied as a
    product with the 0/1 mask (as torch), so a nan in g stays nan."""
    return (g * node._ctx,)


@register("nan_to_num", methods=("nan_to_num",))
def nan_to_num(x: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """nan, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (the dtype's largest and
    smallest finite values by default); the gradient flows to the finite elements only."""
    xd = x._data
    if xd.dtype.kind not in "fc":
        return forward_of("clone")(x)
    xp = array_module(xd)
    with quiet():
        data = xp.nan_to_num(xd, nan=nan, posinf=posinf, neginf=neginf)
    return make(data, (x,), nan_to_num_backward, xp.isfinite(xd).astype(xd.dtype))

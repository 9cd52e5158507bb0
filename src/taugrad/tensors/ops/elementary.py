"""More elementary functions: powers (rsqrt, square, frac), one-sided clamps, the
two-operand functions logaddexp, hypot, xlogy and lerp, and nan_to_num.

Each op evaluates a NumPy ufunc on the tensor's array (IEEE answers outside the
domain, silently, as PyTorch) and its rule is the textbook derivative, written
with operators and :mod:`~taugrad.tensors.ops.anyarray` so it also runs on
Tensors for ``create_graph=True``.
"""
from __future__ import annotations


from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import Tensor, array_module, make, operand
from taugrad.tensors.core.rule import G_OR_NEW, NEW, forward_of, register, rule, shown_as


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
    return A.unary("rsqrt", _rsqrt_array, a, rsqrt_backward)


@rule("square", reads=(0,), gives=NEW, shows=shown_as("PowBackward0"))
def square_backward(g, out, ins, node):
    """z = a^2:  dz/da = 2a."""
    return (g * (2.0 * ins[0]),)


@register("square", methods=("square",))
def square(a: Tensor) -> Tensor:
    """``a * a`` (a bool tensor squares as int64, as PyTorch)."""
    if a._data.dtype.kind == "b":
        a = forward_of("long")(a)
    return A.unary("square", "square", a, square_backward, floating=False)


@rule("frac", gives=G_OR_NEW)
def frac_backward(g, out, ins, node):
    """z = a - trunc(a):  dz/da = 1 (trunc is piecewise constant)."""
    return (g,)


@register("frac", methods=("frac",))
def frac(a: Tensor) -> Tensor:
    """The fractional part ``a - trunc(a)``, with ``a``'s sign (``frac(-1.5) = -0.5``), as ``torch.frac``."""
    if a._data.dtype.kind in "biu":
        raise TypeError(f"frac: not supported for a tensor of dtype {a.dtype} (integers have no fractional part)")
    return A.unary("frac", lambda x: x - array_module(x).trunc(x), a, frac_backward)


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


def _pair_data(op: str, ufunc: str, a: Tensor, b: Tensor):
    try:
        ad, bd = A.float_arrays(a, b)
        with quiet():
            return getattr(array_module(ad), ufunc)(ad, bd)
    except ValueError:
        raise ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot broadcast") from None
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
        ad, bd = A.float_arrays(a, b)
        xp = array_module(ad)
        with quiet():
            data = xp.where(_xlogy_zero(ad, bd), 0.0, ad * xp.log(bd))
            data = data.astype(ad.dtype, copy=False)
    except ValueError:
        raise ValueError(f"xlogy: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot broadcast") from None
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

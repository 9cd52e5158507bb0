"""Elementwise arithmetic, rounding, activations, where, casts and comparisons, and their local rules.

For ``z = f(a, b)`` broadcast to ``z.shape``, the chain rule gives
``grad_a = sum_to(g * dz/da, a.shape)``: every broadcast copy of an element of
``a`` contributed to the loss, so its gradient is the sum over the copies.

Python numbers as operands are kept as constants in ``_ctx`` (no Tensor made).
Result dtypes follow PyTorch's promotion (:mod:`taugrad.tensors.core.dtypes`):
operands of different dtypes are converted by ``promote`` first, only when
their dtypes differ, so same-dtype ops pay one identity test.
"""
from __future__ import annotations

import math

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.args import broadcast_error, integer_scalar
from taugrad.tensors.core.dtypes import as_dtype, float_input, promote, promote_number, result_type
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import ComplexGradError, array_module, check_same_device, constant, device_mismatch, make
from taugrad.tensors.core.node import is_sparse_operand, operand
from taugrad.tensors.core.node import Tensor, _dtype_of
from taugrad.tensors.core.rule import G_OR_NEW, NEW, Rule, forward_of, overwriting, register, rule, shown_as

_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_GELU_K = math.sqrt(2.0 / math.pi)  # tanh approximation constants
_GELU_C = 0.044715


def binary_error(op: str, a: Tensor, b, error: Exception) -> Exception:
    """One clear line for a failed binary op: shapes that cannot broadcast, or dtypes NumPy refuses."""
    if isinstance(error, ComplexGradError):  # already one clear line
        return error
    mixed = device_mismatch(op, a, b)
    if mixed is not None:
        return mixed
    if isinstance(error, ValueError) and isinstance(b, Tensor):
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            return broadcast_error(op, a, b)
    b_dtype = b.dtype if isinstance(b, Tensor) else type(b).__name__
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return TypeError(f"{op}: not supported for {a.dtype} and {b_dtype} operands ({reason})")


def number_in_dtype(b: int, a: Tensor) -> Tensor:
    """The Python int ``b`` in ``a``'s integer dtype, wrapped as C wraps it (uint8: -3 is 253), as a constant.

    torch computes ``a op b`` in ``a``'s dtype when ``b`` is a Python int and
    the result keeps that dtype (+ - * and comparisons): out-of-range numbers
    wrap there.  (Where the result is floating, as in atan2, they do not.)
    """
    xp = array_module(a._data)
    return constant(xp.asarray(b, dtype=xp.int64).astype(a._data.dtype))


def _binary_data(op: str, name: str, a: Tensor, b: Tensor):
    """The ufunc ``name`` of the array module (``xp.maximum``...) on the operands, promoted as torch."""
    ad, bd = a._data, b._data
    if ad.dtype is not bd.dtype:
        ad, bd = promote(ad, bd)
    try:
        with quiet():
            return getattr(array_module(ad), name)(ad, bd)
    except (ValueError, TypeError, OverflowError) as error:
        raise binary_error(op, a, b, error) from None


def _unary_data(op: str, name: str, a: Tensor):
    ad = a._data
    try:
        with quiet():
            return getattr(array_module(ad), name)(ad)
    except TypeError:
        raise TypeError(f"{op}: not supported for a tensor of dtype {a.dtype}") from None


# ---------------------------------------------------------------------------
# + - * / **
# ---------------------------------------------------------------------------


@rule("add", gives=G_OR_NEW)
def add_backward(g, out, ins, node):
    """z = a + b:  dz/da = 1,  dz/db = 1."""
    a, b = ins
    return A.sum_to(g, a.shape), A.sum_to(g, b.shape)


@rule("add", gives=G_OR_NEW)
def add_scalar_backward(g, out, ins, node):
    """z = a + c (c a number):  dz/da = 1."""
    return (g,)


@register("add", methods=("add", "__add__", "__radd__"))
def add(a: Tensor, b, *, alpha=1) -> Tensor:
    """``a + alpha * b`` with broadcasting (``alpha``: torch.add's scale of ``b``, default 1)."""
    if alpha != 1:
        b = _scaled(a, b, alpha, "add")
    try:
        if isinstance(b, Tensor):
            ad, bd = a._data, b._data
            if ad.dtype is not bd.dtype:
                ad, bd = promote(ad, bd)
            return make(ad + bd, (a, b), add_backward)
        if type(b) is int:
            return make(a._data + b, (a,), add_scalar_backward)
        if type(b) is float:
            return make(promote_number(a._data, b) + b, (a,), add_scalar_backward)
    except (ValueError, TypeError, OverflowError) as error:
        if type(b) is int and isinstance(error, OverflowError):  # int8 tensor + 1000: wraps, as torch
            return add(a, number_in_dtype(b, a))
        raise binary_error("add", a, b, error) from None
    if is_sparse_operand(b):  # dense + sparse is dense in torch: the sparse values added at their positions
        return add(a, b.to_dense())
    return add(a, operand(b, a))


@rule("sub", gives=G_OR_NEW)
def sub_backward(g, out, ins, node):
    """z = a - b:  dz/da = 1,  dz/db = -1."""
    a, b = ins
    return A.sum_to(g, a.shape), (A.sum_to(-g, b.shape) if node._prev[1].requires_grad else None)


@rule("sub", gives=G_OR_NEW)
def sub_scalar_backward(g, out, ins, node):
    """z = a - c (c a number):  dz/da = 1."""
    return (g,)


@rule("rsub", gives=NEW)
def rsub_scalar_backward(g, out, ins, node):
    """z = c - a:  dz/da = -1."""
    return (-g,)


@register("sub", methods=("sub", "subtract", "__sub__"))
def sub(a: Tensor, b, *, alpha=1) -> Tensor:
    """``a - alpha * b`` with broadcasting (``alpha``: torch.sub's scale of ``b``, default 1)."""
    if alpha != 1:
        b = _scaled(a, b, alpha, "sub")
    try:
        if isinstance(b, Tensor):
            ad, bd = a._data, b._data
            if ad.dtype is not bd.dtype:
                _refuse_bool_sub(ad, bd)
                ad, bd = promote(ad, bd)
            return make(ad - bd, (a, b), sub_backward)
        if type(b) is int or type(b) is float:
            _refuse_bool_sub(a._data, b)
            return make(promote_number(a._data, b) - b, (a,), sub_scalar_backward)
    except (ValueError, TypeError, OverflowError) as error:
        if type(b) is int and isinstance(error, OverflowError):  # int8 tensor + 1000: wraps, as torch
            return sub(a, number_in_dtype(b, a))
        raise binary_error("sub", a, b, error) from None
    if type(b) is bool:
        _refuse_bool_sub(a._data, b)
    return sub(a, operand(b, a))


def _scaled(a: Tensor, b, alpha, op: str):
    """``alpha * b`` for ``a + alpha * b``: computed in the result's dtype (as torch's one kernel does), recorded.

    An integral result with a floating ``alpha`` is refused, as in torch.
    """
    if isinstance(alpha, Tensor):
        alpha = alpha.item()
    b_dtype = b._data.dtype if isinstance(b, Tensor) else np.result_type(b)
    integral = a._data.dtype.kind in "biu" and b_dtype.kind in "biu"
    if integral and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not isinstance(b, Tensor):
        return b * alpha
    if b._data.dtype != a._data.dtype:
        b = b.to(result_type(a._data, b._data))
    return mul(b, alpha)


def _refuse_bool_sub(ad, b) -> None:
    """As torch: ``-`` with a bool and a non-floating operand is refused (no meaning for truth values).

    With a floating operand (``1.0 - mask``, as the rules write) it is computed; torch refuses that too.
    """
    kinds = ad.dtype.kind + ("b" if type(b) is bool else "f" if type(b) is float else
                             getattr(getattr(b, "dtype", None), "kind", "i"))
    if "b" in kinds and "f" not in kinds and "c" not in kinds:
        raise TypeError("sub: subtraction with a bool tensor is not supported; use ~ or logical_xor() instead")


@register("rsub", methods=("__rsub__",))
def rsub(a: Tensor, b) -> Tensor:
    """``b - a`` (Python's reflected subtraction)."""
    if type(b) is float or type(b) is int or type(b) is bool:
        _refuse_bool_sub(a._data, b)
        try:
            return make(b - promote_number(a._data, b), (a,), rsub_scalar_backward)
        except (TypeError, OverflowError) as error:  # e.g. an int too large for the dtype
            raise binary_error("sub", a, b, error) from None
    return sub(operand(b, a), a)


@rule("mul", reads=(0, 1), gives=NEW)
def mul_backward(g, out, ins, node):
    """z = a * b:  dz/da = b,  dz/db = a."""
    a, b = ins
    pa, pb = node._prev
    return (
        A.sum_to(g * b, a.shape) if pa.requires_grad else None,
        A.sum_to(g * a, b.shape) if pb.requires_grad else None,
    )


@rule("mul", gives=NEW)
def mul_scalar_backward(g, out, ins, node):
    """z = a * c:  dz/da = c."""
    return (g * node._ctx,)


@register("mul", methods=("mul", "multiply", "__mul__", "__rmul__"))
def mul(a: Tensor, b) -> Tensor:
    """``a * b`` with broadcasting."""
    try:
        if isinstance(b, Tensor):
            ad, bd = a._data, b._data
            if ad.dtype is not bd.dtype:
                ad, bd = promote(ad, bd)
            return make(ad * bd, (a, b), mul_backward)
        if type(b) is float or type(b) is int:
            return make(promote_number(a._data, b) * b, (a,), mul_scalar_backward, b)
    except (ValueError, TypeError, OverflowError) as error:
        if type(b) is int and isinstance(error, OverflowError):  # int8 tensor + 1000: wraps, as torch
            return mul(a, number_in_dtype(b, a))
        raise binary_error("mul", a, b, error) from None
    return mul(a, operand(b, a))


@rule("div", reads=(0, 1), gives=NEW)
def div_backward(g, out, ins, node):
    """z = a / b:  dz/da = 1/b,  dz/db = -a/b^2, computed as -(a/b)/b: b*b over- or underflows
    where a/b does not (1e-30/1e-30 in float32)."""
    a, b = ins
    pa, pb = node._prev
    return (
        A.sum_to(g / b, a.shape) if pa.requires_grad else None,
        A.sum_to(-g * (a / b / b), b.shape) if pb.requires_grad else None,
    )


@rule("div", gives=NEW)
def div_scalar_backward(g, out, ins, node):
    """z = a / c:  dz/da = 1/c."""
    return (g / node._ctx,)


@rule("rdiv", reads=(0,), gives=NEW)
def rdiv_scalar_backward(g, out, ins, node):
    """z = c / a:  dz/da = -c/a^2, computed as -(c/a)/a (a*a over- or underflows first)."""
    (a,) = ins
    return (-g * (node._ctx / a / a),)


@register("div", methods=("div", "__truediv__", "divide", "true_divide"))
def div(a: Tensor, b) -> Tensor:
    """``a / b`` (true division) with broadcasting."""
    try:
        with quiet():
            if isinstance(b, Tensor):
                ad, bd = a._data, b._data
                if ad.dtype is not bd.dtype:
                    ad, bd = promote(ad, bd)
                if ad.dtype.kind in "biu":  # true division of integers: the default float dtype
                    ad, bd = float_input(ad), float_input(bd)
                return make(ad / bd, (a, b), div_backward)
            if type(b) is float or type(b) is int:
                return make(float_input(a._data) / b, (a,), div_scalar_backward, b)
    except (ValueError, TypeError, OverflowError) as error:
        raise binary_error("div", a, b, error) from None
    return div(a, operand(b, a))


@register("rdiv", methods=("__rtruediv__",))
def rdiv(a: Tensor, b) -> Tensor:
    """``b / a`` (Python's reflected division)."""
    if type(b) is float or type(b) is int:
        try:
            with quiet():
                return make(b / float_input(a._data), (a,), rdiv_scalar_backward, b)
        except (TypeError, OverflowError) as error:  # e.g. an int too large for a float
            raise binary_error("div", a, b, error) from None
    return div(operand(b, a), a)


#: ``1 / a`` is ``rdiv`` with c = 1, under PyTorch's node name for it
_RECIPROCAL = Rule("reciprocal", rdiv_scalar_backward.backward, reads=(0,), gives=NEW)


@register("reciprocal", methods=("reciprocal",))
def reciprocal(a: Tensor) -> Tensor:
    """``1 / a`` (integers give the default float dtype, as torch; inf at 0):  dz/da = -1/a^2."""
    with quiet():
        return make(1.0 / float_input(a._data), (a,), _RECIPROCAL, 1.0)


# ---------------------------------------------------------------------------
# remainder, fmod, floor_divide
# ---------------------------------------------------------------------------
# a = q b + r with q an integer: remainder takes q = floor(a/b) (r has b's
# sign, Python's %), fmod q = trunc(a/b) (r has a's sign, C's fmod).  q is
# constant between its jumps, so dr/da = 1 and dr/db = -q, as torch.


def _quotient(a, b, xp_name: str):
    """``floor`` or ``trunc`` of ``a / b``: an array, or a constant Tensor on the create_graph path
    (q is piecewise constant, so it has no derivative to record)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        ad = a._data if isinstance(a, Tensor) else a
        bd = b._data if isinstance(b, Tensor) else b
        with quiet():
            return constant(getattr(array_module(ad), xp_name)(ad / bd))
    with quiet():
        return getattr(array_module(a), xp_name)(a / b)


class BoolOperandsError(NotImplementedError):
    """An arithmetic op torch does not define on two bool operands (``%``, ``//``, ``fmod``, ``**``)."""


class IntegerPowerError(ValueError, RuntimeError):
    """An integer to a negative integer power: torch's RuntimeError (a ValueError too, as NumPy's)."""


def _refuse_bool_pair(op: str, ad, bd) -> None:
    """Refuse ``op`` on two bool operands, as torch does (it has no bool kernel for them)."""
    if ad.dtype.kind == "b" and bd.dtype.kind == "b":
        raise BoolOperandsError(f'"{op}" not implemented for \'Bool\'')


def _integer_quotient_operands(op: str, a, b):
    """Both operands as Tensors; integer division by zero is refused (as torch), not NumPy's silent 0."""
    a = a if isinstance(a, Tensor) else operand(a, b)
    number = b
    b = operand(b, a)
    if type(number) is int and a._data.dtype.kind in "iu" and b._data.dtype != a._data.dtype:
        b = number_in_dtype(number, a)  # out of the dtype's range: wrapped, as torch computes in a's dtype
    bd = b._data
    _refuse_bool_pair(op, a._data, bd)
    if bd.dtype.kind in "biu" and a._data.dtype.kind in "biu" and bool((bd == 0).any()):
        raise ZeroDivisionError(f"{op}: integer division by zero")
    return a, b


@rule("remainder", reads=(0, 1), gives=NEW)
def remainder_backward(g, out, ins, node):
    """z = a - b floor(a/b):  dz/da = 1,  dz/db = -floor(a/b)."""
    a, b = ins
    pa, pb = node._prev
    return (A.sum_to(g * 1.0, a.shape) if pa.requires_grad else None,
            A.sum_to(-g * _quotient(a, b, "floor"), b.shape) if pb.requires_grad else None)


@register("remainder", methods=("remainder", "__mod__"))
def remainder(a: Tensor, b) -> Tensor:
    """Python's ``a % b`` elementwise: the result has the divisor's sign (``torch.remainder``)."""
    a, b = _integer_quotient_operands("remainder", a, b)
    data = _binary_data("remainder", "fmod", a, b)
    if data.dtype.kind == "f":  # fmod moved to the divisor's sign, as torch: -5 % 2.5 is -0.0 there, not 0.0
        bd = b._data.astype(data.dtype, copy=False)
        xp = array_module(data)
        with quiet():
            data = xp.where((data != 0) & ((bd < 0) != (data < 0)), data + bd, data)
    else:
        data = _binary_data("remainder", "remainder", a, b)
    return make(data, (a, b), remainder_backward)


@rule("fmod", reads=(0, 1), gives=NEW)
def fmod_backward(g, out, ins, node):
    """z = a - b trunc(a/b):  dz/da = 1,  dz/db = -trunc(a/b)."""
    a, b = ins
    pa, pb = node._prev
    return (A.sum_to(g * 1.0, a.shape) if pa.requires_grad else None,
            A.sum_to(-g * _quotient(a, b, "trunc"), b.shape) if pb.requires_grad else None)


@register("fmod", methods=("fmod",))
def fmod(a: Tensor, b) -> Tensor:
    """C's ``fmod`` elementwise: the result has the dividend's sign (``torch.fmod``)."""
    a, b = _integer_quotient_operands("fmod", a, b)
    return make(_binary_data("fmod", "fmod", a, b), (a, b), fmod_backward)


@register("floor_divide", methods=("floor_divide", "__floordiv__"))
def floor_divide(a: Tensor, b) -> Tensor:
    """``floor(a / b)`` elementwise (Python's ``//``), in the operands' promoted dtype.

    Piecewise constant: the result is a constant (no gradient), where torch
    records a node whose backward raises.
    """
    a, b = _integer_quotient_operands("floor_divide", a, b)
    return constant(_binary_data("floor_divide", "floor_divide", a, b))


@rule("pow", reads=(0, 1, "out"), gives=NEW)
def pow_backward(g, out, ins, node):
    """z = a ** b:  dz/da = b a^(b-1) (0 where b = 0: a^0 is constant, even at a = 0),
    dz/db = a^b log(a)  (0 where a = 0 and b >= 0, as PyTorch)."""
    a, b = ins
    pa, pb = node._prev
    grad_a = grad_b = None
    if pa.requires_grad:
        exponent_zero = (b._data if isinstance(b, Tensor) else b) == 0  # 0 * 0^-1 would be nan
        grad_a = A.sum_to(g * A.where(exponent_zero, 0.0, b * a ** (b - 1)), a.shape)
    if pb.requires_grad:
        zero_base = (a == 0) & (b >= 0)
        grad_b = A.sum_to(g * A.where(zero_base, 0.0, out * A.log(a)), b.shape)
    return grad_a, grad_b


@rule("pow", reads=(0, "out"), gives=G_OR_NEW)
def pow_scalar_backward(g, out, ins, node):
    """z = a ** c:  dz/da = c a^(c-1)."""
    (a,) = ins
    c = node._ctx
    if c == 0:
        return (g * 0.0,)
    if c == 1:
        return (g,)
    if c == 2:
        return (g * (2.0 * a),)
    if c == 0.5:  # a square root, so sqrt's rule (and PyTorch's answers at -0 and -inf)
        return (g / (2.0 * out),)
    return (g * (c * a ** (c - 1)),)


@rule("rpow", reads=("out",), gives=NEW)
def rpow_scalar_backward(g, out, ins, node):
    """z = c ** a:  dz/da = c^a log(c)."""
    c = node._ctx
    if c == 0:  # 0 ** a is constant (0) for a > 0; PyTorch uses 0 there too
        return (g * 0.0,)
    return (g * (out * math.log(c)) if c > 0 else g * (out * float("nan")),)


@register("pow", methods=("pow", "__pow__"))
def pow(a: Tensor, b) -> Tensor:
    """``a ** b`` with broadcasting."""
    if isinstance(b, Tensor):
        _refuse_bool_pair("pow", a._data, b._data)
        return make(_binary_data("pow", "power", a, b), (a, b), pow_backward)
    if type(b) is bool and a._data.dtype.kind == "b":  # torch: bool ** True is the tensor, ** False ones (bool)
        return constant(a._data.copy() if b else array_module(a._data).ones_like(a._data))
    if type(b) is float or type(b) is int:
        ad = a._data
        if type(b) is int and ad.dtype.kind == "b":  # torch: bool ** int is int64 (NumPy: int8)
            ad = ad.astype(np.int64)
        try:
            with quiet():
                data = promote_number(ad, b)**b
        except ValueError as error:  # integers to negative integer powers
            raise IntegerPowerError(f"pow: {error}") from None
        except (TypeError, OverflowError) as error:
            raise binary_error("pow", a, b, error) from None
        return make(data, (a,), pow_scalar_backward, b)
    return pow(a, operand(b, a))


@register("rpow", methods=("__rpow__",))
def rpow(a: Tensor, b) -> Tensor:
    """``b ** a`` (Python's reflected power)."""
    if type(b) is float or type(b) is int:
        try:
            with quiet():
                data = b**promote_number(a._data, b)
        except ValueError as error:  # integers to negative integer powers
            raise IntegerPowerError(f"pow: {error}") from None
        except (TypeError, OverflowError) as error:
            raise binary_error("pow", a, b, error) from None
        return make(data, (a,), rpow_scalar_backward, b)
    return pow(operand(b, a), a)


# ---------------------------------------------------------------------------
# unary functions
# ---------------------------------------------------------------------------


@rule("neg", gives=NEW)
def neg_backward(g, out, ins, node):
    """z = -a:  dz/da = -1."""
    return (-g,)


@register("neg", methods=("neg", "negative", "__neg__"))
def neg(a: Tensor) -> Tensor:
    """``-a``."""
    return make(_unary_data("neg", "negative", a), (a,), neg_backward)


@rule("sqrt", reads=("out",), gives=NEW)
def sqrt_backward(g, out, ins, node):
    """z = sqrt(a):  dz/da = 1/(2 sqrt(a)) = 1/(2z)."""
    return (g / (2.0 * out),)


@register("sqrt", methods=("sqrt",))
def sqrt(a: Tensor) -> Tensor:
    """Square root."""
    return make(A.float_data("sqrt", "sqrt", a), (a,), sqrt_backward)


@rule("abs", reads=(0,), gives=NEW)
def abs_backward(g, out, ins, node):
    """z = |a|:  dz/da = sign(a)  (0 at a = 0, as PyTorch)."""
    return (g * A.sign(ins[0]),)


@register("abs", methods=("abs", "absolute", "__abs__"))
def abs(a: Tensor) -> Tensor:
    """``|a|``."""
    return make(_unary_data("abs", "abs", a), (a,), abs_backward)


def _flat_backward(g, out, ins, node):
    """z = f(a) with f piecewise constant (sign, floor, ceil, trunc, round):  dz/da = 0
    wherever it exists, so the gradient is zero (as PyTorch, whose result still needs a gradient)."""
    return (A.zeros(g.shape, g),)


#: one rule per op, each under its own name in ``grad_fn`` (SignBackward0, FloorBackward0, ...)
_FLAT = {op: Rule(op, _flat_backward) for op in ("sign", "sgn", "floor", "ceil", "trunc", "round")}
_FLAT["round_decimals"] = Rule("round", _flat_backward, shows=shown_as("RoundBackward1"))  # torch's overload 1


def _flat(op: str, data, a: Tensor) -> Tensor:
    """A piecewise-constant op's result: recorded with a zero gradient for a floating input, as
    PyTorch records it (``x.floor().requires_grad`` is True there), else a constant."""
    if data.dtype.kind not in "fc":
        return constant(data)
    return make(data, (a,), _FLAT[op])


@register("sign", methods=("sign",))
def sign(a: Tensor) -> Tensor:
    """-1, 0 or 1 elementwise (0 for nan, and a bool tensor's own values, as PyTorch);
    piecewise constant, so its gradient is zero."""
    return _flat("sign", _sign_data(a), a)


def _sign_data(a: Tensor):
    """sign's values (a bool tensor's own, as a copy; nan gives 0)."""
    ad = a._data
    if ad.dtype.kind == "b":
        return ad.copy()
    data = _unary_data("sign", "sign", a)
    if data.dtype.kind in "fc":
        xp = array_module(data)
        data = xp.where(xp.isnan(data), data.dtype.type(0), data)
    return data


@register("sgn", methods=("sgn",))
def sgn(a: Tensor) -> Tensor:
    """``sign`` for a real tensor; ``a / |a|`` (0 at 0) for a complex one, as ``torch.sgn``.  Its
    gradient is zero for a real input; a complex input that requires grad is refused (see make)."""
    if a._data.dtype.kind != "c":
        return _flat("sgn", _sign_data(a), a)
    ad = a._data
    xp = array_module(ad)
    with quiet():
        size = xp.abs(ad)
        data = xp.where(size == 0, ad.dtype.type(0), ad / xp.where(size == 0, 1, size))
    return _flat("sgn", data, a)


def _rounded(op: str, name: str, a: Tensor):
    """``a`` rounded by the array module's ``name`` ufunc; integer and bool tensors are
    already whole, so they come back as a copy of their own dtype (NumPy would give floats)."""
    if a._data.dtype.kind in "iub":
        return a._data.copy()
    return _unary_data(op, name, a)


@register("floor", methods=("floor",))
def floor(a: Tensor) -> Tensor:
    """The largest whole number <= a, elementwise; piecewise constant, so its gradient is zero (as ``sign``)."""
    return _flat("floor", _rounded("floor", "floor", a), a)


@register("ceil", methods=("ceil",))
def ceil(a: Tensor) -> Tensor:
    """The smallest whole number >= a, elementwise; piecewise constant, so its gradient is zero."""
    return _flat("ceil", _rounded("ceil", "ceil", a), a)


@register("trunc", methods=("trunc", "fix"))
def trunc(a: Tensor) -> Tensor:
    """``a`` rounded toward zero, elementwise; piecewise constant, so its gradient is zero."""
    return _flat("trunc", _rounded("trunc", "trunc", a), a)


@register("round", methods=("round",))
def round(a: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - torch's name
    """``a`` rounded to ``decimals`` places, halves to even (as torch: 0.5 -> 0, 2.5 -> 2);
    piecewise constant, so its gradient is zero.  ``decimals != 0`` rounds ``a * 10**decimals`` and
    scales back, as torch does."""
    if decimals == 0 or a._data.dtype.kind in "iub":
        return _flat("round", _rounded("round", "rint", a), a)
    ad = a._data
    xp = array_module(ad)
    scale = ad.dtype.type(10.0 ** (decimals if decimals > 0 else -decimals))
    with quiet():
        data = xp.rint(ad * scale) / scale if decimals > 0 else xp.rint(ad / scale) * scale
    return _flat("round_decimals", data, a)


@rule("sigmoid", reads=("out",), gives=NEW)
def sigmoid_backward(g, out, ins, node):
    """z = 1/(1 + exp(-a)):  dz/da = z (1 - z)."""
    return (g * (out * (1.0 - out)),)


@register("sigmoid", methods=("sigmoid",))
def sigmoid(a: Tensor) -> Tensor:
    """Logistic function, computed without overflow for any input."""
    return make(A.float_data("sigmoid", A.sigmoid_array, a), (a,), sigmoid_backward)


@rule("relu", reads=("out",), gives=NEW)
def relu_backward(g, out, ins, node):
    """z = max(a, 0):  dz/da = 1 where z > 0, else 0 (and 1 at nan, as PyTorch).

    Read from the output, as PyTorch does, and the array the next layer's
    backward has just read (warm).  z is never negative, so "z > 0 or nan" is
    simply z != 0: one comparison.  Where z == 0 the gradient is +0, as
    PyTorch's ``where(z <= 0, 0, g)`` stores it (``g * mask`` would give -0
    for a negative g).
    """
    return (A.where(out != 0, g, 0.0),)


@overwriting(relu_backward)
def relu_backward_in_place(g, out, ins, node):
    """The same rule for a ``g`` the backward pass owns: written in place (no new array)."""
    if g.ndim and A.keep(out != 0, g, out=g) is not None:
        return (g,)
    return relu_backward.backward(g, out, ins, node)


@register("relu", methods=("relu",))
def relu(a: Tensor) -> Tensor:
    """``max(a, 0)`` elementwise."""
    try:  # no errstate needed: maximum passes nan through without a warning
        ad = a._data
        data = array_module(ad).maximum(ad, 0)
    except TypeError:
        raise TypeError(f"relu: not supported for a tensor of dtype {a.dtype}") from None
    return make(data, (a,), relu_backward)


@rule("gelu", reads=(0,), gives=NEW)
def gelu_backward(g, out, ins, node):
    """Exact:  z = a Phi(a)  =>  dz/da = Phi(a) + a phi(a)  (Phi, phi: normal cdf, pdf).

    tanh approximation:  z = a/2 (1 + tanh(u)), u = k (a + c a^3)
    =>  dz/da = (1 + t)/2 + a/2 (1 - t^2) k (1 + 3 c a^2), t = tanh(u).
    """
    (a,) = ins
    if node._ctx == "tanh":
        t = _tanh_any(_GELU_K * (a + _GELU_C * a * a * a))
        return (g * (0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * _GELU_K * (1.0 + 3.0 * _GELU_C * a * a)),)
    cdf = 0.5 * (1.0 + A.erf(a * (1.0 / _SQRT_2)))
    pdf = A.exp(-0.5 * a * a) * _INV_SQRT_2PI
    return (g * (cdf + a * pdf),)


def _tanh_any(x):
    return x.tanh() if isinstance(x, Tensor) else array_module(x).tanh(x)


@register("gelu", methods=("gelu",))
def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002 - torch's keyword name
    """Gaussian error linear unit ``a * Phi(a)`` (``approximate='tanh'``: the tanh form)."""
    a = input
    x = float_input(a._data)
    if approximate == "tanh":
        data = 0.5 * x * (1.0 + array_module(x).tanh(_GELU_K * (x + _GELU_C * x * x * x)))
    elif approximate == "none":
        data = 0.5 * x * (1.0 + A.erf_array(x * (1.0 / _SQRT_2)))
    else:
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return make(data, (a,), gelu_backward, approximate)


@rule("erf", reads=(0,), gives=NEW)
def erf_backward(g, out, ins, node):
    """z = erf(a):  dz/da = 2/sqrt(pi) exp(-a^2)."""
    a = ins[0]
    return (g * (_TWO_OVER_SQRT_PI * A.exp(-(a * a))),)


@register("erf", methods=("erf",))
def erf(a: Tensor) -> Tensor:
    """The error function."""
    return make(A.float_data("erf", A.erf_array, a), (a,), erf_backward)


# ---------------------------------------------------------------------------
# maximum, minimum, clip, where
# ---------------------------------------------------------------------------


@rule("maximum", reads=(0, 1), gives=NEW)
def maximum_backward(g, out, ins, node):
    """z = max(a, b): the gradient goes to the larger input, half to each on ties (PyTorch)."""
    a, b = ins
    return _winner_grads(g, a, b, a > b, a < b)


def _winner_grads(g, a, b, a_wins, b_wins):
    """``(dL/da, dL/db)`` of a max or min: ``g`` to the input that won, ``g / 2`` to each on a tie (both
    for a nan input), and a stored 0 to the one that lost, even for a nan or infinite ``g``, as PyTorch's
    ``masked_fill`` (``g * 0`` would give nan there)."""
    share = A.where(a == b, g * 0.5, g)
    return A.sum_to(A.where(b_wins, 0.0, share), a.shape), A.sum_to(A.where(a_wins, 0.0, share), b.shape)


@register("maximum", methods=("maximum",))
def maximum(a, b) -> Tensor:
    """Elementwise maximum with broadcasting (NaN propagates)."""
    a = a if isinstance(a, Tensor) else operand(a, b)
    b = operand(b, a)
    return make(_binary_data("maximum", "maximum", a, b), (a, b), maximum_backward)


@rule("minimum", reads=(0, 1), gives=NEW)
def minimum_backward(g, out, ins, node):
    """z = min(a, b): the gradient goes to the smaller input, half to each on ties (PyTorch)."""
    a, b = ins
    return _winner_grads(g, a, b, a < b, a > b)


@register("minimum", methods=("minimum",))
def minimum(a, b) -> Tensor:
    """Elementwise minimum with broadcasting (NaN propagates)."""
    a = a if isinstance(a, Tensor) else operand(a, b)
    b = operand(b, a)
    return make(_binary_data("minimum", "minimum", a, b), (a, b), minimum_backward)


@rule("clip", reads=(0,), gives=NEW, shows=shown_as("ClampBackward1"))
def clip_backward(g, out, ins, node):
    """z = clip(a, lo, hi):  dz/da = 1 where lo <= a <= hi, else 0 (a stored +0, even for a nan or
    infinite g, as PyTorch's ``where``; ``g * inside`` would give nan there)."""
    (a,) = ins
    lo, hi = node._ctx
    if lo is None:
        inside = a <= hi
    elif hi is None:
        inside = a >= lo
    else:
        inside = (a >= lo) & (a <= hi)
    return (A.sum_to(A.where(inside, g, 0.0), a.shape),)  # a tensor bound may broadcast ``a`` up


#: the same rule with tensor bounds, which PyTorch numbers 0 (number bounds are its overload 1)
_CLIP_TENSORS = Rule("clip", clip_backward.backward, reads=(0,), gives=NEW, shows=shown_as("ClampBackward0"))


@register("clip", methods=("clip", "clamp"))
def clip(a: Tensor, min=None, max=None) -> Tensor:
    """Limit values to ``[min, max]`` (either may be None); also ``clamp``."""
    if min is None and max is None:
        raise ValueError("clip: at least one of min and max must be given")
    rule_fn = _CLIP_TENSORS if isinstance(min, Tensor) or isinstance(max, Tensor) else clip_backward
    bounds = []
    for name, bound in (("min", min), ("max", max)):
        if isinstance(bound, Tensor):
            if bound.requires_grad:
                raise ValueError(f"clip: gradients with respect to {name} are not supported; use maximum/minimum")
            bound = bound._data
        bounds.append(bound)
    ad = a._data
    for i, bound in enumerate(bounds):  # a float bound makes an integer tensor floating, as torch
        if type(bound) is float:
            ad = promote_number(ad, bound)
        elif hasattr(bound, "dtype") and bound.dtype != ad.dtype:  # a tensor bound: torch's promotion
            ad, bounds[i] = promote(ad, bound)
    lo, hi = bounds
    xp = array_module(ad)
    try:
        if lo is None:
            data = xp.minimum(ad, hi)
        elif hi is None:
            data = xp.maximum(ad, lo)
        else:
            data = xp.minimum(xp.maximum(ad, lo), hi)
    except ValueError:
        raise ValueError(f"clip: bounds cannot broadcast to shape {tuple(a.shape)}") from None
    except TypeError:  # e.g. a string bound: NumPy's UFuncTypeError would name no argument
        raise TypeError(
            f"clip: min and max must be numbers or tensors, got {type(lo).__name__} and {type(hi).__name__}"
        ) from None
    return make(data, (a,), rule_fn, (lo, hi))


_MISSING = object()  # where(condition) alone: None is a value x may not take, but a marker is clearer


@rule("where")
def where_backward(g, out, ins, node):
    """z = where(c, x, y):  dz/dx = c,  dz/dy = not c  (c is a constant mask)."""
    c, x, y = ins
    _, px, py = node._prev
    return (
        None,
        A.sum_to(A.where(c, g, 0.0), x.shape) if px.requires_grad else None,
        A.sum_to(A.where(c, 0.0, g), y.shape) if py.requires_grad else None,
    )


@register("where")
def where(condition, x=_MISSING, y=_MISSING) -> Tensor:
    """Elementwise ``x if condition else y``, broadcasting all three.

    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``, as in torch.
    """
    if x is _MISSING and y is _MISSING:
        return forward_of("nonzero")(condition if isinstance(condition, Tensor) else Tensor(condition), as_tuple=True)
    if x is _MISSING or y is _MISSING:
        raise TypeError("where: expects a condition alone, or a condition, x and y")
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = Tensor(x)
    x = x if isinstance(x, Tensor) else operand(x, y)
    y = operand(y, x)
    cond = condition if isinstance(condition, Tensor) else constant(A.array_like(condition, x._data, np.asarray))
    if cond._data.dtype != np.bool_:
        cond = constant(cond._data.astype(bool))
    xd, yd = x._data, y._data
    if xd.dtype is not yd.dtype:
        xd, yd = promote(xd, yd)
    try:
        data = array_module(xd).where(cond._data, xd, yd)
    except ValueError:
        raise ValueError(
            f"where: shapes {tuple(cond.shape)}, {tuple(x.shape)} and {tuple(y.shape)} cannot broadcast"
        ) from None
    except TypeError:  # arrays of two devices
        check_same_device("where", cond, x, y)
        raise
    return make(data, (cond, x, y), where_backward)


# ---------------------------------------------------------------------------
# dtype and copies
# ---------------------------------------------------------------------------


@rule("astype", gives=NEW, shows=shown_as("ToCopyBackward0"))
def astype_backward(g, out, ins, node):
    """z = a converted to another float dtype:  dz/da = 1 (converted back)."""
    return (g.astype(ins[0].dtype),)


@register("astype", methods=("astype",))
def astype(a: Tensor, dtype) -> Tensor:
    """``a`` converted to ``dtype`` (also ``.to(dtype)``); gradients flow between float dtypes."""
    if isinstance(dtype, str) and dtype == "cpu":  # .to("cpu"): the only device there is
        return a
    dtype = _dtype_of(dtype)
    if dtype == a._data.dtype:
        return a
    if dtype.kind not in "biufc":  # object, string, datetime: not numbers, nothing to compute with
        raise TypeError(f"astype: a tensor holds numbers, not dtype {dtype}")
    data = a._data.astype(dtype)
    if dtype.kind not in "fc":
        return constant(data)
    return make(data, (a,), astype_backward)


@register("float", methods=("float",))
def to_float32(a: Tensor) -> Tensor:
    """``a.float()``: ``a`` as float32 (gradients flow back to a float dtype)."""
    return astype(a, np.float32)


@register("double", methods=("double",))
def to_float64(a: Tensor) -> Tensor:
    """``a.double()``: ``a`` as float64."""
    return astype(a, np.float64)


@register("half", methods=("half",))
def to_float16(a: Tensor) -> Tensor:
    """``a.half()``: ``a`` as float16."""
    return astype(a, np.float16)


@register("long", methods=("long",))
def to_int64(a: Tensor) -> Tensor:
    """``a.long()``: ``a`` as int64 (floats truncated toward zero; no gradient)."""
    return astype(a, np.int64)


@register("int", methods=("int",))
def to_int32(a: Tensor) -> Tensor:
    """``a.int()``: ``a`` as int32 (no gradient)."""
    return astype(a, np.int32)


@register("bool", methods=("bool",))
def to_bool(a: Tensor) -> Tensor:
    """``a.bool()``: nonzero elements True (no gradient)."""
    return astype(a, np.bool_)


#: torch's legacy tensor type names, for ``t.type()``
_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


@register("type", methods=("type",))
def type_(a: Tensor, dtype=None):
    """``a.type()``: the type name ('taugrad.FloatTensor'); ``a.type(dtype)``: ``a`` as ``dtype``.

    ``dtype`` may also be such a name, with 'taugrad.' or 'torch.' in front, or
    the type itself (``taugrad.DoubleTensor``).
    """
    if isinstance(dtype, type) and hasattr(dtype, "numpy_dtype"):  # a legacy type: taugrad.DoubleTensor
        dtype = dtype.numpy_dtype
    if dtype is None:
        name = as_dtype(a._data.dtype).name
        return "taugrad." + _TYPE_NAMES.get(name, name)
    if isinstance(dtype, str) and dtype.endswith("Tensor"):
        by_name = {v: k for k, v in _TYPE_NAMES.items()}
        short = dtype.rsplit(".", 1)[-1]
        if short not in by_name:
            raise TypeError(f"type: unknown tensor type {dtype!r}")
        dtype = by_name[short]
    return astype(a, dtype)


@rule("clone", gives=G_OR_NEW)
def clone_backward(g, out, ins, node):
    """z = copy of a:  dz/da = 1."""
    return (g,)


@register("clone", methods=("clone",))
def clone(a: Tensor) -> Tensor:
    """A copy of ``a`` with its own storage, still in the graph."""
    return make(a._data.copy(), (a,), clone_backward)


@register("where_method", methods=("where",))
def where_method(x: Tensor, condition, other) -> Tensor:
    """``x.where(condition, other)``: ``where(condition, x, other)``, PyTorch's method form."""
    return where(condition, x, other)


# ---------------------------------------------------------------------------
# a + value * t1 * t2, a + value * t1 / t2 (optimizers' updates): compositions
# ---------------------------------------------------------------------------


@register("addcmul", methods=("addcmul",))
def addcmul(a: Tensor, tensor1, tensor2, value=1) -> Tensor:
    """``a + value * tensor1 * tensor2`` with broadcasting; the gradients are those of the products and sum.

    ``value`` takes no part in type promotion (PyTorch's): on integer tensors a
    float value is cast to an integer first, so ``value=2.7`` multiplies by 2.
    """
    product = mul(operand(tensor1, a), tensor2)
    value = integer_scalar(value, product._data, a._data)
    return add(a, product if value == 1 else mul(product, value))


@register("addcdiv", methods=("addcdiv",))
def addcdiv(a: Tensor, tensor1, tensor2, value=1) -> Tensor:
    """``a + value * tensor1 / tensor2`` with broadcasting (true division, so integer operands are refused)."""
    t1 = operand(tensor1, a)
    if t1._data.dtype.kind in "biu" and operand(tensor2, a)._data.dtype.kind in "biu":
        raise TypeError("addcdiv: integer division of tensor1 by tensor2 is not supported; use floating tensors")
    quotient = div(t1, tensor2)
    return add(a, quotient if value == 1 else mul(quotient, value))


@register("positive", methods=("__pos__",))
def positive(a: Tensor) -> Tensor:
    """``+a``: ``a`` itself, as in PyTorch."""
    return a


# ---------------------------------------------------------------------------
# comparisons and logic: constants, no gradient
# ---------------------------------------------------------------------------


def _compare(op: str, name: str):
    def compare(a: Tensor, b) -> Tensor:
        ad = a._data
        try:
            bd = b._data if isinstance(b, Tensor) else (b if type(b) in (float, int, bool) else A.array_like(b, ad))
        except TypeError:
            if op in ("eq", "ne"):  # t == None: let Python compare identities (False), as PyTorch
                return NotImplemented
            raise TypeError(f"{op}: cannot compare a tensor with {type(b).__name__}") from None
        if type(bd) is int and ad.dtype.kind in "iu":  # the number in the tensor's dtype (uint8 < -3: -3 wraps), as torch
            try:
                bd = array_module(ad).asarray(bd, dtype=ad.dtype)
            except OverflowError:
                bd = number_in_dtype(bd, a)._data
        try:
            return constant(getattr(array_module(ad), name)(ad, bd))
        except ValueError:
            raise ValueError(
                f"{op}: shapes {tuple(a.shape)} and {getattr(bd, 'shape', ())} cannot broadcast"
            ) from None
        except TypeError:  # e.g. & on floats: NumPy's message names a ufunc and a casting rule
            b_dtype = b.dtype if isinstance(b, Tensor) else bd.dtype if hasattr(bd, "dtype") else type(bd).__name__
            raise TypeError(f"{op}: not supported for {a.dtype} and {b_dtype} operands") from None

    compare.__name__ = op
    compare.__doc__ = f"Elementwise ``{op}`` as a bool tensor (no gradient)."
    return compare


# torch's long names (``less``, ``greater_equal``...) are the same functions
lt = register("lt", methods=("lt", "__lt__", "less"))(_compare("lt", "less"))
le = register("le", methods=("le", "__le__", "less_equal"))(_compare("le", "less_equal"))
gt = register("gt", methods=("gt", "__gt__", "greater"))(_compare("gt", "greater"))
ge = register("ge", methods=("ge", "__ge__", "greater_equal"))(_compare("ge", "greater_equal"))
eq = register("eq", methods=("eq", "__eq__"))(_compare("eq", "equal"))
ne = register("ne", methods=("ne", "__ne__", "not_equal"))(_compare("ne", "not_equal"))
logical_and = register("logical_and", methods=("logical_and",))(_compare("logical_and", "logical_and"))
logical_or = register("logical_or", methods=("logical_or",))(_compare("logical_or", "logical_or"))
logical_xor = register("logical_xor", methods=("logical_xor",))(_compare("logical_xor", "logical_xor"))
# ``&``, ``|``, ``^``: logical for bool tensors
bitwise_and = register("bitwise_and", methods=("bitwise_and", "__and__", "__rand__"))(_compare("and", "bitwise_and"))
bitwise_or = register("bitwise_or", methods=("bitwise_or", "__or__", "__ror__"))(_compare("or", "bitwise_or"))
bitwise_xor = register("bitwise_xor", methods=("bitwise_xor", "__xor__", "__rxor__"))(_compare("xor", "bitwise_xor"))


@register("logical_not", methods=("logical_not",))
def logical_not(a: Tensor) -> Tensor:
    """Elementwise ``a == 0`` as a bool tensor, for any dtype (``logical_not(3)`` is False)."""
    return constant(array_module(a._data).logical_not(a._data))


@register("bitwise_not", methods=("bitwise_not", "__invert__"))
def bitwise_not(a: Tensor) -> Tensor:
    """``~a``: logical not of a bool tensor, bitwise not (``-a - 1``) of an integer one."""
    if a._data.dtype != np.bool_:
        if a._data.dtype.kind not in "iu":
            raise TypeError(f"bitwise_not: needs a bool or integer tensor, got dtype {a.dtype}")
        return constant(array_module(a._data).invert(a._data))
    return constant(array_module(a._data).logical_not(a._data))

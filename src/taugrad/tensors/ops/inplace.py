"""In-place ops (``add_``, ``mul_``, ``zero_``, ``relu_``, ``x += y``, ...).

They change the array in place and bump the storage's version (see
:mod:`taugrad.tensors.core.node`), so a later ``backward()`` through an op that saved
the old values raises instead of returning a wrong gradient.

As in PyTorch, an in-place op on a tensor that is part of a graph (or that
receives a value requiring grad) is recorded: the tensor's node is rebased
onto the in-place op, whose first input is the tensor's old value (see
:mod:`taugrad.tensors.core.rebase`).  Changing a leaf that requires grad is refused
while grad mode is on (wrap optimizer steps in ``taugrad.no_grad()``).
"""
from __future__ import annotations

import numpy as np

from taugrad.tensors.core import sampling
from taugrad.tensors.core.args import integer_scalar
from taugrad.tensors.core.backend import device_of, is_array, move_like
from taugrad.tensors.core.generator import get_generator
from taugrad.tensors.core.grad_fn import grad_fn_of
from taugrad.tensors.core.node import array_module, bump_version, check_inplace, check_same_device, operand, Tensor
from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.rebase import REBASING, begin, check_target, finish, inplace_rule, records
from taugrad.tensors.core.rule import G_OR_NEW, Rule, forward_of, register, shown_as


def _data(other, like):
    """``other``'s array (a list made one on the device of ``like``, x's array); numbers as they are."""
    if isinstance(other, Tensor):
        return other._data
    if type(other) is float or type(other) is int:
        return other
    return A.array_like(other, like)


def _shape(od) -> tuple:
    return getattr(od, "shape", ())  # a Python number: ()


def _result_dtype(ufunc, a, b) -> str:
    """The dtype ``ufunc(a, b)`` gives (true division of integers: a float), for an error message."""
    try:
        return str(ufunc(a, b).dtype)
    except TypeError:
        return "non-numeric"


def _write(x: Tensor, op: str, name: str, od) -> None:
    """``x = ufunc(x, od)`` into x's array (the ufunc ``name`` of its module), with one-line errors."""
    ufunc = getattr(array_module(x._data), name)
    try:
        ufunc(x._data, od, out=x._data)
    except TypeError:
        if isinstance(od, Tensor) or is_array(od):
            check_same_device(op, x, od if isinstance(od, Tensor) else Tensor(od))
        raise TypeError(f"{op}: cannot store a {_result_dtype(ufunc, x._data, od)} result in a tensor of dtype "
                        f"{x.dtype}") from None
    except ValueError:
        raise ValueError(f"{op}: an operand of shape {_shape(od)} cannot update a tensor of shape {tuple(x.shape)}") from None


def _broadcasts_into(op: str, od, x: Tensor) -> None:
    """Refuse before anything is recorded an operand that cannot update x in place."""
    try:
        if np.broadcast_shapes(_shape(od), x.shape) == x.shape:
            return
    except ValueError:
        pass
    raise ValueError(f"{op}: an operand of shape {_shape(od)} cannot update a tensor of shape {tuple(x.shape)}")


# ---------------------------------------------------------------------------
# the rules of the recorded in-place ops (input 0: the tensor's old value)
# ---------------------------------------------------------------------------


@inplace_rule("add_", gives=G_OR_NEW)
def add_inplace_backward(g, out, ins, node):
    """x' = x + alpha * b:  dx'/dx = 1,  dx'/db = alpha (summed over broadcast dims)."""
    alpha = node._ctx
    pb = node._prev[1]
    gb = None
    if pb._requires_grad:
        gb = A.sum_to(g if alpha == 1 else g * alpha, ins[1].shape)
    return (g if node._prev[0]._requires_grad else None), gb


def _product_reads(node) -> tuple:
    """mul_/div_ read the old value only when the other operand needs its gradient (then it was kept)."""
    return (0, 1) if node._prev[1]._requires_grad else (1,)


@inplace_rule("mul_", reads=_product_reads)
def mul_inplace_backward(g, out, ins, node):
    """x' = x * b:  dx'/dx = b,  dx'/db = x (the old value, kept for this)."""
    px, pb = node._prev
    x, b = ins
    return (g * b if px._requires_grad else None), (A.sum_to(g * x, b.shape) if pb._requires_grad else None)


@inplace_rule("div_", reads=_product_reads)
def div_inplace_backward(g, out, ins, node):
    """x' = x / b:  dx'/dx = 1 / b,  dx'/db = -x / b^2."""
    px, pb = node._prev
    x, b = ins
    return (g / b if px._requires_grad else None), (A.sum_to(-g * x / (b * b), b.shape) if pb._requires_grad else None)


@inplace_rule("copy_")
def copy_inplace_backward(g, out, ins, node):
    """x' = src (broadcast):  dx'/dx = 0,  dx'/dsrc = 1 summed over broadcast dims."""
    px = node._prev[0]
    ps = node._prev[1] if len(node._prev) > 1 else None
    gx = A.zeros(g.shape, g) if px._requires_grad else None
    if ps is None:
        return (gx,)
    return gx, (A.sum_to(g, ps.shape) * 1 if ps._requires_grad else None)


@inplace_rule("masked_fill_")
def masked_fill_inplace_backward(g, out, ins, node):
    """x' = where(mask, value, x):  dx'/dx = 1 off the mask,  dx'/dvalue = 1 on it (summed)."""
    return A.masked_fill_grads(g, node)


@inplace_rule("clamp_")
def clamp_inplace_backward(g, out, ins, node):
    """x' = clamp(x, lo, hi):  dx'/dx = 1 where lo <= x <= hi, else 0."""
    return (A.where(node._ctx, g, 0.0),)


#: PyTorch numbers clamp_ with number bounds 1 and with tensor bounds 0
clamp_inplace_backward.shows = shown_as("ClampBackward1")
_CLAMP_TENSORS_INPLACE = inplace_rule("clamp_")(clamp_inplace_backward.backward)
_CLAMP_TENSORS_INPLACE.shows = shown_as("ClampBackward0")


@inplace_rule("relu_", reads=("out",))
def relu_inplace_backward(g, out, ins, node):
    """x' = max(x, 0):  dx'/dx = 1 where x' > 0 (read from the result, as relu; +0 elsewhere)."""
    return (A.where(out != 0, g, 0.0),)


# ---------------------------------------------------------------------------
# the ops
# ---------------------------------------------------------------------------


def _apply(x: Tensor, op: str, ufunc: str, other, alpha=1) -> Tensor:
    """``x = ufunc(x, alpha * other)`` in place (``ufunc``: "add", "subtract", "multiply" or
    "true_divide"): recorded as an op if a graph is involved."""
    check_target(x, op)
    if not records(x, other):
        od = _data(other, x._data)
        if alpha != 1:
            od = od * alpha
        _write(x, op, ufunc, od)
        bump_version(x)
        return x
    o = operand(other, x)
    _broadcasts_into(op, o._data, x)
    product = ufunc == "multiply" or ufunc == "true_divide"
    pending = begin(x, op, keep_old=product and o._requires_grad)
    od = o._data if alpha == 1 else o._data * alpha
    _write(x, op, ufunc, od)
    if product:
        return finish(x, pending, (o,), mul_inplace_backward if ufunc == "multiply" else div_inplace_backward)
    return finish(x, pending, (o,), add_inplace_backward, alpha if ufunc == "add" else -alpha)


@register("add_", methods=("add_",))
def add_(x: Tensor, other, alpha=1) -> Tensor:
    """``x += alpha * other`` in place; returns x."""
    return _apply(x, "add_", "add", other, alpha)


@register("sub_", methods=("sub_", "subtract_"))
def sub_(x: Tensor, other, alpha=1) -> Tensor:
    """``x -= alpha * other`` in place; returns x."""
    return _apply(x, "sub_", "subtract", other, alpha)


@register("mul_", methods=("mul_", "multiply_"))
def mul_(x: Tensor, other) -> Tensor:
    """``x *= other`` in place; returns x."""
    return _apply(x, "mul_", "multiply", other)


@register("div_", methods=("div_",))
def div_(x: Tensor, other) -> Tensor:
    """``x /= other`` in place; returns x."""
    return _apply(x, "div_", "true_divide", other)


@register("iadd", methods=("__iadd__",))
def iadd(x: Tensor, other) -> Tensor:
    return _apply(x, "+=", "add", other)


@register("isub", methods=("__isub__",))
def isub(x: Tensor, other) -> Tensor:
    return _apply(x, "-=", "subtract", other)


@register("imul", methods=("__imul__",))
def imul(x: Tensor, other) -> Tensor:
    return _apply(x, "*=", "multiply", other)


@register("itruediv", methods=("__itruediv__",))
def itruediv(x: Tensor, other) -> Tensor:
    return _apply(x, "/=", "true_divide", other)


def _assign(x: Tensor, op: str, src) -> Tensor:
    """``x[...] = src`` (broadcast, cast as PyTorch's copy_): recorded if a graph is involved."""
    check_target(x, op)
    recorded = records(x, src)
    sd = _data(src, x._data)
    _broadcasts_into(op, sd, x)
    pending = begin(x, op) if recorded else None
    try:
        array_module(x._data).copyto(x._data, sd, casting="unsafe")
    except (TypeError, ValueError):
        if isinstance(src, Tensor):
            check_same_device(op, x, src)
        raise TypeError(f"{op}: cannot store {type(src).__name__} in a tensor of dtype {x.dtype}") from None
    if not recorded:
        bump_version(x)
        return x
    operands = (src,) if isinstance(src, Tensor) else ()
    return finish(x, pending, operands, copy_inplace_backward)


@register("fill_", methods=("fill_",))
def fill_(x: Tensor, value) -> Tensor:
    """Set every element to ``value`` (a number or a 0-d tensor); returns x."""
    if isinstance(value, Tensor) and value._data.ndim:
        raise ValueError(f"fill_: the value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
    return _assign(x, "fill_", value)


@register("zero_", methods=("zero_",))
def zero_(x: Tensor) -> Tensor:
    """Set every element to 0; returns x."""
    return _assign(x, "zero_", 0)


@register("copy_", methods=("copy_",))
def copy_(x: Tensor, src) -> Tensor:
    """Copy ``src`` (broadcast to x's shape) into x; returns x.  As torch's, ``src`` may be on another device."""
    if isinstance(src, Tensor) and type(src._data) is not type(x._data):
        src = forward_of("to")(src, device_of(x._data))  # the move is recorded: gradients go back to src's device
    return _assign(x, "copy_", src)


@register("masked_fill_", methods=("masked_fill_",))
def masked_fill_(x: Tensor, mask, value) -> Tensor:
    """Set x to ``value`` where ``mask`` (bool, broadcast to x's shape) is True; returns x."""
    check_target(x, "masked_fill_")
    xd = x._data
    xp = array_module(xd)
    m = A.array_like(mask, xd, np.asarray)
    if m.dtype != np.bool_:
        raise TypeError(f"masked_fill_: the mask must be a bool tensor, got dtype {m.dtype}")
    _broadcasts_into("masked_fill_", m, x)
    if isinstance(value, Tensor) and value._data.ndim:
        raise ValueError(f"masked_fill_: the value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
    recorded = records(x, value)
    pending = begin(x, "masked_fill_") if recorded else None
    try:
        xp.copyto(xd, _data(value, xd), casting="unsafe", where=m)
    except (TypeError, ValueError):
        raise TypeError(f"masked_fill_: cannot store {type(value).__name__} in a tensor of dtype {x.dtype}") from None
    if not recorded:
        bump_version(x)
        return x
    operands = (value,) if isinstance(value, Tensor) else ()
    return finish(x, pending, operands, masked_fill_inplace_backward, xp.broadcast_to(m, x.shape))


@register("clamp_", methods=("clamp_", "clip_"))
def clamp_(x: Tensor, min=None, max=None) -> Tensor:
    """Limit x to ``[min, max]`` in place; returns x."""
    check_target(x, "clamp_")
    if min is None and max is None:
        raise ValueError("clamp_: at least one of min and max must be given")
    for bound in (min, max):
        if isinstance(bound, Tensor) and bound._requires_grad and records(x, bound):
            raise NotImplementedError("clamp_: bounds that require grad are not supported; use taugrad.clamp")
    xd = x._data
    xp = array_module(xd)
    lo = None if min is None else _data(min, xd)
    hi = None if max is None else _data(max, xd)
    recorded = records(x)
    keep = None
    try:
        if recorded:
            keep = xp.ones(x.shape, dtype=bool)
            if lo is not None:
                keep &= x._data >= lo
            if hi is not None:
                keep &= x._data <= hi
        pending = begin(x, "clamp_") if recorded else None
        # as clamp(): max(x, min) first, then min(., max) (so min > max gives max, as PyTorch)
        if lo is not None:
            xp.maximum(xd, lo, out=xd)
        if hi is not None:
            xp.minimum(xd, hi, out=xd)
    except ValueError:
        raise ValueError(f"clamp_: bounds cannot broadcast to shape {tuple(x.shape)}") from None
    except TypeError:
        raise TypeError(f"clamp_: min and max must be numbers or tensors that fit dtype {x.dtype}") from None
    if not recorded:
        bump_version(x)
        return x
    rule_fn = _CLAMP_TENSORS_INPLACE if isinstance(min, Tensor) or isinstance(max, Tensor) else clamp_inplace_backward
    return finish(x, pending, (), rule_fn, keep)


@register("relu_", methods=("relu_",))
def relu_(x: Tensor) -> Tensor:
    """``max(x, 0)`` in place; returns x."""
    check_target(x, "relu_")
    recorded = records(x)
    pending = begin(x, "relu_") if recorded else None
    try:
        array_module(x._data).maximum(x._data, 0, out=x._data)
    except TypeError:
        raise TypeError(f"relu_: not supported for a tensor of dtype {x.dtype}") from None
    if not recorded:
        bump_version(x)
        return x
    return finish(x, pending, (), relu_inplace_backward)


@register("normal_", methods=("normal_",))
def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill x with samples of N(mean, std^2); returns x."""
    check_inplace(x, "normal_")
    draws = sampling.normal(get_generator(generator, device_of(x._data)), mean, std, x.shape, x._data.dtype, "normal_")
    x._data[...] = move_like(draws, x._data)  # drawn on the host
    bump_version(x)
    return x


@register("uniform_", methods=("uniform_",))
def uniform_(x: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill x with samples of U(a, b); returns x."""
    check_inplace(x, "uniform_")
    draws = sampling.uniform(get_generator(generator, device_of(x._data)), a, b, x.shape, x._data.dtype, "uniform_")
    x._data[...] = move_like(draws, x._data)  # drawn on the host
    bump_version(x)
    return x


# ---------------------------------------------------------------------------
# elementwise functions in place: the out-of-place op, then copy_
# ---------------------------------------------------------------------------


def _function_(x: Tensor, op: str, name: str, floating: bool, reads_input: bool, *args, **kwargs) -> Tensor:
    """``x = f(x)`` in place for the registered elementwise op ``name``; returns x.

    Recorded as ``x' = copy(before, f(before))``, ``before`` being x's old node,
    and shown in ``grad_fn`` under f's node name, as PyTorch shows it:
    the copy gives ``f(before)`` the whole gradient and f's own rule takes it to
    ``before``, so the gradient is f's (and f's rule is what differentiates it
    twice).  f is applied to ``before`` rather than to x, so no node of the graph
    lists x itself, whose node is the copy from now on.  When f's rule reads its
    input (``log``, ``abs``) the input is a clone, which the write into x leaves
    intact.  ``floating``: f of an integer tensor is floating, which x cannot
    hold (refused first, as PyTorch).
    """
    check_target(x, op)
    if floating and x._data.dtype.kind in "biu":
        raise TypeError(f"{op}: the result is floating, which cannot be stored in a tensor of dtype {x.dtype}")
    f = forward_of(name)
    if not records(x):
        result = f(x, *args, **kwargs)
        array_module(x._data).copyto(x._data, result._data, casting="unsafe")
        bump_version(x)
        return x
    pending = begin(x, op)
    before = pending.before
    result = f(forward_of("clone")(before) if reads_input else before, *args, **kwargs)
    array_module(x._data).copyto(x._data, result._data, casting="unsafe")
    # PyTorch shows x.sin_() as the op's own node (SinBackward0), not as a copy
    shown = copy_inplace_backward if result._rule is None else _copy_shown_as(grad_fn_of(result).name())
    return finish(x, pending, (result,), shown)


def _make_function_(op: str, name: str, floating: bool, reads_input: bool):
    def function_(x: Tensor, *args, **kwargs) -> Tensor:
        return _function_(x, op, name, floating, reads_input, *args, **kwargs)

    function_.__name__ = op
    function_.__doc__ = f"``x = {name}(x, ...)`` in place; returns x (the gradient is {name}'s)."
    return function_


#: PyTorch's grad_fn name of an in-place activation -> the copy rule that shows that name
_SHOWN_COPIES: dict = {}


def _copy_shown_as(name: str) -> Rule:
    """``copy_``'s rule, shown in ``grad_fn`` as PyTorch's node ``name`` (``LeakyReluBackward1``)."""
    found = _SHOWN_COPIES.get(name)
    if found is None:
        found = Rule("copy_", copy_inplace_backward.backward, (), True, copy_inplace_backward.gives,
                     shows=lambda node, name=name: (name, (0,) if node._prev else ()))
        REBASING.add(found)
        _SHOWN_COPIES[name] = found
    return found


def apply_inplace(x: Tensor, op: str, f, shown_as: str) -> Tensor:
    """``x = f(x)`` in place for any differentiable ``f`` (an activation's ``inplace=True``); returns x.

    As :func:`_function_`: recorded as ``x' = copy(before, f(clone(before)))``,
    so the gradient is f's (the clone keeps the values f's rules read from
    being overwritten), x's version moves on (a rule that saved x's old value
    raises in backward), and a leaf that requires grad is refused, as PyTorch
    refuses it.  ``x.grad_fn`` is named ``shown_as``, PyTorch's name for the
    node (``LeakyReluBackward1``).
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: in place needs a Tensor input, got {type(x).__name__}")
    check_target(x, op)
    if not records(x):
        result = f(x)
        array_module(x._data).copyto(x._data, result._data, casting="unsafe")
        bump_version(x)
        return x
    pending = begin(x, op)
    result = f(forward_of("clone")(pending.before))
    array_module(x._data).copyto(x._data, result._data, casting="unsafe")
    return finish(x, pending, (result,), _copy_shown_as(shown_as))


abs_ = register("abs_", methods=("abs_", "absolute_"))(_make_function_("abs_", "abs", False, True))
exp_ = register("exp_", methods=("exp_",))(_make_function_("exp_", "exp", True, False))
log_ = register("log_", methods=("log_",))(_make_function_("log_", "log", True, True))
sqrt_ = register("sqrt_", methods=("sqrt_",))(_make_function_("sqrt_", "sqrt", True, False))
sigmoid_ = register("sigmoid_", methods=("sigmoid_",))(_make_function_("sigmoid_", "sigmoid", True, False))
tanh_ = register("tanh_", methods=("tanh_",))(_make_function_("tanh_", "tanh", True, False))
neg_ = register("neg_", methods=("neg_", "negative_"))(_make_function_("neg_", "neg", False, False))
floor_ = register("floor_", methods=("floor_",))(_make_function_("floor_", "floor", False, False))


@register("round_", methods=("round_",))
def round_(x: Tensor, decimals: int = 0) -> Tensor:
    """``x = round(x, decimals)`` in place (halves to even); returns x.  The gradient is 0, as round's."""
    return _function_(x, "round_", "round", False, False, decimals)


@register("clamp_min_", methods=("clamp_min_",))
def clamp_min_(x: Tensor, min) -> Tensor:
    """``x = max(x, min)`` in place: :func:`clamp_` with only a lower bound; returns x."""
    return clamp_(x, min=min)


@register("clamp_max_", methods=("clamp_max_",))
def clamp_max_(x: Tensor, max) -> Tensor:
    """``x = min(x, max)`` in place: :func:`clamp_` with only an upper bound; returns x."""
    return clamp_(x, max=max)


@register("addcmul_", methods=("addcmul_",))
def addcmul_(x: Tensor, tensor1, tensor2, value=1) -> Tensor:
    """``x += value * tensor1 * tensor2`` in place (as ``add_`` of the product with ``alpha=value``); returns x.

    As ``addcmul``: on integer tensors a float ``value`` is cast to an integer first.
    """
    product = forward_of("mul")(operand(tensor1, x), tensor2)
    return _apply(x, "addcmul_", "add", product, integer_scalar(value, product._data, x._data))


@register("addcdiv_", methods=("addcdiv_",))
def addcdiv_(x: Tensor, tensor1, tensor2, value=1) -> Tensor:
    """``x += value * tensor1 / tensor2`` in place (as ``add_`` of the quotient with ``alpha=value``); returns x."""
    return _apply(x, "addcdiv_", "add", forward_of("div")(operand(tensor1, x), tensor2), value)


# The rest of torch's in-place elementwise methods, each ``x = f(x, *args)`` through :func:`_function_`:
# (method names, the registered out-of-place op, whether an integer x is refused because f is floating).
# The input is cloned for f's rule whenever the rule may read it, so none of them can read the overwritten x.
_ELEMENTWISE_INPLACE = (
    (("sin_",), "sin", True), (("cos_",), "cos", True), (("tan_",), "tan", True),
    (("asin_", "arcsin_"), "asin", True), (("acos_", "arccos_"), "acos", True), (("atan_", "arctan_"), "atan", True),
    (("sinh_",), "sinh", True), (("cosh_",), "cosh", True), (("atan2_", "arctan2_"), "atan2", True),
    (("asinh_", "arcsinh_"), "asinh", True), (("acosh_", "arccosh_"), "acosh", True),
    (("atanh_", "arctanh_"), "atanh", True), (("logit_",), "logit", True), (("sgn_",), "sgn", False),
    (("hypot_",), "hypot", True), (("exp2_",), "exp2", True), (("expm1_",), "expm1", True),
    (("log2_",), "log2", True), (("log10_",), "log10", True), (("log1p_",), "log1p", True),
    (("rsqrt_",), "rsqrt", True), (("reciprocal_",), "reciprocal", True), (("erf_",), "erf", True),
    (("xlogy_",), "xlogy", True), (("lerp_",), "lerp", True), (("deg2rad_",), "deg2rad", True),
    (("rad2deg_",), "rad2deg", True), (("frac_",), "frac", False), (("square_",), "square", False),
    (("ceil_",), "ceil", False), (("trunc_", "fix_"), "trunc", False), (("sign_",), "sign", False),
    (("pow_",), "pow", False), (("fmod_",), "fmod", False), (("remainder_",), "remainder", False),
    (("floor_divide_",), "floor_divide", False), (("nan_to_num_",), "nan_to_num", False),
    (("divide_", "true_divide_"), "div", False),
    (("bitwise_and_",), "bitwise_and", False), (("bitwise_or_",), "bitwise_or", False),
    (("bitwise_xor_",), "bitwise_xor", False), (("bitwise_not_",), "bitwise_not", False),
    (("logical_and_",), "logical_and", False), (("logical_or_",), "logical_or", False),
    (("logical_xor_",), "logical_xor", False), (("logical_not_",), "logical_not", False),
    (("eq_",), "eq", False), (("ne_", "not_equal_"), "ne", False), (("lt_", "less_"), "lt", False),
    (("le_", "less_equal_"), "le", False), (("gt_", "greater_"), "gt", False),
    (("ge_", "greater_equal_"), "ge", False),
    (("tril_",), "tril", False), (("triu_",), "triu", False),
    (("cumsum_",), "cumsum", False), (("cumprod_",), "cumprod", False),
    (("addmm_",), "addmm", False),
)
for _methods, _name, _floating in _ELEMENTWISE_INPLACE:
    register(_methods[0], methods=_methods)(_make_function_(_methods[0], _name, _floating, True))


# ---------------------------------------------------------------------------
# shape changes in place (unsqueeze_, t_, ...): x becomes the view the op returns
# ---------------------------------------------------------------------------


def _shape_(x: Tensor, op: str, name: str, *args, **kwargs) -> Tensor:
    """``x = f(x)`` for the registered view op ``name``, keeping x's memory; returns x.

    Outside a graph only x's array changes (a view of the same memory).  In a
    graph, x's old node moves to a "before" tensor (as for any in-place op) and
    x takes over the node of ``f(before)``: its ``grad_fn`` is f's
    (``UnsqueezeBackward0``...), as PyTorch shows it.
    """
    f = forward_of(name)
    if not records(x):
        x._data = f(x, *args, **kwargs)._data
        return x
    check_target(x, op)
    if x._base is not None:
        raise RuntimeError(f"{op}: taugrad cannot record a shape change in place on a view that is part of a graph; "
                           f"use the out-of-place {name}() instead")
    before = begin(x, op).before
    result = f(before, *args, **kwargs)
    x._data, x._prev, x._rule, x._ctx = result._data, result._prev, result._rule, result._ctx
    x._clock, x._base, x._requires_grad = result._clock, result._base, True
    return x


def _make_shape_(op: str, name: str):
    def shape_(x: Tensor, *args, **kwargs) -> Tensor:
        return _shape_(x, op, name, *args, **kwargs)

    shape_.__name__ = op
    shape_.__doc__ = f"``x = x.{name}(...)`` in place: x becomes that view of its own memory; returns x."
    return shape_


for _methods, _name in ((("unsqueeze_",), "unsqueeze"), (("squeeze_",), "squeeze"), (("t_",), "t"),
                        (("transpose_", "swapaxes_", "swapdims_"), "transpose")):
    register(_methods[0], methods=_methods)(_make_shape_(_methods[0], _name))

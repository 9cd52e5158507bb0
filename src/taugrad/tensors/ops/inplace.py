"""In-place ops (``add_``, ``mul_``, ``zero_``, ``x += y``, ...).

They change the array in place and bump the storage's version (see
:mod:`taugrad.tensors.node`), so a later ``backward()`` through an op that saved
the old values raises instead of returning a wrong gradient.

In-place changes are not recorded in the graph.  Like PyTorch, changing a leaf
that requires grad is refused while grad mode is on (wrap optimizer steps in
``taugrad.no_grad()``); unlike PyTorch, so is changing a tensor that is the
output of a recorded op -- write ``y = y + 1`` instead of ``y += 1`` there.
"""
from __future__ import annotations

import numpy as np

from taugrad.tensors.generator import get_generator
from taugrad.tensors.node import Tensor, bump_version, check_inplace, to_array
from taugrad.tensors.rule import register


def _data(other):
    if isinstance(other, Tensor):
        return other._data
    if type(other) is float or type(other) is int:
        return other
    return to_array(other)


def _result_dtype(ufunc, a, b) -> str:
    """The dtype ``ufunc(a, b)`` gives (true division of integers: a float), for an error message."""
    try:
        return str(ufunc(a, b).dtype)
    except TypeError:
        return "non-numeric"


def _apply(x: Tensor, op: str, ufunc, other) -> Tensor:
    check_inplace(x, op)
    od = _data(other)
    try:
        ufunc(x._data, od, out=x._data)
    except TypeError:
        raise TypeError(f"{op}: cannot store a {_result_dtype(ufunc, x._data, od)} result in a tensor of dtype "
                        f"{x.dtype}") from None
    except ValueError:
        raise ValueError(f"{op}: an operand of shape {np.shape(od)} cannot update a tensor of shape {x.shape}") from None
    bump_version(x)
    return x


@register("add_", methods=("add_",))
def add_(x: Tensor, other, alpha=1) -> Tensor:
    """``x += alpha * other`` in place; returns x."""
    if alpha != 1:
        other = _data(other) * alpha
    return _apply(x, "add_", np.add, other)


@register("sub_", methods=("sub_",))
def sub_(x: Tensor, other, alpha=1) -> Tensor:
    """``x -= alpha * other`` in place; returns x."""
    if alpha != 1:
        other = _data(other) * alpha
    return _apply(x, "sub_", np.subtract, other)


@register("mul_", methods=("mul_",))
def mul_(x: Tensor, other) -> Tensor:
    """``x *= other`` in place; returns x."""
    return _apply(x, "mul_", np.multiply, other)


@register("div_", methods=("div_",))
def div_(x: Tensor, other) -> Tensor:
    """``x /= other`` in place; returns x."""
    return _apply(x, "div_", np.true_divide, other)


@register("iadd", methods=("__iadd__",))
def iadd(x: Tensor, other) -> Tensor:
    return _apply(x, "+=", np.add, other)


@register("isub", methods=("__isub__",))
def isub(x: Tensor, other) -> Tensor:
    return _apply(x, "-=", np.subtract, other)


@register("imul", methods=("__imul__",))
def imul(x: Tensor, other) -> Tensor:
    return _apply(x, "*=", np.multiply, other)


@register("itruediv", methods=("__itruediv__",))
def itruediv(x: Tensor, other) -> Tensor:
    return _apply(x, "/=", np.true_divide, other)


@register("fill_", methods=("fill_",))
def fill_(x: Tensor, value) -> Tensor:
    """Set every element to ``value``; returns x."""
    check_inplace(x, "fill_")
    value = _data(value)
    try:
        x._data[...] = value
    except ValueError:
        raise ValueError(f"fill_: a value of shape {np.shape(value)} cannot fill a tensor of shape {x.shape}") from None
    except TypeError:
        raise TypeError(f"fill_: cannot fill a tensor of dtype {x.dtype} with {type(value).__name__}") from None
    bump_version(x)
    return x


@register("zero_", methods=("zero_",))
def zero_(x: Tensor) -> Tensor:
    """Set every element to 0; returns x."""
    return fill_(x, 0)


@register("copy_", methods=("copy_",))
def copy_(x: Tensor, src) -> Tensor:
    """Copy ``src`` (broadcast to x's shape) into x; returns x."""
    check_inplace(x, "copy_")
    sd = _data(src)
    try:
        np.copyto(x._data, sd, casting="unsafe")
    except ValueError:
        raise ValueError(f"copy_: a source of shape {np.shape(sd)} cannot be copied into shape {x.shape}") from None
    bump_version(x)
    return x


@register("clamp_", methods=("clamp_",))
def clamp_(x: Tensor, min=None, max=None) -> Tensor:
    """Limit x to ``[min, max]`` in place; returns x."""
    check_inplace(x, "clamp_")
    if min is None and max is None:
        raise ValueError("clamp_: at least one of min and max must be given")
    lo = None if min is None else _data(min)
    hi = None if max is None else _data(max)
    try:
        # as clamp(): max(x, min) first, then min(., max) (so min > max gives max, as PyTorch)
        if lo is not None:
            np.maximum(x._data, lo, out=x._data)
        if hi is not None:
            np.minimum(x._data, hi, out=x._data)
    except ValueError:
        raise ValueError(f"clamp_: bounds cannot broadcast to shape {x.shape}") from None
    except TypeError:
        raise TypeError(f"clamp_: min and max must be numbers or tensors that fit dtype {x.dtype}") from None
    bump_version(x)
    return x


@register("normal_", methods=("normal_",))
def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill x with samples of N(mean, std^2); returns x."""
    check_inplace(x, "normal_")
    x._data[...] = get_generator(generator).normal(mean, std, size=x.shape)
    bump_version(x)
    return x


@register("uniform_", methods=("uniform_",))
def uniform_(x: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill x with samples of U(a, b); returns x."""
    check_inplace(x, "uniform_")
    x._data[...] = get_generator(generator).uniform(a, b, size=x.shape)
    bump_version(x)
    return x

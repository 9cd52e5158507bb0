"""In-place ops (``add_``, ``mul_``, ``zero_``, ``x += y``, ...).

They change ``data`` in place and bump the storage's version (see
:mod:`taugrad.ops.core`), so a later ``backward()`` through an op that saved
the old values raises instead of returning a wrong gradient.

In-place changes are not recorded in the graph.  Like PyTorch, changing a leaf
that requires grad is refused while grad mode is on (wrap optimizer steps in
``taugrad.no_grad()``); unlike PyTorch, so is changing a tensor that is the
output of a recorded op -- write ``y = y + 1`` instead of ``y += 1`` there.
"""
from __future__ import annotations

import numpy as np

from taugrad.autograd import _state as _grad_mode
from taugrad.ops.core import CLOCK
from taugrad._tensor import Tensor, to_array


def check_inplace(x: Tensor, op: str) -> None:
    """Refuse in-place changes that would corrupt a graph being recorded."""
    if x.requires_grad and _grad_mode.enabled:
        if x._rule is None:
            raise RuntimeError(
                f"{op}: a leaf tensor that requires grad cannot be changed in place while gradients "
                f"are recorded; do it inside `with taugrad.no_grad():` (as an optimizer step does)"
            )
        raise RuntimeError(
            f"{op}: in-place changes of a tensor produced by a recorded op are not supported; "
            f"write it out of place (y = y + 1 rather than y += 1) or detach() first"
        )
    if not x.data.flags.writeable:
        raise ValueError(f"{op}: this tensor's data is read-only (an expand()ed view?); clone() it first")


def bump_version(x: Tensor) -> None:
    """Mark ``x``'s storage as changed now (for the backward-time check)."""
    CLOCK[0] += 1
    now = CLOCK[0]
    x._version = now
    if x._base is not None:
        x._base._version = now


def _data(other):
    if isinstance(other, Tensor):
        return other.data
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
        ufunc(x.data, od, out=x.data)
    except TypeError:
        raise TypeError(f"{op}: cannot store a {_result_dtype(ufunc, x.data, od)} result in a tensor of dtype "
                        f"{x.dtype}") from None
    except ValueError:
        raise ValueError(f"{op}: an operand of shape {np.shape(od)} cannot update a tensor of shape {x.shape}") from None
    bump_version(x)
    return x


def add_(x: Tensor, other, alpha=1) -> Tensor:
    """``x += alpha * other`` in place; returns x."""
    if alpha != 1:
        other = _data(other) * alpha
    return _apply(x, "add_", np.add, other)


def sub_(x: Tensor, other, alpha=1) -> Tensor:
    """``x -= alpha * other`` in place; returns x."""
    if alpha != 1:
        other = _data(other) * alpha
    return _apply(x, "sub_", np.subtract, other)


def mul_(x: Tensor, other) -> Tensor:
    """``x *= other`` in place; returns x."""
    return _apply(x, "mul_", np.multiply, other)


def div_(x: Tensor, other) -> Tensor:
    """``x /= other`` in place; returns x."""
    return _apply(x, "div_", np.true_divide, other)


def iadd(x: Tensor, other) -> Tensor:
    return _apply(x, "+=", np.add, other)


def isub(x: Tensor, other) -> Tensor:
    return _apply(x, "-=", np.subtract, other)


def imul(x: Tensor, other) -> Tensor:
    return _apply(x, "*=", np.multiply, other)


def itruediv(x: Tensor, other) -> Tensor:
    return _apply(x, "/=", np.true_divide, other)


def fill_(x: Tensor, value) -> Tensor:
    """Set every element to ``value``; returns x."""
    check_inplace(x, "fill_")
    value = _data(value)
    try:
        x.data[...] = value
    except ValueError:
        raise ValueError(f"fill_: a value of shape {np.shape(value)} cannot fill a tensor of shape {x.shape}") from None
    except TypeError:
        raise TypeError(f"fill_: cannot fill a tensor of dtype {x.dtype} with {type(value).__name__}") from None
    bump_version(x)
    return x


def zero_(x: Tensor) -> Tensor:
    """Set every element to 0; returns x."""
    return fill_(x, 0)


def copy_(x: Tensor, src) -> Tensor:
    """Copy ``src`` (broadcast to x's shape) into x; returns x."""
    check_inplace(x, "copy_")
    sd = _data(src)
    try:
        np.copyto(x.data, sd, casting="unsafe")
    except ValueError:
        raise ValueError(f"copy_: a source of shape {np.shape(sd)} cannot be copied into shape {x.shape}") from None
    bump_version(x)
    return x


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
            np.maximum(x.data, lo, out=x.data)
        if hi is not None:
            np.minimum(x.data, hi, out=x.data)
    except ValueError:
        raise ValueError(f"clamp_: bounds cannot broadcast to shape {x.shape}") from None
    except TypeError:
        raise TypeError(f"clamp_: min and max must be numbers or tensors that fit dtype {x.dtype}") from None
    bump_version(x)
    return x


def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill x with samples of N(mean, std^2); returns x."""
    from taugrad.ops.random import get_generator

    check_inplace(x, "normal_")
    x.data[...] = get_generator(generator).normal(mean, std, size=x.shape)
    bump_version(x)
    return x


def uniform_(x: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill x with samples of U(a, b); returns x."""
    from taugrad.ops.random import get_generator

    check_inplace(x, "uniform_")
    x.data[...] = get_generator(generator).uniform(a, b, size=x.shape)
    bump_version(x)
    return x

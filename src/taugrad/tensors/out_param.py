"""torch's ``out=`` keyword on the top-level functions (``torch.matmul(a, b, out=c)``).

``fn(*args, out=t)`` computes ``fn(*args)`` and writes it into ``t`` in place,
returning ``t``, as torch does.  Like torch, it refuses to record a graph: with
gradients enabled, an input or ``out`` that requires grad is an error
("functions with out=... arguments don't support automatic differentiation").
Where torch would resize an ``out`` of another shape, taugrad raises instead
(listed in the README's known differences).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from taugrad.grad_mode import STATE, no_grad
from taugrad.tensors.core.node import is_sparse_operand
from taugrad.tensors.methods import Tensor
from taugrad.tensors.ops import creation
from taugrad.tensors.ops.elementwise import add, div, mul, pow, sub
from taugrad.tensors.ops.matmul import matmul

__all__ = ["accepts_out", "creation_accepts_out", "add", "sub", "mul", "div", "pow", "matmul",
           "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint",
           "randperm"]


def _write_out(name: str, result: Any, out: Any, inputs: tuple) -> Any:
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): out= must be a Tensor, got {type(out).__name__}")
    if STATE.enabled and (out.requires_grad or any(isinstance(x, Tensor) and x.requires_grad for x in inputs)):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad."
        )
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"{name}(): out= has shape {tuple(out.shape)} but the result has shape "
                         f"{tuple(result.shape)} (taugrad does not resize out)")
    if result.dtype.is_floating_point and not out.dtype.is_floating_point:
        raise TypeError(f"{name}(): result type {result.dtype} can't be cast to the desired output type {out.dtype}")
    with no_grad():
        out.copy_(result)
    return out


def accepts_out(fn: Callable) -> Callable:
    """``fn`` with torch's keyword ``out=`` added."""

    @functools.wraps(fn)
    def with_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if args and not isinstance(args[0], Tensor) and not is_sparse_operand(args[0]):  # else an AttributeError
            raise TypeError(f"{fn.__name__}(): argument 'input' must be Tensor, not {type(args[0]).__name__}")
        result = fn(*args, **kwargs)
        return result if out is None else _write_out(fn.__name__, result, out, args)

    return with_out


add, sub, mul, div, pow, matmul = (accepts_out(f) for f in (add, sub, mul, div, pow, matmul))


def creation_accepts_out(fn: Callable) -> Callable:
    """A factory function (``zeros``, ``rand``...) with torch's ``out=``: the result is made in ``out``'s dtype
    and device and written into it (``torch.rand(2, 3, out=t)``); a ``dtype=`` that differs from ``out``'s is
    refused with torch's message."""

    @functools.wraps(fn)
    def with_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{fn.__name__}(): out= must be a Tensor, got {type(out).__name__}")
        dtype = kwargs.get("dtype")
        if dtype is not None and dtype != out.dtype:
            raise RuntimeError(f"dtype {dtype} does not match dtype of out parameter ({out.dtype})")
        kwargs["dtype"], kwargs["device"] = out.dtype, kwargs.get("device") or out.device
        if kwargs.pop("requires_grad", False):
            raise RuntimeError(f"{fn.__name__}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        return _write_out(fn.__name__, fn(*args, **kwargs), out, ())

    return with_out


zeros, ones, empty, full, arange, linspace, logspace, eye, rand, randn, randint, randperm = (
    creation_accepts_out(getattr(creation, name))
    for name in ("zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "randn",
                 "randint", "randperm"))

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
from taugrad.tensors.methods import Tensor
from taugrad.tensors.ops.elementwise import add, div, mul, pow, sub
from taugrad.tensors.ops.matmul import matmul

__all__ = ["accepts_out", "add", "sub", "mul", "div", "pow", "matmul"]


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
        if args and not isinstance(args[0], Tensor):  # else an AttributeError from inside the op
            raise TypeError(f"{fn.__name__}(): argument 'input' must be Tensor, not {type(args[0]).__name__}")
        result = fn(*args, **kwargs)
        return result if out is None else _write_out(fn.__name__, result, out, args)

    return with_out


add, sub, mul, div, pow, matmul = (accepts_out(f) for f in (add, sub, mul, div, pow, matmul))

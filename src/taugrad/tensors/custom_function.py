"""Custom ops: define an op by its forward and its backward (like ``torch.autograd.Function``).

Subclass :class:`Function` with two static methods and call ``.apply``::

    import numpy as np
    import taugrad

    class Exp(taugrad.Function):
        @staticmethod
        def forward(ctx, x):              # x: a NumPy array (the tensor's data)
            y = np.exp(x)
            ctx.save_for_backward(y)      # keep what backward needs
            return y                      # an array (or a Tensor)

        @staticmethod
        def backward(ctx, grad):          # grad: d loss / d output, an array
            (y,) = ctx.saved_tensors
            return grad * y               # d loss / d x: one gradient per forward argument

    x = taugrad.tensor([0.0, 1.0], dtype="float64", requires_grad=True)
    Exp.apply(x).sum().backward()         # x.grad == exp(x)
    taugrad.gradcheck(Exp.apply, [x])     # compare with finite differences

Rules of the game:

* ``forward(ctx, *args)`` receives each Tensor argument as its array; other
  arguments (numbers, strings...) arrive unchanged.  It runs without recording
  a graph and returns one array.  An integer or bool result (indices from
  ``argsort``, a mask) does not require grad, as in torch.
* ``backward(ctx, grad)`` returns one gradient per argument of ``forward``, in
  order (a tuple if there are several; ``None`` for non-Tensors or inputs that
  need none), each an array (or Tensor) of that input's shape; a complex
  gradient for a real input is refused.
* ``ctx.needs_input_grad[i]`` says whether argument ``i`` needs a gradient;
  other attributes may be set freely on ``ctx``.
* Saved arrays are released after ``backward()`` (unless ``retain_graph``);
  changing a saved input in place before ``backward()`` raises an error.
* Custom ops support first-order gradients only: ``create_graph=True`` through
  one raises an error naming it.
"""
from __future__ import annotations

import numpy as np

from taugrad.grad_mode import no_grad
from taugrad.tensors.node import as_array, constant, make
from taugrad.tensors.rule import rule
from taugrad.tensors.node import Tensor


class FunctionCtx:
    """The ``ctx`` given to :meth:`Function.forward` and :meth:`Function.backward`."""

    def __init__(self, needs_input_grad: tuple):
        self.saved_tensors: tuple = ()
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *arrays) -> None:
        """Keep arrays for ``backward`` (read them back from ``ctx.saved_tensors``)."""
        self.saved_tensors = tuple(a._data if isinstance(a, Tensor) else a for a in arrays)


def _saved_reads(node: Tensor) -> tuple:
    """Which of the node's values the custom backward reads: the saved ones."""
    _, ctx, _ = node._ctx
    saved = {id(a) for a in ctx.saved_tensors}
    reads = [i for i, p in enumerate(node._prev) if id(p._data) in saved]
    if id(node._data) in saved:
        reads.append("out")
    return tuple(reads)


@rule("function", reads=(), twice=False)
def function_backward(g, out, ins, node):
    """Calls the user's ``backward`` and checks what it returns."""
    cls, ctx, positions = node._ctx
    name = cls.__name__
    grads = cls.backward(ctx, g)
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) != len(ctx.needs_input_grad):
        raise RuntimeError(
            f"{name}.backward returned {len(grads)} gradient(s) but forward takes "
            f"{len(ctx.needs_input_grad)} argument(s)"
        )
    out_grads = []
    for parent, position in zip(node._prev, positions):
        grad = grads[position]
        if grad is None or not parent.requires_grad:
            out_grads.append(None)
            continue
        grad = _checked_gradient(grad, name, position, parent)
        if grad.shape != parent.shape:
            raise RuntimeError(
                f"{name}.backward returned a gradient of shape {grad.shape} for argument {position}, "
                f"which has shape {parent.shape}"
            )
        out_grads.append(grad)
    return tuple(out_grads)


def _checked_gradient(grad, name: str, position: int, parent: Tensor):
    """One gradient from the user's ``backward`` as an array, refusing what is not a gradient.

    Anything other than a Tensor, an array or a number (a list, a string...)
    is refused before NumPy turns it into a misleading shape; so is a complex
    gradient for a real input, whose imaginary part would be silently lost.
    """
    if isinstance(grad, Tensor):
        grad = grad._data
    elif not isinstance(grad, (np.ndarray, np.generic, int, float)) or isinstance(grad, bool):
        raise TypeError(
            f"{name}.backward must return a Tensor, an array or None for each forward argument; "
            f"got {type(grad).__name__} for argument {position}"
        )
    grad = as_array(grad)
    if grad.dtype.kind == "c" and parent.dtype.kind != "c":
        raise TypeError(
            f"{name}.backward returned a complex gradient ({grad.dtype}) for argument {position}, "
            f"which is real ({parent.dtype})"
        )
    if grad.dtype.kind not in "biufc":
        raise TypeError(f"{name}.backward returned a gradient of dtype {grad.dtype} for argument {position}")
    return grad


function_backward.reads = _saved_reads
function_backward.name_of = lambda node: node._ctx[0].__name__  # errors name the user's class


class Function:
    """Base class of custom ops; see the module docstring for an example."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args):
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output):
        raise NotImplementedError("a Function subclass must define backward(ctx, grad_output)")

    @classmethod
    def apply(cls, *args) -> Tensor:
        """Run ``forward`` on the arrays of the Tensor arguments and record the op."""
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        parents = tuple(args[i] for i in positions)
        ctx = FunctionCtx(tuple(isinstance(a, Tensor) and a.requires_grad for a in args))
        raw = [a._data if isinstance(a, Tensor) else a for a in args]
        with no_grad():
            out = cls.forward(ctx, *raw)
        if isinstance(out, tuple):
            raise TypeError(f"{cls.__name__}.forward must return one array, got a tuple")
        if isinstance(out, Tensor):
            out = out._data
        out = as_array(out)
        if not isinstance(out, np.ndarray) or out.dtype.kind not in "biufc":
            raise TypeError(f"{cls.__name__}.forward must return a numeric array, got {type(out).__name__}")
        if out.dtype.kind in "biu":
            # integer results (indices, counts, masks) have no gradient, as in torch
            return constant(out)
        result = make(out, parents, function_backward, (cls, ctx, positions))
        if not result.requires_grad:
            ctx.saved_tensors = ()  # nothing will run backward: keep no memory
        return result

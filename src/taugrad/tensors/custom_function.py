"""Custom ops: define an op by its forward and its backward, as ``torch.autograd.Function``.

Subclass :class:`Function` with two static methods and call ``.apply``::

    import taugrad as torch

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):              # x: a Tensor (forward runs under no_grad)
            y = x.exp()
            ctx.save_for_backward(y)      # keep what backward needs
            return y

        @staticmethod
        def backward(ctx, grad):          # grad: d loss / d output, a Tensor
            (y,) = ctx.saved_tensors
            return grad * y               # d loss / d x: one gradient per forward argument

    x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    Exp.apply(x).sum().backward()         # x.grad == exp(x)

PyTorch's rules:

* ``forward(ctx, *args)`` receives the arguments as given (Tensors stay
  Tensors) and runs without recording a graph.  It returns a Tensor or a tuple
  of Tensors (arrays are accepted too).  Integer or bool outputs, and outputs
  passed to ``ctx.mark_non_differentiable``, do not require grad.
* ``backward(ctx, *grad_outputs)`` gets one gradient per output (a Tensor;
  zeros for an output that received none) and returns one gradient per
  argument of ``forward``, in order: a Tensor of that input's shape, or None.
* ``ctx.save_for_backward(*tensors)`` / ``ctx.saved_tensors``: reading them
  raises if one was changed in place since (its version moved on);
  ``ctx.needs_input_grad[i]``: whether argument ``i`` needs a gradient; any
  other attribute may be set on ``ctx``.
* With ``create_graph=True``, ``backward`` runs in grad mode, so a backward
  written with taugrad ops is differentiable again -- unless it is decorated
  with :func:`once_differentiable`, where differentiating it raises.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from taugrad.grad_mode import STATE as _grad_mode
from taugrad.grad_mode import no_grad
from taugrad.tensors.core.backend import array_module, device_of, is_array, same_backend, to_device
from taugrad.tensors.core.node import Tensor, as_array, constant, make
from taugrad.tensors.core.rule import forward_of, rule


def _version(t: Tensor) -> int:
    return t._version if t._base is None else max(t._version, t._base._version)


class FunctionCtx:
    """The ``ctx`` given to :meth:`Function.forward` and :meth:`Function.backward`."""

    def __init__(self, needs_input_grad: tuple = (), owner: str = "Function"):
        self.needs_input_grad = needs_input_grad
        self._owner = owner  # the Function subclass, so errors name the user's op
        self.materialize_grads = True
        self._saved: tuple = ()
        self._non_differentiable: set = set()

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for ``backward``; read them back from ``ctx.saved_tensors``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save Tensors or None, got {type(t).__name__}")
        self._saved = tuple((t, None if t is None else _version(t)) for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        """The saved tensors; an error if one was modified in place after it was saved."""
        for i, (t, version) in enumerate(self._saved):
            if t is not None and _version(t) > version:
                raise RuntimeError(
                    f"{self._owner}: saved tensor {i} (shape {tuple(t.shape)}, {t.dtype}) was modified by an "
                    f"in-place operation after save_for_backward; the gradient would be wrong. clone() it "
                    f"before changing it, or save a copy"
                )
        return tuple(t for t, _ in self._saved)

    def mark_non_differentiable(self, *outputs) -> None:
        """These outputs of ``forward`` get no gradient (their grad in backward is zeros)."""
        self._non_differentiable.update(id(t) for t in outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` receives zeros (True, default) or None for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    def mark_dirty(self, *tensors) -> None:
        raise NotImplementedError("mark_dirty: custom Functions that change their inputs in place are not supported")


def once_differentiable(backward):
    """Decorator for a ``backward`` that may only be differentiated once (as torch's).

    Under ``create_graph=True`` it runs without recording, and its results
    raise an error if anything tries to differentiate through them.
    """

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        anchors = tuple(t for t in grads + tuple(getattr(ctx, "_graph_inputs", ()))
                        if isinstance(t, Tensor) and t._requires_grad)
        if not anchors or not _grad_mode.enabled:
            return backward(ctx, *grads)
        with no_grad():
            out = backward(ctx, *grads)
        single = not isinstance(out, tuple)
        marked = tuple(None if r is None else make(_as_data(r), anchors, _twice_refused, wrapper.__qualname__)
                       for r in ((out,) if single else out))
        return marked[0] if single else marked

    wrapper._once_differentiable = True
    return wrapper


@rule("once_differentiable")
def _twice_refused(g, out, ins, node):
    """Differentiating a backward marked @once_differentiable: refused."""
    raise RuntimeError(
        f"trying to differentiate twice a function that was marked with @once_differentiable "
        f"({node._ctx}); write its backward with differentiable taugrad ops instead"
    )


def _as_data(x):
    return x._data if isinstance(x, Tensor) else as_array(x)


def _checked_gradient(grad, name: str, position: int, parent: Tensor, graph: bool):
    """One gradient from the user's ``backward``: an array (first order) or a Tensor (create_graph)."""
    here = parent._data
    if isinstance(grad, Tensor):
        data = grad._data
        if not same_backend(data, here):
            raise RuntimeError(f"{name}.backward returned a gradient on {device_of(data)} for argument "
                               f"{position}, which is on {device_of(here)}")
    elif (is_array(grad) or isinstance(grad, (np.generic, int, float))) and not isinstance(grad, bool):
        data = as_array(grad)
        if not same_backend(data, here):  # a host array for a device tensor: moved there
            data = to_device(data, device_of(here))
        grad = constant(data)
    else:
        raise TypeError(
            f"{name}.backward must return a Tensor, an array or None for each forward argument; "
            f"got {type(grad).__name__} for argument {position}"
        )
    if data.dtype.kind == "c" and parent.dtype.kind != "c":
        raise TypeError(
            f"{name}.backward returned a complex gradient ({data.dtype}) for argument {position}, "
            f"which is real ({parent.dtype})"
        )
    if data.dtype.kind not in "biufc":
        raise TypeError(f"{name}.backward returned a gradient of dtype {data.dtype} for argument {position}")
    if data.shape != parent.shape:
        raise RuntimeError(
            f"{name}.backward returned a gradient of shape {tuple(data.shape)} for argument {position}, "
            f"which has shape {tuple(parent.shape)}"
        )
    return grad if graph else data


def _output_grads(g, info):
    """The gradient of each forward output, cut out of the packed gradient ``g``."""
    grads = []
    for offset, shape, differentiable in info:
        size = math.prod(shape)
        piece = g[offset:offset + size].reshape(shape) if differentiable else None
        grads.append(piece)
    return grads


def _class_name(node: Tensor) -> str:
    """Errors and ``grad_fn`` name the user's Function subclass, not the generic rule."""
    return node._ctx[0].__name__


@rule("function", name_of=_class_name)
def function_backward(g, out, ins, node):
    """Calls the user's ``backward`` and checks what it returns."""
    cls, ctx, positions, info = node._ctx
    name = cls.__name__
    graph = isinstance(g, Tensor)
    if info is None:
        grad_outputs = [g if graph else constant(g)]
    else:
        grad_outputs = [p if graph or p is None else constant(p) for p in _output_grads(g, info)]
        if not ctx.materialize_grads:
            grad_outputs = [p if p is None or (_as_data(p) != 0).any() else None for p in grad_outputs]
        else:
            xp = array_module(_as_data(g))
            grad_outputs = [constant(xp.zeros(shape, dtype=g.dtype)) if p is None else p
                            for p, (_, shape, _) in zip(grad_outputs, info)]
    if graph:
        ctx._graph_inputs = node._prev  # for @once_differentiable: what a second derivative would reach
        try:
            grads = cls.backward(ctx, *grad_outputs)
        finally:
            del ctx._graph_inputs
    else:
        with no_grad():
            grads = cls.backward(ctx, *grad_outputs)
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
        out_grads.append(_checked_gradient(grad, name, position, parent, graph))
    return tuple(out_grads)


def _output_array(out, name: str):
    if isinstance(out, Tensor):
        return out._data
    data = as_array(out)
    if not is_array(data) or data.dtype.kind not in "biufc":
        raise TypeError(f"{name}.forward must return Tensors, got {type(out).__name__}")
    return data


class Function:
    """Base class of custom ops; see the module docstring for an example."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args):
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs):
        raise NotImplementedError("a Function subclass must define backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args):
        """Run ``forward`` on the arguments without recording, then record the op as one node."""
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        parents = tuple(args[i] for i in positions)
        recording = _grad_mode.enabled and any(p._requires_grad for p in parents)
        ctx = FunctionCtx(tuple(recording and isinstance(a, Tensor) and a._requires_grad for a in args), cls.__name__)
        with no_grad():
            out = cls.forward(ctx, *args)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        arrays = [_output_array(o, cls.__name__) for o in outs]
        differentiable = [a.dtype.kind in "fc" and id(o) not in ctx._non_differentiable for o, a in zip(outs, arrays)]
        if not recording or not any(differentiable):
            ctx._saved = ()  # nothing will run backward: keep no memory
            results = tuple(o if isinstance(o, Tensor) and o._rule is None and not o._requires_grad
                            else constant(a) for o, a in zip(outs, arrays))
            return results[0] if single else results
        if single:
            return make(arrays[0], parents, function_backward, (cls, ctx, positions, None))
        return _packed_outputs(cls, ctx, positions, parents, arrays, differentiable)


def _packed_outputs(cls, ctx, positions, parents, arrays, differentiable) -> tuple:
    """Several outputs: one node holds them all (flattened, side by side), each output a piece of it.

    The node's rule then receives all the outputs' gradients at once, as the
    user's ``backward`` wants them.
    """
    dtype = np.result_type(*[a.dtype for a, d in zip(arrays, differentiable) if d])
    info, pieces, offset = [], [], 0
    for a, d in zip(arrays, differentiable):
        info.append((offset, a.shape, d))
        if d:
            pieces.append(a.astype(dtype, copy=False).reshape(-1))
            offset += a.size
    packed = make(array_module(pieces[0]).concatenate(pieces), parents, function_backward, (cls, ctx, positions, tuple(info)))
    results = []
    for a, (start, shape, d) in zip(arrays, info):
        if not d:
            results.append(constant(a))
            continue
        piece = forward_of("reshape")(packed[start:start + a.size], shape)
        results.append(piece if a.dtype == dtype else piece.to(a.dtype))
    return tuple(results)

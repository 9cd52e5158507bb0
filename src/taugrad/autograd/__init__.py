"""``taugrad.autograd``: the public face of reverse mode, for both engines (PyTorch's namespace).

Nothing inside the engines imports this package; it sits on top of them:

* :func:`grad` -- one function for ``Value`` and ``Tensor`` graphs (below);
* :func:`backward` -- ``torch.autograd.backward(tensors, grad_tensors)``;
* :class:`Function`, :class:`FunctionCtx`, :func:`once_differentiable` -- custom ops;
* :mod:`taugrad.autograd.functional` -- ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``;
* :func:`~taugrad.graph.topological_order` -- the shared graph walk;
* grad mode: :class:`no_grad`, :class:`enable_grad`, :class:`set_grad_enabled`,
  :func:`is_grad_enabled`, :class:`inference_mode`;
* PyTorch's anomaly mode, :class:`detect_anomaly` and :class:`set_detect_anomaly`
  (:mod:`taugrad.autograd.anomaly_mode`; taugrad's stricter one is :func:`taugrad.detect_anomaly`);
* :func:`gradcheck`, :func:`gradgradcheck`.

``grad(outputs, inputs)``
returns d(outputs)/d(inputs) without touching
``.grad``.  It looks at what it is given and hands the work to the engine that
owns those nodes:

* ``Value`` outputs  -> :func:`taugrad.scalar.higher.grad` (floats, or Values
  with ``create_graph=True``);
* ``Tensor`` outputs -> :func:`taugrad.tensors.engine.grad`.

With ``create_graph=True`` the gradients are graphs themselves and can be
differentiated again, to any order.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from taugrad.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from taugrad.graph import topological_order
from taugrad.scalar.higher import grad as value_grad
from taugrad.scalar.value import Value
from taugrad.tensors import engine as tensor_engine
from taugrad.tensors.custom_function import Function, FunctionCtx, once_differentiable
from taugrad.tensors.core.node import Tensor
from taugrad.autograd import anomaly_mode, functional
from taugrad.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from taugrad.autograd.gradcheck import gradcheck, gradgradcheck
from taugrad.autograd.variable import Variable
from taugrad.grad_mode import inference_mode

__all__ = ["grad", "backward", "Variable", "Function", "FunctionCtx", "once_differentiable", "functional", "topological_order",
           "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode", "anomaly_mode",
           "detect_anomaly", "set_detect_anomaly", "gradcheck", "gradgradcheck"]


def _first(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return x[0] if x else None
    return x


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Optional[Any] = None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: Optional[bool] = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> Tuple[Any, ...]:
    """Gradients of ``sum_i grad_outputs[i] * outputs[i]`` with respect to each input.

    ``outputs``/``inputs``: a node or a sequence of nodes, all ``Tensor`` or all
    ``Value``.  ``grad_outputs`` defaults to ones (required for non-scalar
    Tensor outputs).  Returns a tuple with one gradient per input; an input the
    outputs do not reach is an error unless ``allow_unused=True`` (then None)
    or ``materialize_grads=True`` (then zeros of its shape).
    ``create_graph=True`` records the backward pass, so the returned gradients
    can be differentiated again.  ``retain_graph`` (Tensors only; Value graphs
    are never freed) defaults to ``create_graph``.  ``only_inputs`` is accepted
    and ignored, as torch ignores it since it was deprecated; ``is_grads_batched=True``
    (vmap over ``grad_outputs``) is refused rather than computed another way.
    """
    if is_grads_batched:
        raise NotImplementedError("grad: is_grads_batched=True is not supported; call grad once per grad_outputs row")
    out0, in0 = _first(outputs), _first(inputs)
    if isinstance(out0, Value) or isinstance(in0, Value):
        if not (isinstance(out0, Value) and isinstance(in0, Value)):
            raise TypeError(
                "grad: outputs and inputs must both be Values or both be Tensors, got "
                f"{type(out0).__name__} outputs and {type(in0).__name__} inputs"
            )
        if materialize_grads:
            raise NotImplementedError("grad: materialize_grads=True is for Tensor graphs")
        return value_grad(outputs, inputs, grad_outputs, create_graph=create_graph, allow_unused=bool(allow_unused))
    return tensor_engine.grad(outputs, inputs, grad_outputs, retain_graph=retain_graph, create_graph=create_graph,
                              allow_unused=allow_unused, materialize_grads=materialize_grads)


def backward(tensors: Any, grad_tensors: Optional[Any] = None, retain_graph: Optional[bool] = None,
             create_graph: bool = False, inputs: Optional[Any] = None) -> None:
    """Accumulate into ``.grad`` the gradient of ``sum_i grad_tensors[i] * tensors[i]`` (torch.autograd.backward).

    ``tensors``: a Tensor or a sequence of them; ``grad_tensors``: one gradient
    per tensor (None for a one-element tensor: then 1).  ``inputs``: if given,
    only these tensors accumulate a gradient.
    """
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    grad_tensors = tuple(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"backward: {len(grad_tensors)} grad_tensors for {len(tensors)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        tensor_engine.backward_into(tensors, grad_tensors, retain_graph, create_graph, inputs)
        return
    if len(tensors) == 1:
        tensors[0].backward(grad_tensors[0], retain_graph=retain_graph, create_graph=create_graph)
        return
    # several roots: one pass over their sum weighted by grad_tensors (each shared node runs once)
    total = None
    for t, g in zip(tensors, grad_tensors):
        term = t.sum() if g is None else (t * (g if isinstance(g, Tensor) else Tensor(g))).sum()
        total = term if total is None else total + term
    total.backward(retain_graph=retain_graph, create_graph=create_graph)

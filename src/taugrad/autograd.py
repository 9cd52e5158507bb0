"""``taugrad.autograd``: the public face of reverse mode, for both engines.

Nothing inside the engines imports this module; it sits on top of them:

* :func:`grad` -- one function for ``Value`` and ``Tensor`` graphs (below);
* :func:`~taugrad.graph.topological_order` -- the shared graph walk;
* grad mode: :class:`no_grad`, :class:`enable_grad`, :class:`set_grad_enabled`,
  :func:`is_grad_enabled`.

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

__all__ = ["grad", "topological_order", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]


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
    allow_unused: bool = False,
) -> Tuple[Any, ...]:
    """Gradients of ``sum_i grad_outputs[i] * outputs[i]`` with respect to each input.

    ``outputs``/``inputs``: a node or a sequence of nodes, all ``Tensor`` or all
    ``Value``.  ``grad_outputs`` defaults to ones (required for non-scalar
    Tensor outputs).  Returns a tuple with one gradient per input; an input the
    outputs do not reach is an error unless ``allow_unused=True`` (then None).
    ``create_graph=True`` records the backward pass, so the returned gradients
    can be differentiated again.  ``retain_graph`` (Tensors only; Value graphs
    are never freed) defaults to ``create_graph``.
    """
    out0, in0 = _first(outputs), _first(inputs)
    if isinstance(out0, Value) or isinstance(in0, Value):
        if not (isinstance(out0, Value) and isinstance(in0, Value)):
            raise TypeError(
                "grad: outputs and inputs must both be Values or both be Tensors, got "
                f"{type(out0).__name__} outputs and {type(in0).__name__} inputs"
            )
        return value_grad(outputs, inputs, grad_outputs, create_graph=create_graph, allow_unused=allow_unused)
    return tensor_engine.grad(
        outputs, inputs, grad_outputs, retain_graph=retain_graph, create_graph=create_graph, allow_unused=allow_unused
    )

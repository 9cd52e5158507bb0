"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""SGD as in ``torch.optim.SGD``; one step for a parameter ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                               if maximize
        g = g + weight_decay * p             (L2 penalty folded into the gradient)
        if momentum != 0:
            b = g                            on the first step
            b = momentum * b + (1 - dampening) * g   afterwards
            g = g + momentum * b             if nesterov, else g = b
        p = p - lr * g

    ``nesterov=True`` needs ``momentum > 0`` and ``dampening == 0``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: Optional[bool] = None,
        differentiable: bool = False,
        fused: Optional[bool] = None,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("momentum", group["momentum"])
        check_number("dampening", group["dampening"])
        check_number("weight_decay", group["weight_decay"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires momentum > 0 and dampening = 0")

    _elementwise_update = True  # each element from the same elements only: a group may run as one array

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        momentum = group["momentum"]
        if momentum != 0:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                # a copy, on the parameter's device
                buffer = state["momentum_buffer"] = array_module(param).array(grad, dtype=param.dtype)
            else:
                buffer *= momentum
                buffer += (1 - group["dampening"]) * grad
            grad = grad + momentum * buffer if group["nesterov"] else buffer
        param -= group["lr"] * grad

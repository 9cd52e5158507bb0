"""RMSprop: divide the gradient by a running root mean square (Hinton's lecture 6e; Graves 2013 centred)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop as in ``torch.optim.RMSprop``; one step for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                   if maximize
        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g**2       v0 = 0
        if centered:
            m = m + (1 - alpha) * (g - m)        running mean of g, m0 = 0
            d = sqrt(v - m**2) + eps
        else:
            d = sqrt(v) + eps
        if momentum > 0:
            b = momentum * b + g / d             b0 = 0
            p = p - lr * b
        else:
            p = p - lr * g / d
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        capturable: bool = False,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                        centered=centered, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("epsilon value", group["eps"])
        check_number("momentum value", group["momentum"])
        check_number("weight_decay value", group["weight_decay"])
        check_number("alpha value", group["alpha"])

    _elementwise_update = True  # each element from the same elements only: a group may run as one array

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)  # state and temporaries on the parameter's device
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(param)
            if group["momentum"] > 0:
                state["momentum_buffer"] = xp.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = xp.zeros_like(param)
        state["step"] += 1
        alpha, eps, lr = group["alpha"], group["eps"], group["lr"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg += (1 - alpha) * (grad - grad_avg)
            avg = xp.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = xp.sqrt(square_avg)
        avg += eps
        if group["momentum"] > 0:
            buffer = state["momentum_buffer"]
            buffer *= group["momentum"]
            buffer += grad / avg
            param -= lr * buffer
        else:
            param -= lr * grad / avg

"""Adadelta: steps scaled by the ratio of running RMS of updates and of gradients (Zeiler, 2012)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta as in ``torch.optim.Adadelta``; one step for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                   if maximize
        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g**2           v0 = 0
        d = sqrt(u + eps) / sqrt(v + eps) * g    u0 = 0
        u = rho * u + (1 - rho) * d**2
        p = p - lr * d

    ``lr`` defaults to 1.0, as in the paper and PyTorch.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        foreach: Optional[bool] = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("rho value", group["rho"], 0.0, 1.0)
        check_number("epsilon value", group["eps"])
        check_number("weight_decay value", group["weight_decay"])

    _elementwise_update = True  # each element from the same elements only: a group may run as one array

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)  # state and temporaries on the parameter's device
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(param)
            state["acc_delta"] = xp.zeros_like(param)
        state["step"] += 1
        rho, eps = group["rho"], group["eps"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        param -= group["lr"] * delta

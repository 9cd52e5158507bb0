"""Adagrad: per-coordinate steps shrinking with the sum of squared gradients (Duchi et al., 2011)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad as in ``torch.optim.Adagrad``; step ``t`` (from 1) for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                   if maximize
        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g**2                             s0 = initial_accumulator_value
        p = p - clr * g / (sqrt(s) + eps)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        foreach: Optional[bool] = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: Optional[bool] = None,
    ) -> None:
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("lr_decay value", group["lr_decay"])
        check_number("weight_decay value", group["weight_decay"])
        check_number("initial_accumulator_value", group["initial_accumulator_value"])
        check_number("epsilon value", group["eps"])

    _elementwise_update = True  # each element from the same elements only: a group may run as one array

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)  # state and temporaries on the parameter's device
        if not state:
            state["step"] = 0
            state["sum"] = xp.full_like(param, group["initial_accumulator_value"])
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        total = state["sum"]
        total += grad * grad
        param -= clr * grad / (xp.sqrt(total) + group["eps"])

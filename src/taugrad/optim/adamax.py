"""Adamax: Adam with the infinity norm in place of the second moment (Kingma & Ba, 2015, section 7)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Tuple

from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module

__all__ = ["Adamax"]


def check_betas(betas: Any) -> None:
    """Two numbers in [0, 1), named in the error as PyTorch names them."""
    if len(betas) != 2:
        raise ValueError(f"invalid betas: {betas!r} (need two numbers)")
    check_number("beta parameter at index 0", betas[0], 0.0, 1.0, high_open=True)
    check_number("beta parameter at index 1", betas[1], 0.0, 1.0, high_open=True)


class Adamax(Optimizer):
    r"""Adamax as in ``torch.optim.Adamax``; step ``t`` (from 1) for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                   if maximize
        g = g + weight_decay * p
        m = m + (1 - beta1) * (g - m)            m0 = 0
        u = max(beta2 * u, |g| + eps)            u0 = 0
        p = p - lr / (1 - beta1**t) * m / u
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        foreach: Optional[bool] = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("epsilon value", group["eps"])
        check_betas(group["betas"])
        check_number("weight_decay value", group["weight_decay"])

    _elementwise_update = True  # each element from the same elements only: a group may run as one array

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)  # state and temporaries on the parameter's device
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(param)
            state["exp_inf"] = xp.zeros_like(param)
        state["step"] += 1
        beta1, beta2 = group["betas"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg += (1 - beta1) * (grad - exp_avg)
        exp_inf *= beta2
        xp.maximum(exp_inf, xp.abs(grad) + group["eps"], out=exp_inf)
        param -= group["lr"] / (1 - beta1 ** state["step"]) * exp_avg / exp_inf

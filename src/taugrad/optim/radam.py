"""RAdam: Adam with its adaptive step rectified while the second moment is young (Liu et al., 2020)."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Optional, Tuple

from taugrad.optim.adamax import check_betas
from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam as in ``torch.optim.RAdam``; step ``t`` (from 1) for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                   if maximize
        g = g + weight_decay * p                 (decoupled_weight_decay: p = p * (1 - lr * weight_decay))
        m = m + (1 - beta1) * (g - m)            m0 = 0
        v = beta2 * v + (1 - beta2) * g**2       v0 = 0
        m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        if rho_t > 5:   (the variance of the adaptive step is tractable)
            r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
            p = p - lr * m_hat * r * sqrt(1 - beta2**t) / (sqrt(v) + eps)
        else:           (momentum SGD while it is not)
            p = p - lr * m_hat
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("epsilon value", group["eps"])
        check_betas(group["betas"])
        check_number("weight_decay value", group["weight_decay"])

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)  # state and temporaries on the parameter's device
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(param)
            state["exp_avg_sq"] = xp.zeros_like(param)
        state["step"] += 1
        step = state["step"]
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg += (1 - beta1) * (grad - exp_avg)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = math.sqrt(bias_correction2) / (xp.sqrt(exp_avg_sq) + eps)
            param -= corrected * lr * adaptive * rect
        else:
            param -= corrected * lr

"""NAdam: Adam with Nesterov momentum and a momentum schedule (Dozat, 2016)."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Optional, Tuple

from taugrad.optim.adamax import check_betas
from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam as in ``torch.optim.NAdam``; step ``t`` (from 1) for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                   if maximize
        p = p * (1 - lr * weight_decay)          if decoupled_weight_decay (NAdamW)
        g = g + weight_decay * p                 otherwise
        mu_t = beta1 * (1 - 0.96**(t * momentum_decay) / 2)
        P_t = mu_1 * ... * mu_t                  (state "mu_product")
        m = m + (1 - beta1) * (g - m)            m0 = 0
        v = beta2 * v + (1 - beta2) * g**2       v0 = 0
        d = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - P_t) * g / d - lr * mu_{t+1} / (1 - P_t * mu_{t+1}) * m / d

    PyTorch keeps ``mu_product`` in a tensor of its default float dtype (float32
    unless changed); here it is a Python float, so float64 parameters agree with
    PyTorch run under ``torch.set_default_dtype(torch.float64)``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("epsilon value", group["eps"])
        check_betas(group["betas"])
        check_number("weight_decay value", group["weight_decay"])
        check_number("momentum_decay value", group["momentum_decay"])

    _elementwise_update = True  # each element from the same elements only: a group may run as one array

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)  # state and temporaries on the parameter's device
        if not state:
            state["step"] = 0
            state["mu_product"] = 1.0
            state["exp_avg"] = xp.zeros_like(param)
            state["exp_avg_sq"] = xp.zeros_like(param)
        state["step"] += 1
        step = state["step"]
        lr, weight_decay, decay = group["lr"], group["weight_decay"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        mu = beta1 * (1.0 - 0.5 * math.pow(0.96, step * decay))
        mu_next = beta1 * (1.0 - 0.5 * math.pow(0.96, (step + 1) * decay))
        state["mu_product"] *= mu
        mu_product = state["mu_product"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg += (1 - beta1) * (grad - exp_avg)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        denom = xp.sqrt(exp_avg_sq / (1 - beta2**step)) + group["eps"]
        param -= (lr * (1.0 - mu) / (1.0 - mu_product)) * grad / denom
        param -= (lr * mu_next / (1.0 - mu_product * mu_next)) * exp_avg / denom

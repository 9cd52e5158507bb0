"""Adam and AdamW: adaptive moment estimation (Kingma & Ba, 2015; Loshchilov & Hutter, 2019)."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Tuple

import numpy as np

from taugrad.optim.optimizer import Optimizer, check_number

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    r"""Adam as in ``torch.optim.Adam``; step ``t`` (from 1) for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                  if maximize
        g = g + weight_decay * p                (Adam: L2 penalty in the gradient)
        p = p - lr * weight_decay * p           (AdamW instead: decoupled decay)
        m = beta1 * m + (1 - beta1) * g         first moment, m0 = 0
        v = beta2 * v + (1 - beta2) * g**2      second moment, v0 = 0
        m_hat = m / (1 - beta1**t)
        v_hat = v / (1 - beta2**t)              (amsgrad: v_max = max(v_max, v), v_hat from v_max)
        p = p - lr * m_hat / (sqrt(v_hat) + eps)
    """

    _decoupled_weight_decay = False

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("epsilon", group["eps"])
        betas = group["betas"]
        if len(betas) != 2:
            raise ValueError(f"invalid betas: {betas!r} (need two numbers)")
        check_number("beta parameter at index 0", betas[0], 0.0, 1.0, high_open=True)
        check_number("beta parameter at index 1", betas[1], 0.0, 1.0, high_open=True)
        check_number("weight_decay", group["weight_decay"])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        state["step"] += 1
        step = state["step"]
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]

        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            if self._decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param

        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg *= beta1
        exp_avg += (1 - beta1) * grad
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
            second_moment = state["max_exp_avg_sq"]
        else:
            second_moment = exp_avg_sq

        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        denominator = np.sqrt(second_moment) / math.sqrt(bias_correction2) + eps
        param -= (lr / bias_correction1) * exp_avg / denominator


class AdamW(Adam):
    """Adam with decoupled weight decay (``torch.optim.AdamW``): ``p = p - lr * weight_decay * p``
    before the Adam step, instead of adding ``weight_decay * p`` to the gradient.  Default
    ``weight_decay=1e-2`` as in PyTorch."""

    _decoupled_weight_decay = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)

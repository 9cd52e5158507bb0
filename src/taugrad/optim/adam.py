"""Adam and AdamW: adaptive moment estimation (Kingma & Ba, 2015; Loshchilov & Hutter, 2019)."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Optional, Tuple

from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.node import Tensor

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    r"""Adam as in ``torch.optim.Adam``; step ``t`` (from 1) for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                  if maximize
        g = g + weight_decay * p                (Adam: L2 penalty in the gradient)
        p = p - lr * weight_decay * p           (instead, AdamW or decoupled_weight_decay=True)
        m = beta1 * m + (1 - beta1) * g         first moment, m0 = 0
        v = beta2 * v + (1 - beta2) * g**2      second moment, v0 = 0
        m_hat = m / (1 - beta1**t)
        v_hat = v / (1 - beta2**t)              (amsgrad: v_max = max(v_max, v), v_hat from v_max)
        p = p - lr * m_hat / (sqrt(v_hat) + eps)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: Optional[bool] = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        defaults = dict(lr=lr, betas=tuple(float(b) for b in betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused, decoupled_weight_decay=decoupled_weight_decay)
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

    # A model has many small parameters (the lecture's GPT: 94 tensors) and the rule a dozen array
    # operations: run per parameter, a step is mostly call overhead.  So a group not packed on a
    # device is gathered into one array, stepped once, and copied back (optim/packed.py).
    _gather_unpacked = True
    _elementwise_update = True  # each element from the same elements only: a group may run as one array

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)  # state and temporaries on the parameter's device
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(param)
            state["exp_avg_sq"] = xp.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = xp.zeros_like(param)
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

        # every term in place through one scratch array: a model has many small
        # parameters, and each temporary costs an allocation per parameter per step
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        scratch = xp.multiply(grad, 1 - beta1, dtype=param.dtype)
        exp_avg *= beta1
        exp_avg += scratch
        xp.multiply(grad, 1 - beta2, out=scratch)
        scratch *= grad
        exp_avg_sq *= beta2
        exp_avg_sq += scratch
        if group["amsgrad"]:
            xp.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
            second_moment = state["max_exp_avg_sq"]
        else:
            second_moment = exp_avg_sq

        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        denominator = xp.sqrt(second_moment, out=scratch)
        denominator /= math.sqrt(bias_correction2)
        denominator += eps
        update = xp.divide(exp_avg, denominator, out=scratch)
        update *= lr / bias_correction1
        param -= update


class AdamW(Adam):
    """Adam with decoupled weight decay (``torch.optim.AdamW``): ``p = p - lr * weight_decay * p``
    before the Adam step, instead of adding ``weight_decay * p`` to the gradient.  Default
    ``weight_decay=1e-2`` as in PyTorch."""

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
        foreach: Optional[bool] = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: Optional[bool] = None,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

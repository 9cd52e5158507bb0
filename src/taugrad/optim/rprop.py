"""Rprop: resilient backpropagation, a step size per element from the signs of the gradient (Riedmiller & Braun, 1993)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Tuple

from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Rprop as in ``torch.optim.Rprop``; one step for ``p`` with gradient ``g`` (elementwise):

    .. code-block:: text

        g = -g                                   if maximize
        s = sign(g * g_prev)                     g_prev0 = 0; step size d0 = lr
        d = clamp(d * eta_plus, min_step, max_step)    where s > 0
        d = clamp(d * eta_minus, min_step, max_step)   where s < 0, and there g = 0 (no step, no memory)
        p = p - sign(g) * d
        g_prev = g

    Only the sign of the gradient is used: ``etas = (eta_minus, eta_plus)``
    with ``0 < eta_minus < 1 < eta_plus``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: Tuple[float, float] = (0.5, 1.2),
        step_sizes: Tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        eta_minus, eta_plus = group["etas"]
        if not 0.0 < eta_minus < 1.0 < eta_plus:
            raise ValueError(f"Invalid eta values: {eta_minus}, {eta_plus}")

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)
        if not state:
            state["step"] = 0
            state["prev"] = xp.zeros_like(param)
            state["step_size"] = xp.full_like(param, group["lr"])
        state["step"] += 1
        eta_minus, eta_plus = group["etas"]
        step_min, step_max = group["step_sizes"]
        if group["maximize"]:
            grad = -grad
        prev, step_size = state["prev"], state["step_size"]
        sign = xp.sign(grad * prev)
        factor = xp.where(sign > 0, eta_plus, xp.where(sign < 0, eta_minus, 1.0)).astype(param.dtype)
        step_size *= factor
        xp.clip(step_size, step_min, step_max, out=step_size)
        grad = xp.where(factor == eta_minus, 0, grad).astype(param.dtype)
        param -= xp.sign(grad) * step_size
        prev[...] = grad

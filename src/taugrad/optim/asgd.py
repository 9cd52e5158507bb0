"""ASGD: SGD whose iterates are averaged from step ``t0`` on (Polyak & Juditsky, 1992)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.core.backend import array_module

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Averaged SGD as in ``torch.optim.ASGD``; step ``t`` (from 1) for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                   if maximize
        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g      eta0 = lr
        ax = ax + mu * (p - ax)                  (ax = p while mu = 1), ax0 = 0, mu0 = 1
        eta = lr / (1 + lambd * lr * t)**alpha
        mu = 1 / max(1, t - t0)

    ``state[p]["ax"]`` is the averaged parameter.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("weight_decay value", group["weight_decay"])

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)
        if not state:
            state["step"] = 0
            state["eta"] = group["lr"]
            state["mu"] = 1.0
            state["ax"] = xp.zeros_like(param)
        state["step"] += 1
        step = state["step"]
        lr, lambd = group["lr"], group["lambd"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        eta, mu = state["eta"], state["mu"]
        param *= 1 - lambd * eta
        param -= eta * grad
        ax = state["ax"]
        if mu != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        state["eta"] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"] = 1 / max(1, step - group["t0"])

"""Learning-rate schedules, as ``torch.optim.lr_scheduler``.

A scheduler sets ``group["lr"]`` of every parameter group of its optimizer.
Call ``scheduler.step()`` once per epoch (or per batch for :class:`OneCycleLR`),
after ``optimizer.step()``.  Creating a scheduler performs its first step, which
sets the epoch-0 rate.

The rates follow PyTorch's *recursive* formulas: most schedules multiply the
group's current ``lr`` by a factor, so two schedulers on one optimizer compose
(their factors multiply) and a rate changed by hand carries on, exactly as in
PyTorch.  :class:`LambdaLR`, :class:`CosineAnnealingWarmRestarts` and
:class:`OneCycleLR` compute the rate from the step number and the base rate.

``step(epoch)``, deprecated in PyTorch, works as there: it warns, jumps to
``epoch`` and takes the closed form where the schedule has one.  Not
provided: PyTorch's warning when ``scheduler.step()`` comes before
``optimizer.step()``.
"""
from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from taugrad.optim.optimizer import Optimizer, check_number

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "MultiplicativeLR",
    "CyclicLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "PolynomialLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "SequentialLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
]


#: PyTorch's words when ``step()`` is given an epoch.
EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _group_values(optimizer: Optimizer, key: str) -> List[Any]:
    return [_number(group[key]) for group in optimizer.param_groups]


def _number(value: Any) -> Any:
    """A one-element tensor hyperparameter (``lr=tensor(0.01)``) as its number, anything else as it is."""
    return value.item() if hasattr(value, "item") and hasattr(value, "_data") else value


def _set_lr(group: Dict[str, Any], lr: Any) -> None:
    """``group["lr"] = lr``; into the tensor itself where the rate is a tensor, as PyTorch fills it."""
    held = group["lr"]
    if hasattr(held, "_data") and hasattr(held, "fill_"):
        held._data[...] = _number(lr)
    else:
        group["lr"] = lr


def _per_group(name: str, optimizer: Optimizer, value: Any) -> List[Any]:
    """One value per parameter group: a list of that length, or a single value repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} has {len(value)} values, the optimizer has "
                             f"{len(optimizer.param_groups)} parameter groups")
        return list(value)
    return [value] * len(optimizer.param_groups)


def _check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not a taugrad optimizer")


def _check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


class LRScheduler:
    """Base class: keeps ``last_epoch`` (the number of steps taken) and writes ``get_lr()`` into the groups.

    ``get_lr()`` is called inside ``step()`` after ``last_epoch`` has advanced;
    during the constructor's first step ``self._is_initial`` is true.
    """

    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if hasattr(lr, "_data") else lr)  # a tensor rate is filled in place
        else:
            for number, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"resuming a schedule (last_epoch={last_epoch}) needs 'initial_lr' in "
                                   f"parameter group {number}: load the optimizer's state dict first")
        self.base_lrs: List[float] = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> List[float]:
        """The learning rate of each group at step ``self.last_epoch``."""
        raise NotImplementedError

    def step(self, epoch: Optional[int] = None) -> None:
        """Advance one step and set the new learning rates.

        ``step(epoch)`` (deprecated, as in PyTorch: it warns) jumps to step
        ``epoch``, from the schedule's closed form where it has one.
        """
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: Optional[int] = None) -> None:
        """Set the rates for the next step, or for step ``epoch`` from the closed form (SequentialLR's restart)."""
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_lr(group, lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    def get_last_lr(self) -> List[float]:
        """The learning rates set by the latest ``step()``."""
        return list(self._last_lr)

    def state_dict(self) -> Dict[str, Any]:
        """Everything but the optimizer (which has its own state dict)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)``; one function, or one per parameter group.

    The state dict holds the ``__dict__`` of callable objects, not plain
    functions or lambdas (which cannot be saved), as in PyTorch.
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Union[Callable[[int], float], Sequence[Callable]],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        lambdas = _per_group("lr_lambda", optimizer, lr_lambda)
        for fn in lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda must be a function, got {type(fn).__name__}")
        self.lr_lambdas: List[Callable[[int], float]] = lambdas
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> Dict[str, Any]:
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class MultiplicativeLR(LRScheduler):
    """``lr = lr * lr_lambda(epoch)`` at every step after the first: the factors multiply up.

    One function, or one per parameter group; saved in the state dict as for
    :class:`LambdaLR`.
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Union[Callable[[int], float], Sequence[Callable]],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        lambdas = _per_group("lr_lambda", optimizer, lr_lambda)
        for fn in lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        self.lr_lambdas: List[Callable[[int], float]] = lambdas
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        lrs = _group_values(self.optimizer, "lr")
        if self._is_initial:
            return lrs
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, lrs)]

    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict


class StepLR(LRScheduler):
    """Multiply by ``gamma`` every ``step_size`` epochs: ``lr = base_lr * gamma ** (epoch // step_size)``."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = _check_positive_int("step_size", step_size)
        check_number("gamma", gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> List[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply by ``gamma`` at each milestone epoch (a milestone listed twice multiplies by ``gamma**2``)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        check_number("gamma", gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> List[float]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """``base_lr * factor`` for the first ``total_iters`` epochs, then ``base_lr``."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        check_number("factor", factor, 0.0, 1.0)
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> List[float]:
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor goes linearly from ``start_factor`` to ``end_factor`` over ``total_iters`` epochs, then stays.

    ``lr = base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters)``
    (reached through PyTorch's ratio of consecutive factors).
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"start_factor must be in (0, 1], got {start_factor!r}")
        check_number("end_factor", end_factor, 0.0, 1.0)
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> List[float]:
        fraction = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor) * fraction)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply by ``gamma`` every epoch: ``lr = base_lr * gamma ** epoch``."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        check_number("gamma", gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> List[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = _check_positive_int("total_iters", total_iters)
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        factor = ((1.0 - self.last_epoch / self.total_iters)
                  / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> List[float]:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Cosine annealing (SGDR without restarts, Loshchilov & Hutter 2017)::

        lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2

    reached recursively as in PyTorch.  It reaches ``eta_min`` at
    ``epoch = T_max``; past it the cosine continues (the rate rises again).
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = _check_positive_int("T_max", T_max)
        check_number("eta_min", eta_min)
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return self._get_closed_form_lr()
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:  # the bottom: the ratio below is 0/0
            rise = (1 - math.cos(math.pi / self.T_max)) / 2
            return [group["lr"] + (base_lr - self.eta_min) * rise for base_lr, group in zip(self.base_lrs, groups)]
        ratio = ((1 + math.cos(math.pi * self.last_epoch / self.T_max))
                 / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)))
        return [ratio * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> List[float]:
        cosine = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * cosine for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""SGDR (Loshchilov & Hutter 2017): cosine annealing restarted every ``T_i`` epochs::

        lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2

    ``T_cur`` counts epochs since the last restart; the first period is ``T_0``
    and each next one ``T_mult`` times longer.  ``step(epoch)`` accepts a
    fractional epoch (call it per batch with ``epoch + i / iters``), as PyTorch.
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        self.T_0 = _check_positive_int("T_0", T_0)
        self.T_mult = _check_positive_int("T_mult", T_mult)
        check_number("eta_min", eta_min)
        self.T_i = T_0
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        cosine = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * cosine for base_lr in self.base_lrs]

    def step(self, epoch: Optional[float] = None) -> None:
        """Advance one epoch, or jump to ``epoch`` (possibly fractional)."""
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"epoch must be non-negative, got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            _set_lr(group, lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    r"""The 1cycle policy (Smith & Topin 2018), stepped once per *batch*, ``total_steps`` times in all.

    The rate rises from ``max_lr / div_factor`` to ``max_lr`` over the first
    ``pct_start * total_steps - 1`` steps, then falls to
    ``max_lr / div_factor / final_div_factor`` at step ``total_steps - 1``
    (``three_phase``: back to the initial rate first, then down), each leg a
    half cosine (``anneal_strategy="cos"``) or a straight line.  With
    ``cycle_momentum`` the momentum (``betas[0]`` for Adam-like optimizers) runs
    the opposite way between ``max_momentum`` and ``base_momentum``.  Stepping
    past ``total_steps`` is an error, as in PyTorch.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: Union[float, List[float]],
        total_steps: Optional[int] = None,
        epochs: Optional[int] = None,
        steps_per_epoch: Optional[int] = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: Union[float, List[float]] = 0.85,
        max_momentum: Union[float, List[float]] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            self.total_steps = _check_positive_int("total_steps", total_steps)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = _check_positive_int("epochs", epochs) * _check_positive_int("steps_per_epoch",
                                                                                           steps_per_epoch)
        else:
            raise ValueError("OneCycleLR needs total_steps, or both epochs and steps_per_epoch")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"pct_start must be a float in [0, 1], got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        up = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or betas with cycle_momentum=True")
            self.use_beta1 = "betas" in optimizer.defaults
            highs = _per_group("max_momentum", optimizer, max_momentum)
            lows = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for high, low, group in zip(highs, lows, optimizer.param_groups):
                    self._set_momentum(group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: Dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> List[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step} times; total_steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for number, (end_step, lr_from, lr_to, momentum_from, momentum_to) in enumerate(self._schedule_phases):
                if step <= end_step or number == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[momentum_from], group[momentum_to], pct))
                    break
                start_step = end_step
        return lrs


class CyclicLR(LRScheduler):
    r"""Cyclical learning rates (Smith 2017), stepped once per *batch*: the rate goes from ``base_lr`` up to
    ``max_lr`` in ``step_size_up`` steps and back down in ``step_size_down``, as ``torch.optim.lr_scheduler.CyclicLR``.

    .. code-block:: text

        cycle = floor(1 + t / (up + down));  x = 1 + t / (up + down) - cycle
        s = x / r if x <= r else (x - 1) / (r - 1)          r = up / (up + down)
        lr = base_lr + (max_lr - base_lr) * s * scale(cycle or t)
        scale: triangular 1;  triangular2 1 / 2**(cycle - 1);  exp_range gamma**t;  or scale_fn

    With ``cycle_momentum`` the momentum (or Adam's ``beta1``) runs the other
    way, from ``max_momentum`` down to ``base_momentum``.
    """

    def __init__(self, optimizer: Optimizer, base_lr: Union[float, List[float]], max_lr: Union[float, List[float]],
                 step_size_up: int = 2000, step_size_down: Optional[int] = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Optional[Callable[[float], float]] = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: float = 0.8, max_momentum: float = 0.9,
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_lr(group, lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for high, low, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is None and self.mode in ("triangular", "triangular2"):
            self.scale_mode = "cycle"
        elif self._scale_fn_custom is None:
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def _set_momentum(self, group: Dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self) -> List[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [low + (high - low) * factor * self.scale_fn(at) for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(group, high - (high - low) * factor * self.scale_fn(at))
        return lrs

    def state_dict(self) -> Dict[str, Any]:
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else dict(fn.__dict__)
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom")
        custom = self._scale_fn_custom
        super().load_state_dict(state)
        self._scale_fn_custom = custom
        if fn is not None and custom is not None:
            custom.__dict__.update(fn)
        self._init_scale_fn()


class _SchedulerContainer(LRScheduler):
    """What SequentialLR and ChainedScheduler share: a state dict holding each inner scheduler's.
    Private, so that a ``ChainedScheduler`` is no ``SequentialLR``, as in PyTorch."""

    def state_dict(self) -> Dict[str, Any]:
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, inner in zip(self._schedulers, saved):
            scheduler.load_state_dict(inner)


class SequentialLR(_SchedulerContainer):
    """Run ``schedulers[i]`` from ``milestones[i - 1]`` on; each one restarts at its milestone.

    At a milestone the next scheduler's rate is set from its closed form at
    step 0, as PyTorch does.
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int],
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        if len(schedulers) < 1:
            raise ValueError("SequentialLR needs at least one scheduler")
        for number, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"SequentialLR cannot run ReduceLROnPlateau (scheduler {number}): its step needs a metric")
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise ValueError(f"scheduler {number} ({type(scheduler).__name__}) belongs to another optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR needs one milestone fewer than schedulers: got {len(schedulers)} "
                             f"schedulers and {len(milestones)} milestones")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # the schedulers' constructors each took a first step: undo them and restart the first one
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo_first_steps(self)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _undo_first_steps(self, scheduler: Any) -> None:
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self._undo_first_steps(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_SchedulerContainer):
    """Step every scheduler at once (their factors multiply, since the schedules are recursive)."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optional[Optimizer] = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler needs at least one scheduler")
        optimizer = optimizer or schedulers[0].optimizer
        for number, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"ChainedScheduler cannot run ReduceLROnPlateau (scheduler {number})")
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise ValueError(f"scheduler {number} ({type(scheduler).__name__}) belongs to another optimizer")
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = _group_values(optimizer, "lr")

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self.optimizer, "lr")


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` once the metric has not improved for more than ``patience`` epochs.

    ``step(metric)`` each epoch.  "Improved" means, for ``mode="min"``,
    ``metric < best * (1 - threshold)`` (``threshold_mode="rel"``) or
    ``metric < best - threshold`` (``"abs"``); mirrored for ``"max"``.  After a
    reduction, ``cooldown`` epochs pass before bad epochs count again.  The rate
    never goes below ``min_lr`` (one value or one per group), and a reduction
    smaller than ``eps`` is skipped.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: Union[float, List[float]] = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError(f"factor must be below 1.0, got {factor!r}")
        _check_optimizer(optimizer)
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr = None
            self.min_lrs = _per_group("min_lr", optimizer, min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        """Whether ``a`` improves on ``best`` by more than the threshold."""
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if self.threshold_mode == "rel" else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if self.threshold_mode == "rel" else a > best + self.threshold

    def step(self, metrics: Any, epoch: Optional[int] = None) -> None:  # type: ignore[override]
        """Record one epoch's metric (a number or a one-element Tensor) and reduce the rate if it plateaued.

        ``epoch`` (deprecated, as in PyTorch: it warns) sets ``last_epoch``.
        """
        current = float(metrics.item() if hasattr(metrics, "item") else metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self) -> None:
        if len(self.min_lrs) != len(self.optimizer.param_groups):  # a group was added since
            if self.default_min_lr is None:
                raise RuntimeError("the optimizer gained parameter groups and min_lr was given per group")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                _set_lr(group, new)

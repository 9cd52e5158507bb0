"""Exercise 6's second half: train micrograd's moons MLP with the learner's own ``Value``, beside taugrad's.

The learner's class runs in the sandbox process of ``taugrad check`` (time,
CPU and memory limits), taugrad's in this one, both through the one training
loop of :mod:`taugrad.learn.check.trainer` from the same initial weights.  So
a correct engine gives the same loss, accuracy and gradients at every step; at
the first step where they differ, the rule checks of ``taugrad check`` say
which rule is likely at fault.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

from taugrad.learn.check import CheckError, check
from taugrad.learn.check.engine import SandboxEngine
from taugrad.learn.check.trainer import Trainer
from taugrad.scalar import Value

RTOL, ATOL = 1e-6, 1e-12  # a correct engine does the very same float operations: only rounding may differ


@dataclass
class SideBySide:
    """Both runs' per-step numbers, and where they first differ."""

    losses: List[float] = field(default_factory=list)
    accuracies: List[float] = field(default_factory=list)
    reference_losses: List[float] = field(default_factory=list)
    reference_accuracies: List[float] = field(default_factory=list)
    first_difference: Optional[int] = None
    difference: str = ""
    weights: list = field(default_factory=list)
    suspects: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.first_difference is None


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= ATOL + RTOL * abs(b)


def _where(index: int, weights: list) -> str:
    """``layer 1, neuron 0, weight 3`` for a flat parameter index (bias first in each neuron)."""
    for li, layer in enumerate(weights):
        for ni, neuron in enumerate(layer):
            if index < len(neuron):
                return f"layer {li}, neuron {ni}, " + ("bias" if index == 0 else f"weight {index - 1}")
            index -= len(neuron)
    return "?"


def _difference(mine: dict, theirs: dict, weights: list) -> str:
    if not _close(mine["loss"], theirs["loss"]):
        return f"loss {mine['loss']:.10g}, taugrad's {theirs['loss']:.10g}"
    if mine["accuracy"] != theirs["accuracy"]:
        return f"accuracy {mine['accuracy']:.1%}, taugrad's {theirs['accuracy']:.1%}"
    worst = max(range(len(theirs["grads"])), key=lambda i: abs(mine["grads"][i] - theirs["grads"][i]))
    return (f"same loss, but the gradients differ: {_where(worst, weights)} has grad {mine['grads'][worst]:.10g}, "
            f"taugrad's {theirs['grads'][worst]:.10g}")


def train_side_by_side(path: str, class_name: str, weights: list, X: Sequence, y: Sequence[int], steps: int,
                       timeout: float = 600.0, show: Callable[[str], None] = print) -> SideBySide:
    """Train the learner's class from ``path`` and taugrad's ``Value`` step by step; ``show`` gets one line per step.

    Raises :class:`CheckError` when the learner's file cannot be loaded or its engine raises.
    """
    result = SideBySide()
    reference = Trainer(Value, weights, X, y)
    with SandboxEngine(path, class_name, timeout=timeout) as engine:
        engine.activity = "training with your engine"
        _ask(engine, {"do": "train_start", "weights": weights, "X": [list(map(float, r)) for r in X], "y": list(y)})
        show(f"  {'step':>4}  {'your loss':>12}  {'your acc':>8}  {'taugrad loss':>12}  {'taugrad acc':>11}")
        for step in range(steps):
            engine.activity = f"training step {step} with your engine"
            mine = _ask(engine, {"do": "train_step", "step": step, "steps": steps})
            theirs = reference.step(step, steps)
            result.losses.append(mine["loss"])
            result.accuracies.append(mine["accuracy"])
            result.reference_losses.append(theirs["loss"])
            result.reference_accuracies.append(theirs["accuracy"])
            same = (_close(mine["loss"], theirs["loss"]) and mine["accuracy"] == theirs["accuracy"]
                    and all(_close(a, b) for a, b in zip(mine["grads"], theirs["grads"])))
            mark = ""
            if not same and result.first_difference is None:
                result.first_difference = step
                result.difference = _difference(mine, theirs, weights)
                mark = "  <- first difference"
            show(f"  {step:4d}  {mine['loss']:12.6g}  {mine['accuracy']:8.1%}  {theirs['loss']:12.6g}  "
                 f"{theirs['accuracy']:11.1%}{mark}")
        result.weights = _ask(engine, {"do": "train_weights"})["weights"]
    if result.first_difference is not None:
        result.suspects = _rule_checks(path, class_name, timeout)
    return result


def _ask(engine: SandboxEngine, request: dict) -> dict:
    answer = engine.call(request)
    if "error" in answer:
        error = answer["error"]
        raise CheckError(f"your engine raised {error['type']}: {error['message']} while {engine.activity}",
                         error.get("frames"))
    return answer


def _rule_checks(path: str, class_name: str, timeout: float) -> List[str]:
    """What ``taugrad check`` finds wrong with the engine, one line per failing check."""
    try:
        report = check(path, class_name=class_name, count=50, timeout=timeout)
    except CheckError as err:
        return [f"taugrad check could not grade it: {err}"]
    lines = [f"{c.name} {c.op or ''}".rstrip() + f": {c.diagnosis}" for c in report.failures]
    return lines or ["taugrad check finds no wrong rule: the difference comes from something its checks do not "
                     "cover (an op the demo uses differently, or state kept between backward() calls)"]

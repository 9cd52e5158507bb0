"""taugrad.optim.lr_scheduler: every scheduler with argument sets, as torch takes them.

A config is the scheduler's keyword arguments; ``Sub(name, kwargs)`` builds a nested scheduler
on the same optimizer (SequentialLR, ChainedScheduler). ``lr_lambda`` functions are plain Python
and shared by both libraries.
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Sub:
    name: str
    kwargs: dict


@dataclasses.dataclass
class SchedInfo:
    name: str
    configs: list
    uncovered: dict = dataclasses.field(default_factory=dict)
    metric: bool = False  # step(metric), as ReduceLROnPlateau


def half_per_ten(epoch):
    return 0.5 ** (epoch // 10) + 0.01 * epoch


def gentle(epoch):
    return 0.97


def cubic(x):
    return 1.0 / (1.0 + x) ** 0.5


ENTRIES = [
    SchedInfo("LambdaLR", [dict(lr_lambda=half_per_ten), dict(lr_lambda=[half_per_ten, lambda e: 0.9 ** e])]),
    SchedInfo("MultiplicativeLR", [dict(lr_lambda=gentle), dict(lr_lambda=[gentle, lambda e: 0.9])]),
    SchedInfo("StepLR", [dict(step_size=5), dict(step_size=3, gamma=0.5)]),
    SchedInfo("MultiStepLR", [dict(milestones=[3, 8, 15]), dict(milestones=[2, 2, 9], gamma=0.3)]),
    SchedInfo("ConstantLR", [dict(), dict(factor=0.5, total_iters=6)]),
    SchedInfo("LinearLR", [dict(), dict(start_factor=0.25, end_factor=0.9, total_iters=7)]),
    SchedInfo("ExponentialLR", [dict(gamma=0.9)]),
    SchedInfo("PolynomialLR", [dict(), dict(total_iters=12, power=2.0)]),
    SchedInfo("CosineAnnealingLR", [dict(T_max=8), dict(T_max=6, eta_min=0.01)]),
    SchedInfo("CosineAnnealingWarmRestarts", [dict(T_0=4), dict(T_0=3, T_mult=2, eta_min=0.005)]),
    SchedInfo("SequentialLR", [dict(schedulers=[Sub("ConstantLR", dict(factor=0.2, total_iters=3)),
                                                Sub("ExponentialLR", dict(gamma=0.9))], milestones=[5])]),
    SchedInfo("ChainedScheduler", [dict(schedulers=[Sub("ConstantLR", dict(factor=0.2, total_iters=3)),
                                                    Sub("ExponentialLR", dict(gamma=0.9))]),
                                   dict(schedulers=[Sub("StepLR", dict(step_size=4)), Sub("LinearLR", dict())],
                                        optimizer=None)]),
    SchedInfo("ReduceLROnPlateau", [dict(), dict(mode="max", factor=0.5, patience=2, threshold=0.01,
                                                 threshold_mode="abs", cooldown=1, min_lr=[0.02, 0.001], eps=1e-9)],
              metric=True),
    SchedInfo("CyclicLR", [dict(base_lr=0.01, max_lr=0.1, step_size_up=4),
                           dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3, step_size_down=5, mode="exp_range",
                                gamma=0.9, cycle_momentum=True, base_momentum=0.7, max_momentum=0.95),
                           dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2", cycle_momentum=False),
                           dict(base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=cubic, scale_mode="iterations")]),
    SchedInfo("OneCycleLR", [dict(max_lr=0.2, total_steps=21),
                             dict(max_lr=[0.2, 0.1], epochs=3, steps_per_epoch=7, pct_start=0.4, anneal_strategy="linear",
                                  cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, div_factor=10.0,
                                  final_div_factor=100.0, three_phase=True)]),
]

for _info in ENTRIES:
    _info.uncovered.setdefault("last_epoch", "resuming by last_epoch is covered by the state_dict round trip")

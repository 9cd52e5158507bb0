"""Every scheduler of taugrad.optim.lr_scheduler against torch's: 20 epochs of learning rates.

The learning rate (and momentum, which CyclicLR and OneCycleLR cycle) of every param group after
each epoch agree to 1e-10; a state_dict saved at epoch 10 and loaded into a fresh optimizer and
scheduler continues the same sequence; ``step(epoch)`` takes the epoch as torch does.
"""
from __future__ import annotations

import warnings

import pytest

from .common import TAUGRAD, TORCH, assert_close, float64_default
from .db_schedulers import ENTRIES
from .known_failures import param
from .sched_loop import run_schedule

FEATURES = ["plain", "state_dict_round_trip"]
STEP_EPOCH = {"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "LambdaLR"}


def _params():
    for info in ENTRIES:
        for i, config in enumerate(info.configs):
            features = FEATURES + (["step_epoch"] if info.name in STEP_EPOCH and i == 0 else [])
            for feature in features:
                yield param("schedulers", f"{info.name}-{i}-{feature}", info, config, feature)


@pytest.mark.parametrize("info, config, feature", list(_params()))
def test_scheduler_matches_torch(info, config, feature):
    with float64_default(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = run_schedule(TORCH, info, config, feature)
        got = run_schedule(TAUGRAD, info, config, feature)
    assert_close(got["lr"], want["lr"], f"{info.name} learning rates per epoch")
    assert_close(got["momentum"], want["momentum"], f"{info.name} momentum per epoch")
    assert_close(got["last_lr"], want["last_lr"], f"{info.name}.get_last_lr()")
    if "state_dict" in want:
        missing = sorted(set(want["state_dict"]) - set(got["state_dict"]))
        assert not missing, f"{info.name}.state_dict() lacks torch's keys {missing}"
        assert_close({k: got["state_dict"][k] for k in want["state_dict"]}, want["state_dict"],
                     f"{info.name}.state_dict()", check_dtype=False)

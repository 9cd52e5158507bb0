"""Every optimizer, every option set, 20 steps against torch.optim; the loop features of db_optim.

After every step the parameters and the optimizer's state_dict (tensors as arrays) agree to
1e-10, and ``step(closure)`` returns the same loss.
"""
from __future__ import annotations

import pytest

from .common import TAUGRAD, TORCH, assert_close, float64_default
from .db_optim import ENTRIES, FEATURES, OptInfo
from .known_failures import param
from .optim_loop import run_loop, state_by_param

CUSTOM = OptInfo("Optimizer", [dict(lr=0.1, beta=0.8)], uncovered={})
ONE_GROUP_ONLY = {"LBFGS": {"add_param_group", "param_group_dicts"}}


def _label(options):
    return ",".join(f"{k}={getattr(v, '__name__', 'tensor') if hasattr(v, 'make') else v}" for k, v in options.items()) or "defaults"


def _params():
    for info in ENTRIES + [CUSTOM]:
        for i, options in enumerate(info.option_sets):
            yield param("optim", f"{info.name}-{_label(options)}-plain", info, options, "plain")
            if i == len(info.option_sets) - 1:  # the richest option set: the most state to carry
                for feature in FEATURES:
                    if feature not in ONE_GROUP_ONLY.get(info.name, ()):
                        yield param("optim", f"{info.name}-{_label(options)}-{feature}", info, options, feature)


@pytest.mark.parametrize("info, options, feature", list(_params()))
def test_optimizer_loop_matches_torch(info, options, feature):
    with float64_default():
        want = run_loop(TORCH, info.name, options, feature, info.needs_closure)
        got = run_loop(TAUGRAD, info.name, options, feature, info.needs_closure)
    for step, (g, w) in enumerate(zip(got, want)):
        assert_close(g["params"], w["params"], f"{info.name} {feature} step {step} parameters", rtol=info.rtol)
        assert_close(g["returned"], w["returned"], f"{info.name} {feature} step {step} returned loss", rtol=info.rtol)
        assert_close(g["state_dict"], w["state_dict"], f"{info.name} {feature} step {step} state_dict", check_dtype=False,
                     rtol=info.rtol)


@pytest.mark.parametrize("info", [param("optim", f"{i.name}-state_by_param", i) for i in ENTRIES + [CUSTOM]])
def test_optimizer_state_is_keyed_by_parameter(info):
    options = info.option_sets[0]
    with float64_default():
        want = state_by_param(TORCH, info.name, options)
        got = state_by_param(TAUGRAD, info.name, options)
    assert_close(got, want, f"{info.name}.state[p]", check_dtype=False, rtol=info.rtol)

"""Learning-rate schedulers against torch.optim.lr_scheduler over 50 steps (get_last_lr() each step)."""
import copy

import numpy as np
import pytest
import torch

import taugrad
from taugrad import optim
from taugrad.optim import lr_scheduler
from taugrad.tensors.core.node import Tensor

STEPS = 50


def _optimizers(name="SGD", lrs=(0.1, 0.02), **kwargs):
    """The same two parameter groups (their own lr each) in a taugrad and a torch optimizer."""
    ours = [Tensor(np.zeros(2), requires_grad=True), Tensor(np.zeros(3), requires_grad=True)]
    theirs = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]
    return (getattr(optim, name)([{"params": [p], "lr": lr} for p, lr in zip(ours, lrs)], **kwargs),
            getattr(torch.optim, name)([{"params": [p], "lr": lr} for p, lr in zip(theirs, lrs)], **kwargs))


class Halving:
    """A callable object: its attributes travel in LambdaLR's state dict."""

    def __init__(self, every):
        self.every = every

    def __call__(self, epoch):
        return 0.5 ** (epoch // self.every)


SCHEDULES = [
    ("StepLR", lambda m, o: m.StepLR(o, step_size=7, gamma=0.5)),
    ("MultiStepLR", lambda m, o: m.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3)),
    ("ExponentialLR", lambda m, o: m.ExponentialLR(o, gamma=0.93)),
    ("LinearLR", lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=20)),
    ("LinearLR-down", lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=40)),
    ("ConstantLR", lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=8)),
    ("PolynomialLR", lambda m, o: m.PolynomialLR(o, total_iters=30, power=2.0)),
    ("LambdaLR", lambda m, o: m.LambdaLR(o, lr_lambda=lambda e: 1 / (1 + 0.1 * e))),
    ("LambdaLR-per-group", lambda m, o: m.LambdaLR(o, lr_lambda=[Halving(5), lambda e: 0.9**e])),
    ("CosineAnnealingLR", lambda m, o: m.CosineAnnealingLR(o, T_max=15, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=6, T_mult=2, eta_min=1e-3)),
    ("CosineAnnealingWarmRestarts-1", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=9)),
    ("OneCycleLR", lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=STEPS + 1)),
    ("OneCycleLR-linear-3", lambda m, o: m.OneCycleLR(o, max_lr=0.3, epochs=5, steps_per_epoch=11, pct_start=0.25,
                                                      anneal_strategy="linear", three_phase=True)),
    ("SequentialLR", lambda m, o: m.SequentialLR(o, [m.LinearLR(o, start_factor=0.01, total_iters=10),
                                                     m.CosineAnnealingLR(o, T_max=20),
                                                     m.ExponentialLR(o, gamma=0.9)], milestones=[10, 30])),
    ("ChainedScheduler", lambda m, o: m.ChainedScheduler([m.ExponentialLR(o, gamma=0.95),
                                                          m.StepLR(o, step_size=10, gamma=0.5)])),
]


def _close(ours, theirs, where):
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15, err_msg=where)


@pytest.mark.parametrize("name, make", SCHEDULES, ids=[s[0] for s in SCHEDULES])
def test_schedule_matches_torch(name, make):
    ours_opt, theirs_opt = _optimizers()
    ours, theirs = make(lr_scheduler, ours_opt), make(torch.optim.lr_scheduler, theirs_opt)
    _close(ours.get_last_lr(), theirs.get_last_lr(), f"{name} at creation")
    for step in range(STEPS):
        ours_opt.step()
        theirs_opt.step()
        ours.step()
        theirs.step()
        _close(ours.get_last_lr(), theirs.get_last_lr(), f"{name} step {step}")
        _close([g["lr"] for g in ours_opt.param_groups], [g["lr"] for g in theirs_opt.param_groups], name)


@pytest.mark.parametrize("optimizer, key", [("SGD", "momentum"), ("Adam", "betas"), ("NAdam", "betas")])
@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle_cycles_momentum_or_beta1_as_torch(optimizer, key, three_phase):
    kwargs = {"momentum": 0.9} if optimizer == "SGD" else {}
    ours_opt, theirs_opt = _optimizers(optimizer, **kwargs)
    make = lambda m, o: m.OneCycleLR(o, max_lr=0.4, total_steps=30, base_momentum=0.8,  # noqa: E731
                                     max_momentum=0.97, three_phase=three_phase)
    ours, theirs = make(lr_scheduler, ours_opt), make(torch.optim.lr_scheduler, theirs_opt)
    for step in range(29):
        for g, h in zip(ours_opt.param_groups, theirs_opt.param_groups):
            np.testing.assert_allclose(np.ravel(g[key]), np.ravel(h[key]), rtol=1e-12, err_msg=f"step {step}")
        ours_opt.step()
        theirs_opt.step()
        ours.step()
        theirs.step()


def test_one_cycle_past_total_steps_is_an_error():
    opt, _ = _optimizers()
    scheduler = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
    for _ in range(3):
        scheduler.step()
    with pytest.raises(ValueError, match="total_steps is 3"):
        scheduler.step()


def test_warm_restarts_with_fractional_epochs_match_torch():
    ours_opt, theirs_opt = _optimizers()
    ours = lr_scheduler.CosineAnnealingWarmRestarts(ours_opt, T_0=3, T_mult=2)
    theirs = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(theirs_opt, T_0=3, T_mult=2)
    for epoch in np.arange(0, 20, 0.25):
        ours.step(float(epoch))
        theirs.step(float(epoch))
        _close(ours.get_last_lr(), theirs.get_last_lr(), f"epoch {epoch}")


PLATEAU = [
    dict(),
    dict(mode="max", factor=0.5, patience=2),
    dict(factor=0.5, patience=1, threshold=0.05, threshold_mode="abs", cooldown=2),
    dict(factor=0.3, patience=0, cooldown=1, min_lr=[0.01, 0.001]),
    dict(mode="max", factor=0.7, patience=3, threshold=0.1, threshold_mode="rel", min_lr=0.02),
]


@pytest.mark.parametrize("kwargs", PLATEAU, ids=[str(k) for k in PLATEAU])
def test_reduce_on_plateau_matches_torch(kwargs):
    ours_opt, theirs_opt = _optimizers()
    ours = lr_scheduler.ReduceLROnPlateau(ours_opt, **kwargs)
    theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(theirs_opt, **kwargs)
    rng = np.random.default_rng(0)
    metric = 1.0
    for step in range(STEPS):
        metric = metric * rng.choice([0.9, 0.99, 1.0, 1.02]) + rng.normal(0, 0.01)  # noisy, with plateaus
        ours.step(metric)
        theirs.step(metric)
        _close(ours.get_last_lr(), theirs.get_last_lr(), f"step {step}")
        assert (ours.num_bad_epochs, ours.cooldown_counter) == (theirs.num_bad_epochs, theirs.cooldown_counter)


def test_reduce_on_plateau_takes_a_tensor_metric():
    opt, _ = _optimizers()
    scheduler = lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    scheduler.step(taugrad.tensor(1.0))
    scheduler.step(Tensor(np.array(2.0)))
    assert scheduler.get_last_lr() == pytest.approx([0.01, 0.002])


@pytest.mark.parametrize("name, make", [s for s in SCHEDULES if s[0] != "LambdaLR"],
                         ids=[s[0] for s in SCHEDULES if s[0] != "LambdaLR"])
def test_state_dict_resume_continues_the_schedule(name, make):
    """20 steps, save optimizer and scheduler, rebuild both, load, 20 more: as 40 uninterrupted steps."""
    reference_opt, _ = _optimizers()
    reference = make(lr_scheduler, reference_opt)
    expected = []
    for _ in range(40):
        reference.step()
        expected.append(reference.get_last_lr())

    opt, _ = _optimizers()
    scheduler = make(lr_scheduler, opt)
    for _ in range(20):
        scheduler.step()
    saved_opt, saved = copy.deepcopy(opt.state_dict()), copy.deepcopy(scheduler.state_dict())
    fresh_opt, _ = _optimizers()
    fresh = make(lr_scheduler, fresh_opt)
    fresh_opt.load_state_dict(saved_opt)
    fresh.load_state_dict(saved)
    for step in range(20, 40):
        fresh.step()
        _close(fresh.get_last_lr(), expected[step], f"{name} resumed step {step}")


def test_lambda_state_dict_keeps_callable_objects_not_functions():
    opt, _ = _optimizers()
    scheduler = lr_scheduler.LambdaLR(opt, [Halving(3), lambda e: 1.0])
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [{"every": 3}, None]
    other = lr_scheduler.LambdaLR(_optimizers()[0], [Halving(99), lambda e: 1.0])
    other.load_state_dict(state)
    assert other.lr_lambdas[0].every == 3


@pytest.mark.parametrize("make, error, message", [
    (lambda o: lr_scheduler.StepLR(o, step_size=0), ValueError, "step_size"),
    (lambda o: lr_scheduler.LinearLR(o, start_factor=0), ValueError, "start_factor"),
    (lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.1), ValueError, "total_steps"),
    (lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=5, anneal_strategy="exp"), ValueError, "anneal"),
    (lambda o: lr_scheduler.ReduceLROnPlateau(o, mode="lowest"), ValueError, "mode"),
    (lambda o: lr_scheduler.ReduceLROnPlateau(o, factor=1.0), ValueError, "factor"),
    (lambda o: lr_scheduler.LambdaLR(o, [lambda e: 1.0]), ValueError, "parameter groups"),
    (lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(o, 2)], milestones=[3]), ValueError, "milestone"),
    (lambda o: lr_scheduler.StepLR(o, 2, last_epoch=4), KeyError, "initial_lr"),
])
def test_bad_arguments_are_named(make, error, message):
    opt, _ = _optimizers()
    with pytest.raises(error, match=message):
        make(opt)

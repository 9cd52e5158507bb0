"""Adam and AdamW step on from a parameter changed in place between steps, as torch does.

The gathered step (optim/packed.py) copies the parameters into one buffer
and back: a parameter changed in place between steps (``clamp_``, ``copy_``,
``model.load_state_dict`` into the same arrays, ``p.data.mul_``) must be
gathered afresh, not taken from the previous step's buffer.  Both the
gathered and the per-parameter path are checked against torch in float64.
"""
import copy

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn, optim

CONFIGS = [("Adam", dict(lr=0.05)), ("Adam", dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
           ("AdamW", dict(lr=0.05)), ("AdamW", dict(lr=0.05, weight_decay=0.3))]


def _twin_models():
    rng = np.random.default_rng(0)
    ours = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)).double()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3)).double()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        value = rng.normal(size=tuple(q.shape)) * 0.5
        with taugrad.no_grad():
            p.copy_(taugrad.tensor(value))
        with torch.no_grad():
            q.copy_(torch.tensor(value))
    return ours, theirs


def _change(kind, step, model, lib, saved):
    """The in-place change made between steps ``step`` and ``step + 1``."""
    params = list(model.parameters())
    with lib.no_grad():
        if kind == "clamp_":
            for p in params:
                p.clamp_(-0.3, 0.3)
        elif kind == "copy_":
            params[0].copy_(params[0] * 0.5 + 0.1)
        elif kind == "data":
            params[2].data.mul_(-1.0)
        elif kind == "load_state_dict":
            model.load_state_dict(saved)  # back to the weights of step 0, into the same arrays


@pytest.mark.parametrize("gather", [True, False], ids=["gathered", "per-parameter"])
@pytest.mark.parametrize("kind", ["clamp_", "copy_", "data", "load_state_dict"])
@pytest.mark.parametrize("name, kwargs", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
def test_a_step_after_an_in_place_change_matches_torch(name, kwargs, kind, gather):
    ours, theirs = _twin_models()
    opt = getattr(optim, name)(ours.parameters(), **kwargs)
    topt = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    opt._gather_unpacked = gather
    saved = {k: v.clone() for k, v in ours.state_dict().items()}
    tsaved = {k: v.clone() for k, v in theirs.state_dict().items()}
    ours_arrays = [p._data for p in ours.parameters()]
    rng = np.random.default_rng(1)
    for step in range(8):
        x, y = rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
        opt.zero_grad()
        topt.zero_grad()
        ((ours(taugrad.tensor(x)) - taugrad.tensor(y)) ** 2).mean().backward()
        ((theirs(torch.tensor(x)) - torch.tensor(y)) ** 2).mean().backward()
        opt.step()
        topt.step()
        if step in (1, 4):
            _change(kind, step, ours, taugrad, saved)
            _change(kind, step, theirs, torch, tsaved)
        for i, (p, q) in enumerate(zip(ours.parameters(), theirs.parameters())):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"{name} {kwargs} {kind} step {step} parameter {i}")
    assert all(p._data is a for p, a in zip(ours.parameters(), ours_arrays)), "the steps kept the same arrays"
    for p, q in zip(ours.parameters(), theirs.parameters()):
        for key, value in topt.state[q].items():
            np.testing.assert_allclose(opt.state[p][key].detach().numpy(), value.detach().numpy(), rtol=1e-10,
                                       atol=1e-12, err_msg=key)


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_optimizer_state_loaded_into_the_same_arrays_between_steps_matches_torch(name):
    """``optimizer.load_state_dict`` between steps (a rollback): the gathered state is rebuilt from it."""
    ours, theirs = _twin_models()
    opt = getattr(optim, name)(ours.parameters(), lr=0.05)
    topt = getattr(torch.optim, name)(theirs.parameters(), lr=0.05)
    rng = np.random.default_rng(2)
    snapshot = tsnapshot = None
    for step in range(8):
        x, y = rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
        opt.zero_grad()
        topt.zero_grad()
        ((ours(taugrad.tensor(x)) - taugrad.tensor(y)) ** 2).mean().backward()
        ((theirs(torch.tensor(x)) - torch.tensor(y)) ** 2).mean().backward()
        opt.step()
        topt.step()
        if step == 2:
            snapshot, tsnapshot = copy.deepcopy(opt.state_dict()), copy.deepcopy(topt.state_dict())
        if step == 5:
            opt.load_state_dict(snapshot)
            topt.load_state_dict(tsnapshot)
        for p, q in zip(ours.parameters(), theirs.parameters()):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"{name} step {step}")

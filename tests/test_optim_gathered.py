"""Adam and AdamW step a group of CPU parameters as one gathered array, with the per-parameter rule's numbers.

The parameters are copied into one array, each in its own memory layout (a
weight may be given column-major), the rule runs once, and the results
are copied back; the optimizer's state lives in flat arrays handed out as
per-parameter views.  Every variant must EQUAL the rule run parameter by
parameter: across steps, through ``state_dict``, and when a parameter's
memory layout changes between steps.
"""
import copy

import numpy as np
import pytest

import taugrad
import taugrad.nn.functional as F
from taugrad import nn, optim

CONFIGS = {
    "Adam": lambda p: optim.Adam(p, lr=1e-2),
    "Adam-weight-decay": lambda p: optim.Adam(p, lr=1e-2, weight_decay=0.1),
    "Adam-amsgrad": lambda p: optim.Adam(p, lr=1e-2, amsgrad=True),
    "Adam-maximize": lambda p: optim.Adam(p, lr=1e-2, maximize=True),
    "AdamW": lambda p: optim.AdamW(p, lr=1e-2, weight_decay=0.1),
    "AdamW-amsgrad": lambda p: optim.AdamW(p, lr=1e-2, amsgrad=True),
}


def _model():
    taugrad.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3)).double()


def _batch():
    rng = np.random.default_rng(1)
    return taugrad.tensor(rng.normal(size=(8, 5))), taugrad.tensor(rng.integers(0, 3, 8))


def _train(make, gather: bool, steps: int = 4, relayout_at=None):
    """Weights, per-parameter state and ``_update`` calls after ``steps`` steps, gathering or not."""
    model = _model()
    optimizer = make(model.parameters())
    optimizer._gather_unpacked = gather
    calls = []
    update = optimizer._update
    optimizer._update = lambda *args: (calls.append(1), update(*args))[1]
    x, y = _batch()
    for step in range(steps):
        if step == relayout_at:  # the first weight, row-major until now, becomes column-major
            weight = model[0].weight
            weight.data = taugrad.from_numpy(np.asfortranarray(weight.detach().numpy()))
            assert weight.detach().numpy().flags.f_contiguous
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    state = optimizer.state_dict()["state"]
    return [p.detach().numpy().copy() for p in model.parameters()], state, len(calls)


def _assert_equal(got, want):
    for g, w in zip(got[0], want[0]):
        np.testing.assert_array_equal(g, w)
    assert got[1].keys() == want[1].keys()
    for index in want[1]:
        for key, value in want[1][index].items():
            np.testing.assert_array_equal(np.asarray(got[1][index][key]), np.asarray(value), err_msg=f"{index}.{key}")


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_gathered_step_equals_the_per_parameter_step(name):
    gathered, per_parameter = _train(CONFIGS[name], True), _train(CONFIGS[name], False)
    _assert_equal(gathered, per_parameter)
    assert gathered[2] == 4, "one update per step: the group was gathered"
    assert per_parameter[2] == 4 * 4


def test_adam_gathers_unless_told_otherwise():
    assert optim.Adam._gather_unpacked and optim.AdamW._gather_unpacked
    assert not getattr(optim.SGD, "_gather_unpacked", False)


@pytest.mark.parametrize("name", ["Adam", "AdamW-amsgrad"])
def test_a_parameter_whose_layout_changes_keeps_its_own_state(name):
    """The flat state holds each parameter's elements in its layout's order: a new layout rebuilds it."""
    _assert_equal(_train(CONFIGS[name], True, steps=5, relayout_at=2),
                  _train(CONFIGS[name], False, steps=5, relayout_at=2))


def test_state_loaded_into_a_new_optimizer_continues_the_same_steps():
    """A state_dict saved from a gathered run, loaded into a fresh optimizer, steps on as the first one would."""
    model = _model()
    optimizer = optim.AdamW(model.parameters(), lr=1e-2)
    x, y = _batch()

    def step(opt):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(2):
        step(optimizer)
    saved = copy.deepcopy(optimizer.state_dict())  # as in PyTorch, state_dict() holds the live state tensors
    weights = [p.detach().numpy().copy() for p in model.parameters()]
    step(optimizer)
    want = [p.detach().numpy().copy() for p in model.parameters()]
    with taugrad.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(taugrad.tensor(w))
    fresh = optim.AdamW(model.parameters(), lr=1e-2)
    fresh.load_state_dict(saved)
    step(fresh)
    for p, w in zip(model.parameters(), want):
        np.testing.assert_array_equal(p.detach().numpy(), w)

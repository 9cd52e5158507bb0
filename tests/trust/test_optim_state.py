"""``optimizer.state`` as PyTorch's: keyed by the parameter, holding tensors; a user-written optimizer runs.

Every check runs the same calls in taugrad and in torch (float64, the same
NumPy values) and compares the numbers, the types and what is shared.
"""
import copy

import numpy as np
import pytest
import torch

import taugrad
from taugrad import optim

SHAPES = [(3, 4), (4,), (2, 1, 3)]


@pytest.fixture(autouse=True)
def float64_defaults():
    """Both libraries keep scalar state (``step``) in the default dtype: float64 in both here."""
    previous, ours = torch.get_default_dtype(), taugrad.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    taugrad.set_default_dtype(taugrad.float64)
    yield
    torch.set_default_dtype(previous)
    taugrad.set_default_dtype(ours)


def twins(seed=0):
    rng = np.random.default_rng(seed)
    start = [rng.normal(size=s) for s in SHAPES]
    ours = [taugrad.tensor(a.copy(), requires_grad=True) for a in start]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in start]
    return ours, theirs


def set_grads(ours, theirs, rng):
    for p, q in zip(ours, theirs):
        g = rng.normal(size=p.shape)
        p.grad = taugrad.tensor(g.copy())
        q.grad = torch.tensor(g.copy())


def assert_close(a, b, what):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=1e-10, atol=1e-12,
                               err_msg=what)


def assert_same_state(ours, theirs, params, tparams):
    for p, q in zip(params, tparams):
        mine, want = ours.state[p], theirs.state[q]
        assert sorted(mine) == sorted(want)
        for key, value in want.items():
            assert isinstance(mine[key], taugrad.Tensor), key
            assert tuple(mine[key].shape) == tuple(value.shape), key
            assert_close(mine[key], value, key)


@pytest.mark.parametrize("name, kwargs", [
    ("Adam", dict(lr=0.01)), ("AdamW", dict(lr=0.01, amsgrad=True)), ("SGD", dict(lr=0.1, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)), ("Adagrad", dict(lr=0.1)),
    ("Adadelta", dict()), ("Adamax", dict()), ("NAdam", dict()),
])
def test_state_is_keyed_by_the_parameter_and_holds_tensors(name, kwargs):
    ours, theirs = twins()
    opt, topt = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(theirs, **kwargs)
    rng = np.random.default_rng(1)
    for step in range(3):
        set_grads(ours, theirs, rng)
        opt.step()
        topt.step()
    assert all(p in opt.state for p in ours)
    assert_same_state(opt, topt, ours, theirs)
    saved, tsaved = opt.state_dict(), topt.state_dict()
    assert sorted(saved["state"]) == sorted(tsaved["state"]) == [0, 1, 2]
    for index in tsaved["state"]:
        for key, value in tsaved["state"][index].items():
            assert isinstance(saved["state"][index][key], taugrad.Tensor)
            assert_close(saved["state"][index][key], value, f"{index}.{key}")
        assert saved["state"][index] is opt.state[ours[index]]  # torch hands out its own dicts too
        assert tsaved["state"][index] is topt.state[theirs[index]]


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "RMSprop", "NAdam"])
def test_state_dict_round_trips_into_a_fresh_optimizer(name):
    kwargs = dict(lr=0.01, momentum=0.9) if name == "SGD" else dict(lr=0.01)
    ours, theirs = twins()
    opt, topt = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(theirs, **kwargs)
    rng = np.random.default_rng(2)
    for _ in range(3):
        set_grads(ours, theirs, rng)
        opt.step()
        topt.step()
    saved, tsaved = copy.deepcopy(opt.state_dict()), copy.deepcopy(topt.state_dict())
    opt, topt = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(theirs, **kwargs)
    opt.load_state_dict(saved)
    topt.load_state_dict(tsaved)
    assert_same_state(opt, topt, ours, theirs)
    for _ in range(3):
        set_grads(ours, theirs, rng)
        opt.step()
        topt.step()
    for p, q in zip(ours, theirs):
        assert_close(p, q, "parameter after reload")
    assert_same_state(opt, topt, ours, theirs)


def test_a_state_tensor_changed_in_place_is_what_the_next_step_reads():
    """The gathered Adam step too: state[p] tensors are views of what the step updates, both ways."""
    ours, theirs = twins()
    opt, topt = optim.Adam(ours, lr=0.01), torch.optim.Adam(theirs, lr=0.01)
    rng = np.random.default_rng(3)
    for step in range(4):
        set_grads(ours, theirs, rng)
        opt.step()
        topt.step()
        if step == 1:
            with taugrad.no_grad():
                opt.state[ours[0]]["exp_avg"].mul_(0.5)
                opt.state[ours[2]]["exp_avg_sq"].zero_()
            with torch.no_grad():
                topt.state[theirs[0]]["exp_avg"].mul_(0.5)
                topt.state[theirs[2]]["exp_avg_sq"].zero_()
    for p, q in zip(ours, theirs):
        assert_close(p, q, "parameter")
    assert_same_state(opt, topt, ours, theirs)


def _documented_optimizer(lib):
    """A momentum SGD written as torch's documentation teaches (``Optimizer`` subclass, ``self.state[p]``)."""

    class MomentumSGD(lib.optim.Optimizer):
        def __init__(self, params, lr=0.1, momentum=0.9):
            if lr < 0.0:
                raise ValueError(f"Invalid learning rate: {lr}")
            super().__init__(params, dict(lr=lr, momentum=momentum))

        @lib.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with lib.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["buf"] = lib.zeros_like(p, memory_format=lib.preserve_format)
                    state["step"] += 1
                    buf = state["buf"]
                    buf.mul_(group["momentum"]).add_(p.grad, alpha=1.0)
                    p.add_(buf, alpha=-group["lr"])
            return loss

    return MomentumSGD


def test_a_user_written_optimizer_following_torchs_documentation_runs():
    ours, theirs = twins()
    opt = _documented_optimizer(taugrad)(ours, lr=0.05)
    topt = _documented_optimizer(torch)(theirs, lr=0.05)
    rng = np.random.default_rng(4)
    targets = [rng.normal(size=s) for s in SHAPES]

    def closure(params, lib, optimizer):
        def run():
            optimizer.zero_grad()
            loss = sum(((p - lib.tensor(t)) ** 2).sum() for p, t in zip(params, targets))
            loss.backward()
            return loss
        return run

    for _ in range(5):
        loss = opt.step(closure(ours, taugrad, opt))
        tloss = topt.step(closure(theirs, torch, topt))
        assert abs(loss.item() - tloss.item()) < 1e-10
    for p, q in zip(ours, theirs):
        assert_close(p, q, "parameter")
        assert opt.state[p]["step"] == topt.state[q]["step"] == 5
        assert_close(opt.state[p]["buf"], topt.state[q]["buf"], "buf")
    saved, tsaved = opt.state_dict(), topt.state_dict()
    assert sorted(saved["state"]) == sorted(tsaved["state"])
    assert saved["param_groups"] == [{**g, "params": g["params"]} for g in tsaved["param_groups"]]

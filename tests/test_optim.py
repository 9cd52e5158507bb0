"""taugrad.optim against torch.optim, step by step on identical gradients (float64)."""
import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn, optim
from taugrad.tensors.core.node import Tensor

SHAPES = [(3, 4), (4,), (2, 1, 3)]
TOLERANCE = 1e-6


def _params(seed):
    rng = np.random.default_rng(seed)
    start = [rng.normal(size=shape) for shape in SHAPES]
    ours = [Tensor(a.copy(), requires_grad=True) for a in start]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in start]
    return ours, theirs


def _set_grads(ours, theirs, rng, skip=None):
    for i, (p, q) in enumerate(zip(ours, theirs)):
        if i == skip:
            p.grad, q.grad = None, None
            continue
        g = rng.normal(size=p.shape) * rng.choice([1e-3, 1.0, 30.0])  # several gradient scales
        p.grad = Tensor(g.copy())
        q.grad = torch.tensor(g.copy())


def _assert_same(ours, theirs, where):
    for i, (p, q) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=0, atol=TOLERANCE,
                                   err_msg=f"{where}: parameter {i}")


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.5)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.01, weight_decay=0.3)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
]


@pytest.mark.parametrize("name, kwargs", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
def test_matches_torch_step_by_step(name, kwargs):
    ours, theirs = _params(0)
    ours_opt = getattr(optim, name)(ours, **kwargs)
    theirs_opt = getattr(torch.optim, name)(theirs, **kwargs)
    rng = np.random.default_rng(1)
    for step in range(30):
        # parameter 1 has no gradient on some steps: it must be left alone, as torch does
        _set_grads(ours, theirs, rng, skip=1 if step % 7 == 3 else None)
        ours_opt.step()
        theirs_opt.step()
        _assert_same(ours, theirs, f"{name}{kwargs} step {step}")


def test_param_groups_with_their_own_hyperparameters():
    ours, theirs = _params(2)
    ours_opt = optim.SGD([{"params": ours[:1]}, {"params": ours[1:], "lr": 0.5, "momentum": 0.5}], lr=0.1,
                         momentum=0.9)
    theirs_opt = torch.optim.SGD([{"params": theirs[:1]}, {"params": theirs[1:], "lr": 0.5, "momentum": 0.5}],
                                 lr=0.1, momentum=0.9)
    rng = np.random.default_rng(3)
    for step in range(10):
        _set_grads(ours, theirs, rng)
        ours_opt.step()
        theirs_opt.step()
        _assert_same(ours, theirs, f"step {step}")


SCHEDULERS = [
    ("StepLR", dict(step_size=3)),
    ("StepLR", dict(step_size=4, gamma=0.5)),
    ("CosineAnnealingLR", dict(T_max=10)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),
]


@pytest.mark.parametrize("name, kwargs", SCHEDULERS, ids=[f"{n}-{k}" for n, k in SCHEDULERS])
def test_schedulers_match_torch(name, kwargs):
    ours, theirs = _params(4)
    ours_opt = optim.SGD(ours, lr=0.3, momentum=0.9)
    theirs_opt = torch.optim.SGD(theirs, lr=0.3, momentum=0.9)
    ours_sched = getattr(optim.lr_scheduler, name)(ours_opt, **kwargs)
    theirs_sched = getattr(torch.optim.lr_scheduler, name)(theirs_opt, **kwargs)
    rng = np.random.default_rng(5)
    assert ours_sched.get_last_lr() == pytest.approx(theirs_sched.get_last_lr(), abs=1e-12)
    for epoch in range(25):  # past T_max: the cosine carries on, as in torch
        _set_grads(ours, theirs, rng)
        ours_opt.step()
        theirs_opt.step()
        ours_sched.step()
        theirs_sched.step()
        assert ours_sched.get_last_lr() == pytest.approx(theirs_sched.get_last_lr(), abs=1e-10), f"epoch {epoch}"
        assert ours_opt.param_groups[0]["lr"] == pytest.approx(theirs_opt.param_groups[0]["lr"], abs=1e-10)
        _assert_same(ours, theirs, f"{name} epoch {epoch}")


def test_zero_grad_to_none_or_zeros():
    ours, _ = _params(0)
    opt = optim.SGD(ours, lr=0.1)
    for p in ours:
        p.grad = Tensor(np.ones(p.shape))
    opt.zero_grad(set_to_none=False)
    for p in ours:
        np.testing.assert_array_equal(p.grad.numpy(), np.zeros(p.shape))
    opt.zero_grad()
    assert all(p.grad is None for p in ours)


def test_updates_in_place_and_keeps_dtype():
    p = Tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    array = p.detach().numpy()
    p.grad = Tensor(np.ones(3, dtype=np.float32))
    optim.Adam([p], lr=0.1).step()
    assert p.detach().numpy() is array and p.detach().numpy().dtype == np.float32
    np.testing.assert_allclose(p.detach().numpy(), 0.9, rtol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_state_dict_resume_equals_uninterrupted_run(tmp_path, name):
    kwargs = dict(lr=0.05, momentum=0.9) if name == "SGD" else dict(lr=0.05)
    grads = [np.random.default_rng(k).normal(size=(3, 2)) for k in range(10)]

    def run(resume_at=None):
        p = Tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        opt = getattr(optim, name)([p], **kwargs)
        for step, g in enumerate(grads):
            if step == resume_at:  # save, rebuild everything from the checkpoint, carry on
                taugrad.save({"p": p, "optimizer": opt.state_dict()}, tmp_path / "ckpt.npz")
                checkpoint = taugrad.load(tmp_path / "ckpt.npz")
                p = Tensor(checkpoint["p"].detach().numpy().copy(), requires_grad=True)
                opt = getattr(optim, name)([p], lr=123.0)  # hyperparameters come from the state dict
                opt.load_state_dict(checkpoint["optimizer"])
            p.grad = Tensor(g)
            opt.step()
        return p.detach().numpy()

    np.testing.assert_array_equal(run(), run(resume_at=5))


def test_state_dict_layout_follows_torch():
    ours, theirs = _params(0)
    ours_opt, theirs_opt = optim.Adam(ours, lr=0.01), torch.optim.Adam(theirs, lr=0.01)
    _set_grads(ours, theirs, np.random.default_rng(0))
    ours_opt.step()
    theirs_opt.step()
    mine, torchs = ours_opt.state_dict(), theirs_opt.state_dict()
    assert mine["param_groups"][0]["params"] == torchs["param_groups"][0]["params"] == [0, 1, 2]
    assert set(mine["state"]) == set(torchs["state"])
    for index in mine["state"]:
        for key in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_allclose(mine["state"][index][key], torchs["state"][index][key].numpy(), atol=1e-12)
        assert mine["state"][index]["step"] == int(torchs["state"][index]["step"])
    for key in ("lr", "betas", "eps", "weight_decay", "amsgrad"):
        assert mine["param_groups"][0][key] == torchs["param_groups"][0][key]


def test_load_state_dict_rejects_a_different_model():
    ours, _ = _params(0)
    opt = optim.Adam(ours)
    for p in ours:
        p.grad = Tensor(np.ones(p.shape))
    opt.step()
    saved = opt.state_dict()
    with pytest.raises(ValueError, match="parameters"):
        optim.Adam(ours[:2]).load_state_dict(saved)
    swapped = [ours[1], ours[0], ours[2]]
    with pytest.raises(ValueError, match="shape"):
        optim.Adam(swapped).load_state_dict(saved)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda ps: optim.SGD(ps, lr=-0.1), "learning rate"),
        (lambda ps: optim.SGD(ps, lr=float("nan")), "learning rate"),
        (lambda ps: optim.SGD(ps, momentum=-1), "momentum"),
        (lambda ps: optim.SGD(ps, lr=0.1, nesterov=True), "Nesterov"),
        (lambda ps: optim.Adam(ps, betas=(0.9, 1.0)), "beta"),
        (lambda ps: optim.Adam(ps, eps=-1), "epsilon"),
        (lambda ps: optim.AdamW(ps, weight_decay=-0.1), "weight_decay"),
        (lambda ps: optim.SGD([], lr=0.1), "empty"),
        (lambda ps: optim.SGD(ps + ps[:1], lr=0.1), "more than once"),
        (lambda ps: optim.SGD(ps[0], lr=0.1), "iterable"),
        (lambda ps: optim.SGD([np.zeros(3)], lr=0.1), "Tensors"),
        (lambda ps: optim.lr_scheduler.StepLR(optim.SGD(ps, lr=0.1), step_size=0), "step_size"),
        (lambda ps: optim.lr_scheduler.CosineAnnealingLR(optim.SGD(ps, lr=0.1), T_max=0), "T_max"),
    ],
)
def test_bad_hyperparameters_are_named(make, message):
    ours, _ = _params(0)
    with pytest.raises((ValueError, TypeError), match=message):
        make(ours)


def test_a_graph_recorded_before_a_step_refuses_to_backpropagate():
    """The step changes parameters in place; a stale graph would give wrong gradients (PyTorch raises too)."""
    w = Tensor(np.ones((3, 2)), requires_grad=True)
    loss = (Tensor(np.ones((4, 3))) @ w).sum()
    w.grad = Tensor(np.ones((3, 2)))
    optim.SGD([w], lr=0.1).step()
    with pytest.raises(RuntimeError, match="in-place"):
        loss.backward()


def test_adam_state_from_torch_with_a_0d_step_loads_and_continues_the_same():
    # torch keeps 'step' as a 0-d tensor; it was refused as "shape () vs the parameter's"
    w = np.array([1.0, 2.0, 3.0])
    theirs = torch.nn.Parameter(torch.tensor(w))
    torch_opt = torch.optim.Adam([theirs], lr=0.1)
    ours = nn.Parameter(Tensor(w.copy()))
    for _ in range(3):
        torch_opt.zero_grad()
        (theirs ** 2).sum().backward()
        torch_opt.step()
    ours.detach().numpy()[...] = theirs.detach().numpy()
    state = torch_opt.state_dict()
    opt = optim.Adam([ours], lr=0.1)
    opt.load_state_dict({"state": {k: {n: (v.numpy() if hasattr(v, "numpy") else v) for n, v in s.items()}
                                   for k, s in state["state"].items()},
                         "param_groups": state["param_groups"]})
    for _ in range(3):
        torch_opt.zero_grad()
        (theirs ** 2).sum().backward()
        torch_opt.step()
        opt.zero_grad()
        (ours ** 2).sum().backward()
        opt.step()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)

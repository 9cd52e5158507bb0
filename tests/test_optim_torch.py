"""RMSprop, Adagrad, Adadelta, Adamax and NAdam against torch.optim, step by step.

Both libraries start from the same parameters and receive the same gradients
(random ones, of several scales, and the gradients of a small model), and must
agree after every one of 20 steps: float64 to 1e-10 relative, float32 to 1e-5.
"""
import copy
import warnings

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn, optim
from taugrad.tensors.core.node import Tensor

SHAPES = [(3, 4), (4,), (2, 1, 3)]
STEPS = 20

CONFIGS = [
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.01, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adamax", dict(maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(maximize=True)),
]
IDS = [f"{name}-{kwargs}" for name, kwargs in CONFIGS]


@pytest.fixture
def torch_float64():
    """Both keep some scalar state (NAdam's mu_product) in the default dtype: make it float64 in both."""
    previous, ours = torch.get_default_dtype(), taugrad.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    taugrad.set_default_dtype(taugrad.float64)
    yield
    torch.set_default_dtype(previous)
    taugrad.set_default_dtype(ours)


def _params(seed, dtype):
    rng = np.random.default_rng(seed)
    start = [rng.normal(size=shape).astype(dtype) for shape in SHAPES]
    return ([Tensor(a.copy(), requires_grad=True) for a in start],
            [torch.tensor(a.copy(), requires_grad=True) for a in start])


def _set_grads(ours, theirs, rng, step):
    for i, (p, q) in enumerate(zip(ours, theirs)):
        if (i + step) % 7 == 0:  # now and then a parameter without a gradient: skipped by both
            p.grad, q.grad = None, None
            continue
        g = (rng.normal(size=p.shape) * rng.choice([1e-3, 1.0, 30.0])).astype(p._data.dtype)
        p.grad = Tensor(g.copy())
        q.grad = torch.tensor(g.copy())


def _assert_same(ours, theirs, rtol, where):
    for i, (p, q) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(p._data, q.detach().numpy(), rtol=rtol, atol=rtol * 0.1,  # params are O(1): 0.1 rtol absolute near a zero crossing
                                   err_msg=f"{where}: parameter {i}")


def _run(name, kwargs, dtype, rtol):
    ours, theirs = _params(0, dtype)
    ours_opt = getattr(optim, name)(ours, **kwargs)
    theirs_opt = getattr(torch.optim, name)(theirs, **kwargs)
    rng = np.random.default_rng(1)
    for step in range(STEPS):
        _set_grads(ours, theirs, rng, step)
        ours_opt.step()
        theirs_opt.step()
        _assert_same(ours, theirs, rtol, f"{name} step {step}")
        assert all(p._data.dtype == dtype for p in ours)


@pytest.mark.parametrize("name, kwargs", CONFIGS, ids=IDS)
def test_float64_matches_torch_step_by_step(name, kwargs, torch_float64):
    _run(name, kwargs, np.float64, 1e-10)


@pytest.mark.parametrize("name, kwargs", CONFIGS, ids=IDS)
def test_float32_matches_torch_step_by_step(name, kwargs):
    _run(name, kwargs, np.float32, 1e-5)


def _twin_models(seed=0):
    """A taugrad MLP and a torch one with the same float64 weights."""
    taugrad.manual_seed(seed)
    ours = nn.Sequential(nn.Linear(5, 8, dtype=np.float64), nn.Tanh(), nn.Linear(8, 3, dtype=np.float64))
    theirs = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    theirs.load_state_dict({k: torch.tensor(v._data.copy()) for k, v in ours.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam"])
def test_training_a_small_model_with_two_param_groups_matches_torch(name, torch_float64):
    ours, theirs = _twin_models()
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(16, 5)), rng.integers(0, 3, size=16)
    groups = lambda model: [  # noqa: E731
        {"params": list(model[0].parameters()), "lr": 0.05, "weight_decay": 0.01},
        {"params": list(model[2].parameters())},
    ]
    ours_opt = getattr(optim, name)(groups(ours), lr=0.01)
    theirs_opt = getattr(torch.optim, name)(groups(theirs), lr=0.01)
    for step in range(STEPS):
        ours_opt.zero_grad()
        theirs_opt.zero_grad()
        taugrad.functional.cross_entropy(ours(x), y).backward()
        torch.nn.functional.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y)).backward()
        ours_opt.step()
        theirs_opt.step()
        for (key, p), q in zip(ours.named_parameters(), theirs.parameters()):
            np.testing.assert_allclose(p._data, q.detach().numpy(), rtol=1e-10, atol=1e-13,
                                       err_msg=f"{name} step {step} {key}")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam"])
def test_add_param_group_takes_defaults_and_its_own_options(name):
    ours, _ = _params(0, np.float64)
    opt = getattr(optim, name)(ours[:2], lr=0.01)
    opt.add_param_group({"params": ours[2:], "lr": 0.5})
    assert [g["lr"] for g in opt.param_groups] == [0.01, 0.5]
    assert set(opt.param_groups[1]) == set(opt.param_groups[0])  # every default filled in
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": ours[:1]})


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam"])
def test_zero_grad_sets_gradients_to_none_by_default(name):
    ours, _ = _params(0, np.float64)
    opt = getattr(optim, name)(ours, lr=0.01)
    for p in ours:
        p.grad = Tensor(np.ones(p.shape))
    opt.zero_grad()
    assert all(p.grad is None for p in ours)


@pytest.mark.parametrize("name, kwargs", CONFIGS[::2], ids=IDS[::2])
def test_state_dict_round_trip_resumes_exactly(name, kwargs, torch_float64):
    """Ten steps, save, load into a fresh optimizer, ten more: the same as twenty uninterrupted.

    The saved state also loads into torch's optimizer, which then continues in step.
    """
    ours, theirs = _params(0, np.float64)
    first = getattr(optim, name)(ours, **kwargs)
    torch_opt = getattr(torch.optim, name)(theirs, **kwargs)
    rng = np.random.default_rng(3)
    for step in range(10):
        _set_grads(ours, theirs, rng, step)
        first.step()
        torch_opt.step()
    saved = copy.deepcopy(first.state_dict())
    second = getattr(optim, name)(ours, **kwargs)
    second.load_state_dict(saved)
    theirs_loaded = getattr(torch.optim, name)(theirs, **kwargs)
    theirs_loaded.load_state_dict(torch_opt.state_dict())
    for step in range(10, 20):
        _set_grads(ours, theirs, rng, step)
        second.step()
        theirs_loaded.step()
        _assert_same(ours, theirs, 1e-10, f"{name} resumed step {step}")
    assert saved == saved  # the saved dict is plain data (deepcopy worked, no live arrays touched)


def test_torch_state_dict_loads_into_ours():
    ours, theirs = _params(0, np.float64)
    torch_opt = torch.optim.RMSprop(theirs, lr=0.01, momentum=0.9, centered=True)
    rng = np.random.default_rng(4)
    for step in range(5):
        _set_grads(ours, theirs, rng, 1)
        torch_opt.step()
    for p, q in zip(ours, theirs):
        p._data[...] = q.detach().numpy()
    ours_opt = optim.RMSprop(ours, lr=0.01, momentum=0.9, centered=True)
    ours_opt.load_state_dict({
        "state": {k: {n: (v.numpy() if v.ndim else v.item()) for n, v in s.items()}
                  for k, s in torch_opt.state_dict()["state"].items()},
        "param_groups": torch_opt.state_dict()["param_groups"],
    })
    for step in range(5):
        _set_grads(ours, theirs, rng, 1)
        torch_opt.step()
        ours_opt.step()
        _assert_same(ours, theirs, 1e-10, f"after loading torch's state, step {step}")


def test_tied_weight_is_one_parameter_and_updated_once():
    """A Parameter in two modules: parameters() lists it once and the optimizer steps it once (as torch)."""
    taugrad.manual_seed(0)
    embed = nn.Embedding(6, 4, dtype=np.float64)
    head = nn.Linear(4, 6, bias=False, dtype=np.float64)
    head.weight = embed.weight
    model = nn.Sequential(embed, head)
    assert len(list(model.parameters())) == 1
    assert list(model.state_dict()) == ["0.weight", "1.weight"]  # both names, as torch's state dict

    t_embed = torch.nn.Embedding(6, 4).double()
    t_head = torch.nn.Linear(4, 6, bias=False).double()
    t_head.weight = t_embed.weight
    t_model = torch.nn.Sequential(t_embed, t_head)
    t_model.load_state_dict({k: torch.tensor(v._data.copy()) for k, v in model.state_dict().items()})

    ours_opt = optim.Adam(model.parameters(), lr=0.1)
    theirs_opt = torch.optim.Adam(t_model.parameters(), lr=0.1)
    idx = np.array([[0, 3, 5], [2, 2, 1]])
    for step in range(5):
        ours_opt.zero_grad()
        theirs_opt.zero_grad()
        taugrad.functional.cross_entropy(model(idx).reshape(-1, 6), idx.reshape(-1)).backward()
        torch.nn.functional.cross_entropy(t_model(torch.tensor(idx)).reshape(-1, 6),
                                          torch.tensor(idx.reshape(-1))).backward()
        ours_opt.step()
        theirs_opt.step()
        np.testing.assert_allclose(embed.weight._data, t_embed.weight.detach().numpy(), rtol=1e-10, atol=1e-13)


def test_a_parameter_twice_in_one_group_is_an_error_not_a_double_update():
    """torch warns and then updates such a parameter twice per step; taugrad refuses (see the README)."""
    ours, _ = _params(0, np.float64)
    with pytest.raises(ValueError, match="more than once"):
        optim.RMSprop(ours + ours[:1])


@pytest.mark.parametrize("make, message", [
    (lambda ps: optim.RMSprop(ps, alpha=-0.1), "alpha"),
    (lambda ps: optim.Adagrad(ps, lr_decay=-1), "lr_decay"),
    (lambda ps: optim.Adadelta(ps, rho=1.5), "rho"),
    (lambda ps: optim.Adamax(ps, betas=(1.0, 0.9)), "beta parameter at index 0"),
    (lambda ps: optim.NAdam(ps, momentum_decay=-1), "momentum_decay"),
])
def test_bad_hyperparameters_are_named(make, message):
    ours, _ = _params(0, np.float64)
    with pytest.raises(ValueError, match=message):
        make(ours)

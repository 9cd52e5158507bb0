"""Every optimizer against torch in float64: the keywords torch takes, ``params`` in every form, 20 steps to 1e-10.

RAdam, Rprop, ASGD and LBFGS (with a closure, with and without the
strong-Wolfe line search), ``Adam(decoupled_weight_decay=)``, a tensor
``lr``, ``maximize``, and torch's loop switches (``foreach``, ``fused``,
``capturable``) which change no number.
"""
import inspect

import numpy as np
import pytest
import torch

import taugrad
from taugrad import optim

SHAPES = [(3, 4), (4,), (2, 1, 3)]
NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD",
         "LBFGS"]


@pytest.fixture(autouse=True)
def float64_defaults():
    previous, ours = torch.get_default_dtype(), taugrad.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    taugrad.set_default_dtype(taugrad.float64)
    yield
    torch.set_default_dtype(previous)
    taugrad.set_default_dtype(ours)


def twins(seed=0):
    rng = np.random.default_rng(seed)
    start = [rng.normal(size=s) for s in SHAPES]
    return ([taugrad.tensor(a.copy(), requires_grad=True) for a in start],
            [torch.tensor(a.copy(), requires_grad=True) for a in start])


def run_steps(name, kwargs, steps=20, seed=1, maker=None):
    """``steps`` steps of taugrad's and torch's optimizer on the same gradients; both parameter lists."""
    ours, theirs = twins()
    make = maker or (lambda lib, params: getattr(lib.optim, name)(params, **kwargs(lib) if callable(kwargs)
                                                                 else kwargs))
    opt, topt = make(taugrad, ours), make(torch, theirs)
    rng = np.random.default_rng(seed)
    for step in range(steps):
        for p, q in zip(ours, theirs):
            g = rng.normal(size=p.shape)
            p.grad = taugrad.tensor(g.copy())
            q.grad = torch.tensor(g.copy())
        opt.step()
        topt.step()
        for i, (p, q) in enumerate(zip(ours, theirs)):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"{name} {kwargs} step {step} parameter {i}")
    return opt, topt, ours, theirs


def assert_same_state(opt, topt, ours, theirs):
    for p, q in zip(ours, theirs):
        mine, want = opt.state[p], topt.state[q]
        assert sorted(mine) == sorted(want)
        for key, value in want.items():
            assert isinstance(mine[key], taugrad.Tensor), key
            np.testing.assert_allclose(mine[key].detach().numpy(), value.detach().numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=key)


NEW_CASES = [
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=3, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True)),
]


@pytest.mark.parametrize("name, kwargs", NEW_CASES, ids=[f"{n}-{k}" for n, k in NEW_CASES])
def test_new_optimizers_and_options_match_torch_for_20_steps(name, kwargs):
    opt, topt, ours, theirs = run_steps(name, kwargs)
    assert_same_state(opt, topt, ours, theirs)
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


STEPPED = [n for n in NAMES if n != "LBFGS"]


@pytest.mark.parametrize("name", STEPPED)
def test_maximize_matches_torch(name):
    kwargs = dict(lr=0.01, maximize=True)
    if name == "SGD":
        kwargs["momentum"] = 0.9
    run_steps(name, kwargs, steps=5)


@pytest.mark.parametrize("name", STEPPED)
def test_a_tensor_learning_rate_matches_torch(name):
    opt, topt, ours, theirs = run_steps(name, lambda lib: dict(lr=lib.tensor(0.01)), steps=5)
    assert isinstance(opt.param_groups[0]["lr"], taugrad.Tensor)


@pytest.mark.parametrize("name", STEPPED)
def test_the_loop_switches_torch_takes_on_the_cpu_are_taken_and_change_no_number(name):
    switches = {k: v for k, v in dict(foreach=False, capturable=False, fused=None).items()
                if k in inspect.signature(getattr(torch.optim, name)).parameters}
    _, _, _, _ = run_steps(name, dict(lr=0.01, **switches), steps=3)
    if "foreach" in switches:
        run_steps(name, dict(lr=0.01, foreach=True), steps=3)


def test_every_keyword_torch_takes_is_taken():
    for name in NAMES:
        theirs = inspect.signature(getattr(torch.optim, name)).parameters
        ours = inspect.signature(getattr(optim, name)).parameters
        assert list(theirs) == list(ours), name
        for key, parameter in theirs.items():
            assert ours[key].kind == parameter.kind, (name, key)
            if parameter.default is not inspect.Parameter.empty:
                assert ours[key].default == parameter.default, (name, key)


@pytest.mark.parametrize("name", STEPPED)
def test_param_groups_hold_torchs_keys(name):
    ours, theirs = twins()
    opt, topt = getattr(optim, name)(ours, lr=0.1), getattr(torch.optim, name)(theirs, lr=0.1)
    assert {k: v for k, v in opt.param_groups[0].items() if k != "params"} == \
        {k: v for k, v in topt.param_groups[0].items() if k != "params"}


def test_fused_with_foreach_is_refused_as_torch_refuses_it():
    ours, theirs = twins()
    with pytest.raises(RuntimeError, match="cannot be `True` together") as info:
        torch.optim.Adam(theirs, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="cannot be `True` together"):
        optim.Adam(ours, fused=True, foreach=True)
    assert info


@pytest.mark.parametrize("form", ["generator", "filter", "list", "tuple", "groups", "named"])
@pytest.mark.parametrize("name", ["SGD", "Adam", "RAdam", "Rprop", "ASGD"])
def test_params_are_taken_once_in_every_form_torch_takes(name, form):
    def maker(lib, params):
        given = {
            "generator": lambda: (p for p in params),
            "filter": lambda: filter(lambda p: p.requires_grad, params),
            "list": lambda: list(params),
            "tuple": lambda: tuple(params),
            "groups": lambda: [{"params": params[:1], "lr": 0.02}, {"params": iter(params[1:])}],
            "named": lambda: [(f"p{i}", p) for i, p in enumerate(params)],
        }[form]()
        return getattr(lib.optim, name)(given, lr=0.01)

    opt, topt, ours, theirs = run_steps(name, {}, steps=5, maker=maker)
    assert [len(g["params"]) for g in opt.param_groups] == [len(g["params"]) for g in topt.param_groups]
    if form == "named":
        assert opt.param_groups[0]["param_names"] == topt.param_groups[0]["param_names"]


@pytest.mark.parametrize("name", NAMES)
def test_a_single_tensor_is_refused_with_torchs_message(name):
    with pytest.raises(TypeError) as theirs:
        getattr(torch.optim, name)(torch.zeros(2, dtype=torch.float32, requires_grad=True), lr=0.1)
    with pytest.raises(TypeError) as ours:
        getattr(optim, name)(taugrad.zeros(2, dtype=taugrad.float32, requires_grad=True), lr=0.1)
    assert str(ours.value) == str(theirs.value).replace("torch.", "taugrad.")


def _lbfgs_problem(lib, params):
    """A smooth non-quadratic loss of the three parameters (its minimum is not at a step of 1)."""
    rng = np.random.default_rng(5)
    a = lib.tensor(rng.normal(size=(30, 22)) / 4)
    b = lib.tensor(rng.normal(size=30))

    def loss_of():
        x = lib.cat([p.reshape(-1) for p in params])
        r = a @ x - b
        return (r * r).sum() + 0.1 * (x ** 4).sum()
    return loss_of


@pytest.mark.parametrize("kwargs", [dict(), dict(lr=0.8, max_iter=3, history_size=4),
                                    dict(line_search_fn="strong_wolfe"),
                                    dict(line_search_fn="strong_wolfe", max_iter=5, history_size=2)])
def test_lbfgs_matches_torch_with_a_closure(kwargs):
    ours, theirs = twins()
    opt, topt = optim.LBFGS(ours, **kwargs), torch.optim.LBFGS(theirs, **kwargs)
    our_loss, their_loss = _lbfgs_problem(taugrad, ours), _lbfgs_problem(torch, theirs)

    def closure(optimizer, loss_of):
        def run():
            optimizer.zero_grad()
            loss = loss_of()
            loss.backward()
            return loss
        return run

    for step in range(20):
        mine = opt.step(closure(opt, our_loss))
        want = topt.step(closure(topt, their_loss))
        assert abs(float(mine) - float(want)) <= 1e-10 * max(1.0, abs(float(want))), step
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-9, atol=1e-10,
                                       err_msg=f"LBFGS {kwargs} step {step}")
    state, tstate = opt.state[ours[0]], topt.state[theirs[0]]
    assert state["func_evals"] == tstate["func_evals"] and state["n_iter"] == tstate["n_iter"]


def test_lbfgs_takes_one_group_only_as_torch():
    ours, _ = twins()
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": ours[:1]}, {"params": ours[1:]}])


def test_differentiable_steps_are_refused_not_ignored():
    ours, _ = twins()
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        optim.Adam(ours, differentiable=True)


def test_scheduler_step_with_an_epoch_warns_and_takes_the_closed_form_as_torch():
    results = []
    for lib in (taugrad, torch):
        p = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        rates = []
        for epoch in [1, 2, 5, 3]:
            with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)`"):
                sched.step(epoch)
            rates.append(opt.param_groups[0]["lr"])
        sched.step()
        rates.append(opt.param_groups[0]["lr"])
        results.append(rates)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


@pytest.mark.parametrize("make", [
    lambda lib, opt: lib.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.9 ** (e % 3)),
    lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3),
    lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=2,
                                                     step_size_down=5, mode="triangular2"),
    lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                                     mode="exp_range", gamma=0.9, base_momentum=0.5),
    lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                     scale_fn=lambda x: 1 / (x + 1), scale_mode="iterations"),
], ids=["MultiplicativeLR", "CyclicLR", "CyclicLR-triangular2", "CyclicLR-exp_range", "CyclicLR-scale_fn"])
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_new_schedulers_match_torch_for_20_steps(make, opt_name):
    def maker(lib, params):
        kwargs = dict(lr=0.05, momentum=0.9) if opt_name == "SGD" else dict(lr=0.05)
        opt = getattr(lib.optim, opt_name)([{"params": params[:1]}, {"params": params[1:]}], **kwargs)
        opt._test_scheduler = make(lib, opt)
        step = opt.step

        def step_and_schedule(closure=None):
            step()
            opt._test_scheduler.step()
        opt.step = step_and_schedule
        return opt

    opt, topt, _, _ = run_steps(opt_name, {}, maker=maker)
    assert opt._test_scheduler.get_last_lr() == pytest.approx(topt._test_scheduler.get_last_lr(), rel=1e-12)
    for ours, theirs in zip(opt.param_groups, topt.param_groups):
        for key in ("lr", "momentum", "betas", "max_momentum", "base_momentum", "initial_lr"):
            assert (key in ours) == (key in theirs), key
            if key in theirs:
                assert ours[key] == pytest.approx(theirs[key], rel=1e-12), key
    saved = opt._test_scheduler.state_dict()
    for key in ("base_lrs", "last_epoch", "_step_count", "_last_lr"):
        assert saved[key] == pytest.approx(topt._test_scheduler.state_dict()[key], rel=1e-12), key

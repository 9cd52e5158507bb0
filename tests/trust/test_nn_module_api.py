"""Module API that torch code calls: hooks of every kind, get_submodule/get_parameter, state_dict options,
named_* options; each against torch float64 from the same NumPy values."""
from collections import OrderedDict

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn

RNG = np.random.default_rng(3)
X = RNG.normal(size=(4, 3))
PARAMS = [RNG.normal(size=(5, 3)), RNG.normal(size=5), RNG.normal(size=(2, 5)), RNG.normal(size=2)]


def _model(lib):
    m = lib.Sequential(OrderedDict([("fc", lib.Linear(3, 5)), ("act", lib.Tanh()), ("out", lib.Linear(5, 2))]))
    m = m.double()
    grad_off = torch.no_grad() if lib is torch.nn else taugrad.no_grad()
    tensor = torch.from_numpy if lib is torch.nn else taugrad.tensor
    with grad_off:
        for p, v in zip(m.parameters(), PARAMS):
            p.copy_(tensor(v))
    return m, tensor


def _np(t):
    return None if t is None else t.detach().numpy().copy()


def _run_both(fn):
    return [fn(lib, *_model(lib)) for lib in (torch.nn, nn)]


def _close(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif a is None or isinstance(a, (str, bool, int)):
        assert a == b
    else:
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-13)


def test_forward_pre_hook_replaces_the_input_and_prepend_runs_first():
    def run(lib, m, tensor):
        log = []
        m.fc.register_forward_pre_hook(lambda mod, args: (log.append("second"), args[0] * 2)[1])
        m.fc.register_forward_pre_hook(lambda mod, args: log.append("first"), prepend=True)
        m.out.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True)
        return log, _np(m(tensor(X)))
    a, b = _run_both(run)
    assert a[0] == b[0] == ["first", "second"]
    _close(a[1], b[1])


def test_forward_hook_with_kwargs_and_always_call():
    class Scaled(torch.nn.Module):
        def forward(self, x, scale=1.0):
            if scale < 0:
                raise ValueError("negative")
            return x * scale

    class ScaledG(nn.Module):
        def forward(self, x, scale=1.0):
            if scale < 0:
                raise ValueError("negative")
            return x * scale

    results = []
    for lib, cls, tensor in ((torch.nn, Scaled, torch.from_numpy), (nn, ScaledG, taugrad.tensor)):
        m = cls()
        seen = []
        m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["scale"], with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: seen.append(out is None), always_call=True)
        y = m(tensor(X), scale=3.0)
        with pytest.raises(ValueError):
            m(tensor(X), scale=-1.0)
        results.append((_np(y), seen))
    _close(results[0][0], results[1][0])
    assert results[0][1] == results[1][1] == [False, True]


def test_full_backward_hooks_see_torch_gradients_and_can_replace_them():
    def run(lib, m, tensor):
        seen = []

        def full(mod, grad_input, grad_output):
            seen.append(("full", [_np(g) for g in grad_input], [_np(g) for g in grad_output]))
            return (grad_input[0] * 3,)

        def pre(mod, grad_output):
            seen.append(("pre", [_np(g) for g in grad_output]))
            return (grad_output[0] * 0.5,)

        m.out.register_full_backward_hook(full)
        m.out.register_full_backward_pre_hook(pre)
        m.fc.register_full_backward_hook(lambda mod, gi, go: seen.append(("first", [_np(g) for g in gi])))
        x = tensor(X.copy()).requires_grad_()
        (m(x) ** 2).sum().backward()
        return seen, _np(x.grad), [_np(p.grad) for p in m.parameters()]
    a, b = _run_both(run)
    assert [s[0] for s in a[0]] == [s[0] for s in b[0]] == ["pre", "full", "first"]
    for sa, sb in zip(a[0], b[0]):
        _close(list(sa[1:]), list(sb[1:]))
    _close(a[1], b[1])
    _close(a[2], b[2])


def test_get_submodule_parameter_buffer():
    for lib in (torch.nn, nn):
        m = lib.Sequential(lib.Linear(2, 2), lib.Sequential(lib.BatchNorm1d(2)))
        assert m.get_submodule("1.0") is m[1][0]
        assert m.get_submodule("") is m
        assert m.get_parameter("0.weight") is m[0].weight
        assert m.get_buffer("1.0.running_mean") is m[1][0].running_mean
        with pytest.raises(AttributeError):
            m.get_submodule("0.weight")
        with pytest.raises(AttributeError):
            m.get_submodule("2")
        with pytest.raises(AttributeError):
            m.get_parameter("1.0.running_mean")
        with pytest.raises(AttributeError):
            m.get_buffer("0.weight")


def test_state_dict_prefix_keep_vars_destination():
    for lib in (torch.nn, nn):
        m = lib.Linear(2, 3)
        sd = m.state_dict(prefix="enc.", keep_vars=True)
        assert list(sd) == ["enc.weight", "enc.bias"] and sd["enc.weight"] is m.weight
        dest = OrderedDict(x=1)
        out = m.state_dict(destination=dest, prefix="p.")
        assert out is dest and list(out) == ["x", "p.weight", "p.bias"]
        assert not out["p.weight"].requires_grad


def test_named_members_remove_duplicate():
    names = []
    for lib in (torch.nn, nn):
        shared = lib.Linear(2, 2)
        m = lib.Sequential(shared, lib.ReLU(), shared)
        m.register_buffer("buf", m[0].weight.detach())
        m.extra = lib.Linear(2, 2)
        m.extra.weight = m[0].weight
        names.append((
            [k for k, _ in m.named_parameters()],
            [k for k, _ in m.named_parameters(remove_duplicate=False)],
            [k for k, _ in m.named_parameters(prefix="root", recurse=False)],
            [k for k, _ in m.named_modules()],
            [k for k, _ in m.named_modules(remove_duplicate=False)],
            [k for k, _ in m.named_modules(prefix="top")],
            [k for k, _ in m.named_buffers(remove_duplicate=False)],
        ))
    assert names[0] == names[1]


def test_load_state_dict_assign():
    for lib, tensor in ((torch.nn, torch.from_numpy), (nn, taugrad.tensor)):
        m = lib.Linear(3, 5).double()
        m.load_state_dict({"weight": tensor(PARAMS[0]), "bias": tensor(PARAMS[1])}, assign=True)
        np.testing.assert_array_equal(m.weight.detach().numpy(), PARAMS[0])


def test_set_submodule_and_modules_remove_duplicate():
    shapes = []
    for lib in (torch.nn, nn):
        shared = lib.Linear(2, 2)
        m = lib.Sequential(lib.Sequential(lib.Linear(2, 3), lib.ReLU()), shared, shared)
        m.set_submodule("0.1", lib.Tanh())
        m.set_submodule("0.2", lib.Sigmoid())
        with pytest.raises(AttributeError):
            m.set_submodule("0.5", lib.ReLU(), strict=True)
        with pytest.raises(AttributeError):
            m.set_submodule("0.0.weight", lib.ReLU())
        shapes.append(([type(x).__name__ for x in m.modules()],
                       [type(x).__name__ for x in m.modules(remove_duplicate=False)], list(m.state_dict())))
    assert shapes[0] == shapes[1]

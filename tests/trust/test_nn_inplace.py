"""``inplace=True`` honoured as torch honours it: the input holds the result, the same object is returned,
gradients through it are torch's, the grad_fn is torch's node, a leaf that requires grad is refused, and a
value saved for backward and then overwritten makes backward raise."""
import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn.functional as F
from taugrad import nn

RNG = np.random.default_rng(5)

FUNCTIONS = {
    "relu": {}, "relu6": {}, "leaky_relu": {"negative_slope": 0.2}, "elu": {"alpha": 0.7}, "celu": {"alpha": 1.5},
    "selu": {}, "hardtanh": {"min_val": -0.5, "max_val": 0.8}, "hardsigmoid": {}, "hardswish": {}, "silu": {},
    "mish": {}, "threshold": {"threshold": 0.1, "value": -2.0},
}
MODULES = {
    "ReLU": (), "ReLU6": (), "LeakyReLU": (0.2,), "ELU": (0.7,), "CELU": (1.5,), "SELU": (), "Hardtanh": (-0.5, 0.8),
    "Hardsigmoid": (), "Hardswish": (), "SiLU": (), "Mish": (), "Threshold": (0.1, -2.0),
}


def _pair(shape=(3, 4)):
    v = RNG.normal(size=shape) * 2
    v[0, 0] = 0.0
    return taugrad.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)


def _check(gcall, tcall):
    ga, ta = _pair()
    gx, tx = ga * 1.5, ta * 1.5          # non-leaves: in place is allowed
    gy, ty = gcall(gx), tcall(tx)
    assert (gy is gx) and (ty is tx)
    np.testing.assert_allclose(gx.detach().numpy(), tx.detach().numpy(), rtol=1e-12, atol=1e-15)
    assert gy.grad_fn.name() == ty.grad_fn.name()
    (gy * gy).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(ga.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functional_inplace(name):
    kw = FUNCTIONS[name]
    _check(lambda x: getattr(F, name)(x, inplace=True, **kw),
           lambda x: getattr(torch.nn.functional, name)(x, inplace=True, **kw))


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_inplace(name):
    args = MODULES[name]
    gm, tm = getattr(nn, name)(*args, inplace=True), getattr(torch.nn, name)(*args, inplace=True)
    _check(gm, tm)
    assert repr(gm) == repr(tm)


@pytest.mark.parametrize("name", ["relu_", "leaky_relu_", "elu_", "hardtanh_", "selu_", "celu_"])
def test_underscore_functions(name):
    _check(getattr(F, name), getattr(torch.nn.functional, name))


def test_threshold_underscore():
    _check(lambda x: F.threshold_(x, 0.2, 5.0), lambda x: torch.nn.functional.threshold_(x, 0.2, 5.0))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_inplace_on_a_leaf_that_requires_grad_is_refused_as_torch(name):
    kw = FUNCTIONS[name]
    ga, ta = _pair()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        getattr(torch.nn.functional, name)(ta, inplace=True, **kw)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        getattr(F, name)(ga, inplace=True, **kw)


def test_forward_hook_sees_the_overwritten_input():
    """A residual or hook that reuses the input of an in-place ReLU sees the ReLU's output, as in torch."""
    seen = []
    for lib, tensor in ((torch.nn, torch.tensor), (nn, taugrad.tensor)):
        m = lib.Sequential(lib.Linear(3, 3), lib.ReLU(inplace=True)).double()
        with (torch.no_grad() if lib is torch.nn else taugrad.no_grad()):
            m[0].weight.copy_(tensor(np.eye(3)))
            m[0].bias.zero_()
        got = []
        m[1].register_forward_hook(lambda mod, args, out: got.append(args[0].detach().numpy().copy()))
        m(tensor(np.array([[-1.0, 2.0, -3.0]])))
        seen.append(got[0])
    np.testing.assert_array_equal(seen[1], seen[0])
    assert (seen[1] >= 0).all()


def test_saved_value_overwritten_in_place_makes_backward_raise():
    """exp saves its output for backward; an in-place activation on that output makes backward raise, as torch."""
    ga, ta = _pair()
    for a, f in ((ta, torch.nn.functional), (ga, F)):
        y = (a * 1.0).exp()
        f.leaky_relu(y, 0.1, inplace=True)
        with pytest.raises(RuntimeError, match="modified by an inplace operation|modified by an in-place operation"):
            y.sum().backward()
        s = (a * 1.0).sigmoid()
        f.hardtanh(s, -0.2, 0.7, inplace=True)
        with pytest.raises(RuntimeError, match="modified by an inplace operation|modified by an in-place operation"):
            s.sum().backward()


def test_dropout_inplace():
    for p in (0.0, 0.4, 1.0):
        v = RNG.uniform(1.0, 2.0, size=(3, 4))  # no zeros: a zero after dropout means dropped
        ga, ta = taugrad.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
        gx = ga * 1.0
        taugrad.manual_seed(0)
        gy = F.dropout(gx, p, True, True)
        assert gy is gx
        kept = gx.detach().numpy() != 0
        expected = (ga.detach().numpy() / (1 - p) if p < 1 else 0 * ga.detach().numpy()) * kept
        np.testing.assert_allclose(gx.detach().numpy(), expected, rtol=1e-12)
        gy.sum().backward()
        np.testing.assert_allclose(ga.grad.numpy(), kept / (1 - p) if p < 1 else 0 * kept, rtol=1e-12)
        tx = ta * 1.0
        assert torch.nn.functional.dropout(tx, p, True, True) is tx
    assert F.dropout(gx, 0.5, False, True) is gx
    gm, tm = nn.Dropout(0.3, inplace=True), torch.nn.Dropout(0.3, inplace=True)
    assert repr(gm) == repr(tm)
    ga, _ = _pair()
    x = ga * 1.0
    assert gm(x) is x and x.grad_fn.name() == "MulBackward0"
    x4 = taugrad.tensor(RNG.normal(size=(2, 3, 4, 4)))
    assert nn.Dropout2d(0.5, inplace=True)(x4) is x4
    assert repr(nn.Dropout2d(0.5, inplace=True)) == repr(torch.nn.Dropout2d(0.5, inplace=True))

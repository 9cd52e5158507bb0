"""The Hessian of a small MLP's loss and Hessian-vector products, against PyTorch (float64).

The network is 3-4-2 with tanh and a softmax cross-entropy (and an MSE
variant); the loss is a function of its four parameter tensors, so
``func.hessian(loss, argnums=(0, 1, 2, 3))`` is the 4x4 block Hessian that
``torch.autograd.functional.hessian`` returns for the same tuple of inputs.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad
import taugrad.functional as F
from taugrad import func

RNG = np.random.default_rng(2024)
SHAPES = [(4, 3), (4,), (2, 4), (2,)]
PARAMS = [RNG.normal(scale=0.8, size=s) for s in SHAPES]
X = RNG.normal(size=(5, 3))
CLASSES = np.array([0, 1, 1, 0, 1])
Y_REGRESSION = RNG.normal(size=(5, 2))


def tg_loss(kind):
    x = taugrad.tensor(X, dtype="float64")

    def loss(w1, b1, w2, b2):
        out = F.linear(F.linear(x, w1, b1).tanh(), w2, b2)
        if kind == "cross_entropy":
            return F.cross_entropy(out, CLASSES)
        return F.mse_loss(out, taugrad.tensor(Y_REGRESSION, dtype="float64"))

    return loss


def torch_loss(kind):
    x = torch.tensor(X)

    def loss(w1, b1, w2, b2):
        out = torch.nn.functional.linear(torch.tanh(torch.nn.functional.linear(x, w1, b1)), w2, b2)
        if kind == "cross_entropy":
            return torch.nn.functional.cross_entropy(out, torch.tensor(CLASSES))
        return torch.nn.functional.mse_loss(out, torch.tensor(Y_REGRESSION))

    return loss


def tg_params():
    return [taugrad.tensor(p, dtype="float64") for p in PARAMS]


def torch_params():
    return tuple(torch.tensor(p) for p in PARAMS)


@pytest.mark.parametrize("kind", ["cross_entropy", "mse"])
def test_block_hessian_of_mlp_loss_matches_torch(kind):
    ours = func.hessian(tg_loss(kind), argnums=(0, 1, 2, 3))(*tg_params())
    theirs = torch.autograd.functional.hessian(torch_loss(kind), torch_params())
    for i in range(4):
        for j in range(4):
            assert ours[i][j].shape == tuple(theirs[i][j].shape) == SHAPES[i] + SHAPES[j]
            np.testing.assert_allclose(ours[i][j].detach().numpy(), theirs[i][j].numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"block ({i}, {j})")


def test_flat_hessian_is_symmetric_and_matches_torch():
    """All 26 parameters as one vector: a (26, 26) Hessian, symmetric, equal to PyTorch's."""
    sizes = [int(np.prod(s)) for s in SHAPES]
    splits = np.cumsum(sizes)[:-1]

    def flat_loss(theta, lib_loss, reshape):
        parts = [reshape(p, s) for p, s in zip(split(theta, splits), SHAPES)]
        return lib_loss(*parts)

    def split(theta, at):
        bounds = [0, *at, theta.shape[0]]
        return [theta[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]

    theta = np.concatenate([p.ravel() for p in PARAMS])
    ours = func.hessian(lambda t: flat_loss(t, tg_loss("cross_entropy"), lambda p, s: p.reshape(s)))(
        taugrad.tensor(theta, dtype="float64"))
    theirs = torch.autograd.functional.hessian(
        lambda t: flat_loss(t, torch_loss("cross_entropy"), lambda p, s: p.reshape(s)), torch.tensor(theta))
    assert ours.shape == (26, 26)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.detach().numpy(), ours.detach().numpy().T, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", ["cross_entropy", "mse"])
def test_hvp_of_mlp_loss_matches_torch(kind):
    vs = [RNG.normal(size=s) for s in SHAPES]
    value, ours = func.hvp(tg_loss(kind), tuple(tg_params()), tuple(taugrad.tensor(v, dtype="float64") for v in vs))
    t_value, theirs = torch.autograd.functional.hvp(torch_loss(kind), torch_params(), tuple(torch.tensor(v) for v in vs))
    assert value.item() == pytest.approx(t_value.item(), rel=1e-12)
    for i in range(4):
        np.testing.assert_allclose(ours[i].detach().numpy(), theirs[i].numpy(), rtol=1e-10, atol=1e-12, err_msg=f"param {i}")


def test_hvp_equals_hessian_times_vector():
    params = tg_params()
    v = [RNG.normal(size=s) for s in SHAPES]
    H = func.hessian(tg_loss("cross_entropy"), argnums=(0, 1, 2, 3))(*params)
    _, hv = func.hvp(tg_loss("cross_entropy"), tuple(params), tuple(taugrad.tensor(x, dtype="float64") for x in v))
    for i in range(4):
        expected = sum(np.tensordot(H[i][j].detach().numpy(), v[j], axes=v[j].ndim) for j in range(4))
        np.testing.assert_allclose(hv[i].detach().numpy(), expected, rtol=1e-10, atol=1e-12)


def test_create_graph_through_nn_module_parameters_matches_torch():
    """backward(create_graph=True) on a Module's loss, then the gradient norm's gradient (a
    "gradient penalty"), against PyTorch doing the same."""
    from taugrad import nn

    model = nn.Sequential(nn.Linear(3, 4, dtype="float64"), nn.Tanh(), nn.Linear(4, 2, dtype="float64"))
    with taugrad.no_grad():
        for p, value in zip(model.parameters(), PARAMS):
            p.detach().numpy()[...] = value
    params = list(model.parameters())
    loss = F.cross_entropy(model(taugrad.tensor(X, dtype="float64")), CLASSES)
    grads = taugrad.grad(loss, params, create_graph=True)
    penalty = sum((g * g).sum() for g in grads)
    ours = taugrad.grad(penalty, params)

    t_params = [torch.tensor(p, requires_grad=True) for p in PARAMS]
    t_loss = torch_loss("cross_entropy")(*t_params)
    t_grads = torch.autograd.grad(t_loss, t_params, create_graph=True)
    theirs = torch.autograd.grad(sum((g * g).sum() for g in t_grads), t_params)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.detach().numpy(), t.numpy(), rtol=1e-10, atol=1e-12)

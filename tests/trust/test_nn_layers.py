"""Layers that raised where torch works, against torch float64 from the same NumPy values."""
import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn

RNG = np.random.default_rng(4)


def _grad_pair(tmod, gmod, shape, power=3):
    v = RNG.normal(size=shape)
    tx, gx = torch.tensor(v, requires_grad=True), taugrad.tensor(v, requires_grad=True)
    ty, gy = tmod(tx), gmod(gx)
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    (ty ** power).sum().backward()
    (gy ** power).sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-11)
    for tp, gp in zip(tmod.parameters(), gmod.parameters()):
        np.testing.assert_allclose(gp.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-11)
    return tx, gx


@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (4, 3)), ("BatchNorm1d", (4, 3, 5)),
                                         ("BatchNorm2d", (4, 3, 2, 2))])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_without_affine_trains_and_backpropagates(name, shape, affine):
    tmod = getattr(torch.nn, name)(3, affine=affine).double()
    gmod = getattr(nn, name)(3, affine=affine).double()
    _grad_pair(tmod, gmod, shape)
    np.testing.assert_allclose(gmod.running_var.numpy(), tmod.running_var.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gmod.running_mean.numpy(), tmod.running_mean.numpy(), rtol=1e-12, atol=1e-15)


def _copy_params(tmod, gmod):
    for tp, gp in zip(tmod.parameters(), gmod.parameters()):
        v = RNG.normal(size=tuple(tp.shape))
        with torch.no_grad():
            tp.copy_(torch.from_numpy(v))
        gp.data[...] = taugrad.tensor(v)


@pytest.mark.parametrize("n, shape", [(1, (4, 3, 5)), (3, (4, 3, 5)), (3, (2, 3)), (1, (6,))])
def test_prelu(n, shape):
    tmod, gmod = torch.nn.PReLU(n).double(), nn.PReLU(n).double()
    _copy_params(tmod, gmod)
    _grad_pair(tmod, gmod, shape, power=2)
    assert repr(gmod) == repr(tmod)


@pytest.mark.parametrize("normalized, shape", [(5, (2, 3, 5)), ((3, 5), (2, 3, 5))])
@pytest.mark.parametrize("eps", [None, 1e-3])
@pytest.mark.parametrize("affine", [True, False])
def test_rms_norm(normalized, shape, eps, affine):
    tmod = torch.nn.RMSNorm(normalized, eps=eps, elementwise_affine=affine).double()
    gmod = nn.RMSNorm(normalized, eps=eps, elementwise_affine=affine).double()
    _copy_params(tmod, gmod)
    _grad_pair(tmod, gmod, shape)
    assert repr(gmod) == repr(tmod)
    v = RNG.normal(size=shape)
    normalized = (normalized,) if isinstance(normalized, int) else normalized
    w = RNG.normal(size=normalized)
    np.testing.assert_allclose(
        F.rms_norm(taugrad.tensor(v), normalized, taugrad.tensor(w), eps).numpy(),
        torch.nn.functional.rms_norm(torch.tensor(v), normalized, torch.tensor(w), eps).numpy(), rtol=1e-12)


@pytest.mark.parametrize("r, shape", [(2, (2, 8, 3, 3)), (3, (9, 2, 4)), (2, (1, 2, 4, 3, 3))])
def test_pixel_shuffle_and_unshuffle(r, shape):
    _grad_pair(torch.nn.PixelShuffle(r), nn.PixelShuffle(r), shape)
    out = (shape[:-3] + (shape[-3] // (r * r), shape[-2] * r, shape[-1] * r))
    _grad_pair(torch.nn.PixelUnshuffle(r), nn.PixelUnshuffle(r), out)
    assert repr(nn.PixelShuffle(r)) == repr(torch.nn.PixelShuffle(r))
    with pytest.raises(ValueError):
        F.pixel_shuffle(taugrad.zeros(1, 3, 2, 2), 2)


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 4)])
@pytest.mark.parametrize("stats", [False, True])
def test_instance_norm_function(shape, stats):
    v = RNG.normal(size=shape)
    w, b = RNG.normal(size=3), RNG.normal(size=3)
    results = []
    for lib, f, tensor in ((torch, torch.nn.functional, torch.tensor), (taugrad, F, taugrad.tensor)):
        x, wt, bt = tensor(v, requires_grad=True), tensor(w, requires_grad=True), tensor(b, requires_grad=True)
        rm, rv = (tensor(np.zeros(3)), tensor(np.ones(3))) if stats else (None, None)
        y = f.instance_norm(x, rm, rv, wt, bt, momentum=0.3, eps=1e-4)
        (y ** 3).sum().backward()
        results.append([y.detach().numpy(), x.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()]
                       + ([rm.numpy(), rv.numpy()] if stats else []))
        if stats:
            z = f.instance_norm(tensor(v), rm, rv, wt.detach(), bt.detach(), use_input_stats=False)
            results[-1].append(z.detach().numpy())
    for a, b_ in zip(results[1], results[0]):
        np.testing.assert_allclose(a, b_, rtol=1e-9, atol=1e-11)


F = taugrad.nn.functional

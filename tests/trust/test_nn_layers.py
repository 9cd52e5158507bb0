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

"""nn.init functions torch code calls: deterministic ones against torch, random ones by contract."""
import math

import numpy as np
import pytest
import torch

import taugrad
from taugrad.nn import init


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
def test_eye_(shape):
    g, t = taugrad.empty(*shape), torch.empty(*shape)
    assert init.eye_(g) is g
    torch.nn.init.eye_(t)
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    with pytest.raises(ValueError):
        init.eye_(taugrad.empty(2, 2, 2))


@pytest.mark.parametrize("shape, groups", [((4, 3, 3), 1), ((6, 2, 3, 3), 2), ((4, 4, 1, 3, 5), 2), ((2, 5, 3), 1)])
def test_dirac_(shape, groups):
    g, t = taugrad.empty(*shape), torch.empty(*shape)
    init.dirac_(g, groups)
    torch.nn.init.dirac_(t, groups)
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    with pytest.raises(ValueError):
        init.dirac_(taugrad.empty(3, 3))
    with pytest.raises(ValueError):
        init.dirac_(taugrad.empty(5, 2, 3), 2)


def test_dirac_convolution_is_the_identity():
    conv = taugrad.nn.Conv2d(3, 3, 3, padding=1, bias=False)
    init.dirac_(conv.weight)
    x = taugrad.tensor(np.random.default_rng(0).normal(size=(2, 3, 5, 5)).astype(np.float32))
    np.testing.assert_allclose(conv(x).detach().numpy(), x.numpy(), rtol=1e-6)


@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (7, 3), (4, 2, 3, 3)])
@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_orthogonal_by_contract(shape, gain):
    w = taugrad.empty(*shape, dtype=taugrad.float64)
    assert init.orthogonal_(w, gain) is w
    m = w.numpy().reshape(shape[0], -1)
    small = min(m.shape)
    product = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(product, gain ** 2 * np.eye(small), atol=1e-10)
    taugrad.manual_seed(3)
    a = init.orthogonal_(taugrad.empty(*shape)).numpy().copy()
    taugrad.manual_seed(3)
    b = init.orthogonal_(taugrad.empty(*shape)).numpy().copy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        init.orthogonal_(taugrad.empty(3))


def test_sparse_by_contract():
    w = taugrad.empty(10, 6, dtype=taugrad.float64)
    init.sparse_(w, 0.3, std=0.5)
    zeros_per_column = (w.numpy() == 0).sum(axis=0)
    assert (zeros_per_column == math.ceil(0.3 * 10)).all()


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (6, 4, 3, 3)])
def test_private_fan_in_and_fan_out(shape):
    assert init._calculate_fan_in_and_fan_out(taugrad.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))

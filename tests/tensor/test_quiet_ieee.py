"""IEEE special results from finite inputs come back silently, as in PyTorch (no NumPy RuntimeWarning)."""
import warnings

import numpy as np
import pytest
import torch

import taugrad

OPS = {
    "log": lambda x: x.log(),
    "sqrt": lambda x: x.sqrt(),
    "reciprocal": lambda x: 1 / x,
    "power -1": lambda x: x ** -1,
    "x / x": lambda x: x / x,
    "2 ** (1000 x)": lambda x: 2 ** (x * 1000.0),
    "exp(1000 x)": lambda x: (x * 1000.0).exp(),
    "log1p": lambda x: (x - 1.0).log1p(),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_special_values_forward_and_backward_without_warnings(name):
    values = [0.0, -1.0, 2.0]
    x = taugrad.tensor(values, dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = OPS[name](x)
        y.backward(taugrad.ones(3, dtype="float64"))
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    ty = OPS[name](t)
    ty.backward(torch.ones(3, dtype=torch.float64))
    assert np.array_equal(y.data, ty.detach().numpy(), equal_nan=True)
    assert np.array_equal(x.grad.data, t.grad.numpy(), equal_nan=True)

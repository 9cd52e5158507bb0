"""Gradients that a mask zeroes are +0, bit for bit as PyTorch stores them, and the others pass unchanged.

PyTorch's masking backwards (ReLU's ``where(z <= 0, 0, g)``, clamp's and
masked_fill's ``where(mask, g, 0)``, maximum's and minimum's ``masked_fill``
for the input that lost) store +0 where the mask is off and
keep ``g`` exactly where it is on: -0, nan and inf included.  ``g * mask``
would store -0 for a negative ``g``.  Each case runs with a gradient the
backward pass owns (written in place) and with one it does not (the
caller's), in float16, float32 and float64.
"""
import numpy as np
import pytest
import torch

import taugrad

X = np.array([-1.0, 0.0, -0.0, 2.0, np.nan, np.inf, -np.inf, 3.0, -4.0, 0.5])
G = np.array([-1.0, -2.0, 3.0, -0.0, 5.0, -np.inf, -7.0, np.nan, -0.0, -0.0])

CASES = {
    "relu": lambda lib, x: x.relu(),
    "relu_": lambda lib, x: (x * 1).relu_(),
    "F.relu": lambda lib, x: lib.nn.functional.relu(x),
    "clamp": lambda lib, x: x.clamp(-1.5, 1.0),
    "clamp_": lambda lib, x: (x * 1).clamp_(-1.5, 1.0),
    "masked_fill": lambda lib, x: x.masked_fill(lib.tensor(X > 0), 0.0),
}


def _grad(lib, f, dtype, owned):
    x = lib.tensor(X.astype(dtype), requires_grad=True)
    g = lib.tensor(G.astype(dtype))
    y = f(lib, x)
    if owned:  # a multiply after the op: its gradient reaches the op as a fresh array
        (y * g).sum().backward()
    else:
        y.backward(g)
    return x.grad.numpy()


@pytest.mark.parametrize("owned", [True, False], ids=["owned", "callers"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_masked_gradient_bits_match_torch(name, dtype, owned):
    got = _grad(taugrad, CASES[name], dtype, owned)
    want = _grad(torch, CASES[name], dtype, owned)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(got[finite], want[finite])
    np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]), err_msg=f"{name}: signed zeros")


def _pair_grads(lib, name, owned):
    a = lib.tensor(X, requires_grad=True)
    b = lib.tensor(np.array([2.0, 0.0, 0.0, np.nan, 1.0, 1.0, np.inf, 3.0, -5.0, 0.5]), requires_grad=True)
    y = getattr(lib, name)(a, b)
    if owned:
        (y * lib.tensor(G)).sum().backward()
    else:
        y.backward(lib.tensor(G))
    return a.grad.numpy(), b.grad.numpy()


@pytest.mark.parametrize("owned", [True, False], ids=["owned", "callers"])
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_max_min_send_a_stored_zero_to_the_loser(name, owned):
    """The input that lost gets 0 even where g is nan or infinite (torch's masked_fill), each input half on
    a tie, both the whole g where one is nan."""
    for got, want in zip(_pair_grads(taugrad, name, owned), _pair_grads(torch, name, owned)):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))

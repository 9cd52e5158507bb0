"""Special values give PyTorch's IEEE answers (inf, nan, signed zero), never exceptions.

Values and gradients are compared with PyTorch float64 at 0, -0, tiny,
+-1, +-1000 (overflow of exp), +-inf and nan; a nan must be a nan in both.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import taugrad.functional as F
from taugrad import Tensor

SPECIAL = np.array([0.0, -0.0, 1e-300, -1.0, 1.0, 1000.0, -1000.0, np.inf, -np.inf, np.nan])

UNARY = {
    "exp": (lambda x: x.exp(), lambda x: x.exp()),
    "log": (lambda x: x.log(), lambda x: x.log()),
    "log1p": (lambda x: x.log1p(), lambda x: x.log1p()),
    "sqrt": (lambda x: x.sqrt(), lambda x: x.sqrt()),
    "abs": (lambda x: x.abs(), lambda x: x.abs()),
    "tanh": (lambda x: x.tanh(), lambda x: x.tanh()),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: x.sigmoid()),
    "relu": (lambda x: x.relu(), lambda x: x.relu()),
    "gelu": (lambda x: F.gelu(x), lambda x: TF.gelu(x)),
    "neg": (lambda x: -x, lambda x: -x),
    "square": (lambda x: x ** 2, lambda x: x ** 2),
    "pow_half": (lambda x: x ** 0.5, lambda x: x ** 0.5),
    "reciprocal": (lambda x: 1.0 / x, lambda x: 1.0 / x),
    "sin": (lambda x: x.sin(), lambda x: x.sin()),
}


# ops whose value at -0.0 is -0.0 by IEEE 754 (max(-0, 0) for relu is unspecified)
KEEPS_NEGATIVE_ZERO = {"neg", "sqrt", "sin", "tanh", "log1p", "abs"}


def assert_same_numbers(got, want, what):
    """Equal to rounding; inf and nan in the same places."""
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True, err_msg=what)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy may warn; the numbers are what count
@pytest.mark.parametrize("name", UNARY)
def test_special_values_match_torch(name):
    ours, theirs = UNARY[name]
    x = Tensor(SPECIAL.copy(), requires_grad=True)
    t = torch.tensor(SPECIAL.copy(), requires_grad=True)
    y, ty = ours(x), theirs(t)
    got, want = np.asarray(y.data), ty.detach().numpy()
    assert_same_numbers(got, want, f"{name}: values at {SPECIAL}")
    if name in KEEPS_NEGATIVE_ZERO:
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]), err_msg=f"{name}: sign of 0")
    y.backward(Tensor(np.ones_like(SPECIAL)))
    ty.backward(torch.ones_like(t))
    # Gradients at a nan input are conventions (torch: relu'(nan) = 1, abs'(nan) = 0), and so is
    # x**0.5 left of 0 (torch: -inf at -0.0, nan at -inf); compare everywhere else.
    compared = ~np.isnan(SPECIAL)
    if name == "pow_half":
        compared &= ~np.signbit(SPECIAL)
    got_grad, want_grad = np.asarray(x.grad.data), t.grad.numpy()
    assert_same_numbers(got_grad[compared], want_grad[compared], f"{name}: gradients at {SPECIAL[compared]}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_mean_of_nothing_is_nan_as_in_torch():
    x = Tensor(np.zeros((0, 3)), requires_grad=True)
    y = x.mean(dim=0)
    np.testing.assert_array_equal(np.asarray(y.data), torch.zeros((0, 3), dtype=torch.float64).mean(dim=0).numpy())
    y.sum().backward()
    assert x.grad.shape == (0, 3)


def test_sum_of_nothing_is_zero():
    x = Tensor(np.zeros((0, 3)), requires_grad=True)
    y = x.sum()
    assert float(y.data) == 0.0
    y.backward()
    assert x.grad.shape == (0, 3)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_max_of_nothing_is_a_clear_error(name):
    with pytest.raises((ValueError, RuntimeError, IndexError)) as info:
        getattr(Tensor(np.zeros((0, 3))), name)()
    text = str(info.value)
    assert "\n" not in text and name.lstrip("a") in text


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_inf_minus_inf_in_softmax_row_of_all_minus_inf_is_nan_as_in_torch():
    logits = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])
    got = F.softmax(Tensor(logits), dim=1).data
    want = TF.softmax(torch.tensor(logits), dim=1).numpy()
    np.testing.assert_array_equal(got, want)

"""Tensor attributes that let a user get a wrong gradient silently (audit, 2026-12-03).

Each is refused as PyTorch refuses it, or (``Tensor(t)``) caught by the
in-place check; every test here failed before its fix.
"""
import numpy as np
import pytest
import torch

import taugrad
from taugrad import Tensor


def leaf(values=(1.0, 2.0, 3.0)):
    return taugrad.tensor(list(values), requires_grad=True)


def test_requires_grad_of_an_op_output_cannot_be_switched_off():
    # it used to be: backward then skipped the path through y, and x.grad missed half
    x = leaf()
    y = x * 2
    with pytest.raises(RuntimeError, match="requires_grad can be changed on leaf tensors only"):
        y.requires_grad = False
    y.requires_grad = True  # no change: allowed, as in PyTorch
    (y * x).sum().backward()
    np.testing.assert_allclose(x.grad.data, 4 * x.data)
    ty = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError):
        ty.requires_grad = False


@pytest.mark.parametrize("values", [[1, 2, 3], [True, False]])
def test_an_integer_tensor_cannot_require_grad_by_assignment(values):
    x = taugrad.tensor(values)
    with pytest.raises(TypeError):
        x.requires_grad = True
    assert x.requires_grad is False


@pytest.mark.parametrize("bad, error, words", [
    (lambda: taugrad.zeros(3, 1), ValueError, "grad: a gradient of shape (3, 1) cannot be assigned to a tensor of shape (3,)"),
    (lambda: taugrad.zeros(3, dtype="float64"), TypeError, "grad: a gradient of dtype float64 cannot be assigned to a tensor of dtype float32"),
    (lambda: np.zeros(3, np.float32), TypeError, "grad: expected a Tensor or None, got ndarray"),
])
def test_assigning_grad_checks_type_shape_and_dtype(bad, error, words):
    x = leaf()
    with pytest.raises(error) as info:
        x.grad = bad()
    assert str(info.value) == words
    assert x.grad is None
    (x * x).sum().backward()  # and backward still works
    assert x.grad.shape == (3,)


def test_an_assigned_grad_of_the_right_kind_is_accumulated_into():
    x = leaf()
    x.grad = taugrad.ones(3)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.data, 1 + 2 * x.data)
    x.grad = None
    assert x.grad is None


def test_numpy_of_a_tensor_that_requires_grad_is_refused_as_torch():
    x = leaf()
    with pytest.raises(RuntimeError, match=r"use \.detach\(\)\.numpy\(\)"):
        x.numpy()
    with pytest.raises(RuntimeError):
        torch.tensor([1.0], requires_grad=True).numpy()
    assert x.detach().numpy() is x.data


def test_an_array_of_a_tensor_that_requires_grad_is_read_only():
    x = leaf()
    view = np.asarray(x)
    np.testing.assert_array_equal(view, x.data)
    with pytest.raises(ValueError):
        view[0] = 10.0
    assert np.asarray(taugrad.tensor([1.0])).flags.writeable  # no grad: the array itself


def test_tensor_of_a_tensor_shares_its_version_counter():
    # Tensor(x) shares x's memory; an in-place change through it was invisible
    x = leaf()
    y = (x * x).sum()
    alias = Tensor(x)
    assert alias.data is x.data
    alias += 10
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()


def test_randint_takes_torch_s_two_argument_form():
    assert taugrad.randint(10, (3,)).shape == tuple(torch.randint(10, (3,)).shape)
    values = taugrad.randint(2, 5, (200,)).data
    assert values.dtype == np.int64 and values.min() >= 2 and values.max() < 5
    with pytest.raises(ValueError, match=r"randint: low \(5\) must be below high \(2\)"):
        taugrad.randint(5, 2, (2,))


def test_a_python_int_beyond_int64_is_an_error_not_a_uint64():
    with pytest.raises(ValueError, match="does not fit in int64"):
        taugrad.tensor(2**63)
    with pytest.raises((RuntimeError, ValueError)):  # torch refuses it too
        torch.tensor(2**63)
    assert taugrad.tensor(2**63, dtype="uint64").dtype == np.uint64  # asked for: fine

"""Reduction details the op table does not pin down."""
import numpy as np
import pytest
import torch

from taugrad import Tensor


def test_max_over_a_tuple_of_dims():
    """``max``/``min`` take ``dim`` as an int or a tuple (NumPy's ``axis=`` too)."""
    data = np.arange(24.0).reshape(2, 3, 4) % 7
    x = Tensor(data, requires_grad=True)
    np.testing.assert_array_equal(np.asarray(x.max(dim=(0, 2)).data), data.max(axis=(0, 2)))
    np.testing.assert_array_equal(np.asarray(x.min(axis=(0, -1)).data), data.min(axis=(0, 2)))


def test_max_with_one_dim_returns_values_and_indices_like_torch():
    data = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = Tensor(data).max(dim=1)
    want = torch.tensor(data).max(dim=1)
    np.testing.assert_array_equal(np.asarray(values.data), want.values.numpy())
    np.testing.assert_array_equal(np.asarray(indices.data), want.indices.numpy())


def test_max_of_everything_with_ties_splits_the_gradient_as_torch():
    data = np.array([3.0, 1.0, 3.0])
    x, t = Tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    x.max().backward()
    t.max().backward()
    np.testing.assert_allclose(x.grad.data, t.grad.numpy())


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("kwargs", [{}, {"correction": 0}, {"unbiased": False}, {"correction": 1}])
def test_var_std_correction_like_torch(name, kwargs):
    data = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
    got = getattr(Tensor(data), name)(dim=1, **kwargs)
    want = getattr(torch.tensor(data), name)(dim=1, **kwargs)
    np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-12)


def test_numpy_spellings_axis_keepdims():
    data = np.arange(6.0).reshape(2, 3)
    x = Tensor(data)
    np.testing.assert_array_equal(x.sum(axis=0, keepdims=True).data, data.sum(axis=0, keepdims=True))
    np.testing.assert_array_equal(x.mean(axis=(0, 1)).data, data.mean())

"""Tensor attributes that could give a wrong gradient silently if left unchecked.

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
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy())
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
    np.testing.assert_allclose(x.grad.numpy(), 1 + 2 * x.detach().numpy())
    x.grad = None
    assert x.grad is None


def test_numpy_of_a_tensor_that_requires_grad_is_refused_as_torch():
    x = leaf()
    with pytest.raises(RuntimeError, match=r"use \.detach\(\)\.numpy\(\)"):
        x.numpy()
    with pytest.raises(RuntimeError):
        torch.tensor([1.0], requires_grad=True).numpy()
    assert x.detach().numpy() is x._data  # shared, not copied


def test_an_array_of_a_tensor_that_requires_grad_is_read_only():
    x = leaf()
    view = np.asarray(x)
    np.testing.assert_array_equal(view, x.detach().numpy())
    with pytest.raises(ValueError):
        view[0] = 10.0
    assert np.asarray(taugrad.tensor([1.0])).flags.writeable  # no grad: the array itself


def test_tensor_of_a_tensor_shares_its_version_counter():
    # Tensor(x) shares x's memory; an in-place change through it was invisible
    x = leaf()
    y = (x * x).sum()
    alias = Tensor(x)
    assert alias.detach().numpy() is x.detach().numpy()
    alias += 10
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()


def test_randint_takes_torch_s_two_argument_form():
    assert taugrad.randint(10, (3,)).shape == tuple(torch.randint(10, (3,)).shape)
    values = taugrad.randint(2, 5, (200,)).detach().numpy()
    assert values.dtype == np.int64 and values.min() >= 2 and values.max() < 5
    with pytest.raises(ValueError, match=r"randint: low \(5\) must be below high \(2\)"):
        taugrad.randint(5, 2, (2,))


def test_a_python_int_beyond_int64_is_an_error_not_a_uint64():
    with pytest.raises(ValueError, match="does not fit in int64"):
        taugrad.tensor(2**63)
    with pytest.raises((RuntimeError, ValueError)):  # torch refuses it too
        torch.tensor(2**63)
    assert taugrad.tensor(2**63, dtype="uint64").dtype == np.uint64  # asked for: fine


def test_pickling_an_op_output_keeps_its_value_not_its_graph():
    import pickle

    x = taugrad.randn(300, 300, requires_grad=True)
    loss = (x.tanh() * x).sum()
    data = pickle.dumps(loss)
    assert len(data) < 10_000  # the default pickled the parents and saved arrays: megabytes
    back = pickle.loads(data)
    assert back.is_leaf and not back.requires_grad and float(back.detach().numpy()) == float(loss.detach().numpy())
    x.grad = taugrad.ones(300, 300)
    leaf = pickle.loads(pickle.dumps(x))
    assert leaf.requires_grad and np.array_equal(leaf.detach().numpy(), x.detach().numpy()) and np.array_equal(leaf.grad.numpy(), x.grad.numpy())


def test_deepcopy_refuses_an_op_output_and_copies_a_leaf_as_torch():
    import copy

    from taugrad import nn

    x = leaf()
    with pytest.raises(RuntimeError, match="only leaf tensors can be deep-copied"):
        copy.deepcopy(x * 2)
    with pytest.raises(RuntimeError):
        copy.deepcopy(torch.tensor([1.0], requires_grad=True) * 2)
    layer = nn.Linear(3, 2)
    twin = copy.deepcopy(layer)
    assert type(twin.weight) is type(layer.weight) and twin.weight.requires_grad
    assert twin.weight.detach().numpy() is not layer.weight.detach().numpy() and np.array_equal(twin.weight.detach().numpy(), layer.weight.detach().numpy())
    assert twin.weight.detach().numpy().strides == layer.weight.detach().numpy().strides  # the column-major layout is kept


def test_creation_takes_size_as_a_keyword_and_any_float_dtype():
    assert taugrad.zeros(size=(2, 3)).shape == tuple(torch.zeros(size=(2, 3)).shape)
    assert taugrad.randn(size=(4,)).shape == (4,)
    assert taugrad.rand(2, dtype="float16").dtype == np.float16
    assert taugrad.arange(taugrad.tensor(5)).dtype == np.int64
    with pytest.raises(ValueError, match="arange: unsupported range 0 -> inf"):
        taugrad.arange(float("inf"))


def test_integer_true_division_in_place_names_the_float_result():
    with pytest.raises(TypeError, match="div_: cannot store a float64 result in a tensor of dtype taugrad.int64"):
        taugrad.tensor([1, 2]).div_(2)

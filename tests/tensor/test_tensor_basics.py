"""Construction, dtype rules (as in PyTorch), attributes and comparisons of taugrad.Tensor."""
import numpy as np
import pytest
import torch

import taugrad
from taugrad import Tensor


def dtype_of(t):
    return np.dtype(t.dtype)


# ---------------------------------------------------------------------------
# dtype rules: Python floats -> float32, NumPy arrays keep their dtype
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("data", [[1.0, 2.0], [[0.5], [1.5]], (1.0, 2.5)])
def test_python_floats_become_float32(data):
    assert dtype_of(Tensor(data)) == np.float32
    assert dtype_of(Tensor(data)) == np.dtype(str(torch.tensor(data).dtype).replace("torch.", ""))


def test_python_ints_become_an_integer_dtype_through_tensor_and_float32_through_the_legacy_constructor():
    assert dtype_of(taugrad.tensor([1, 2, 3])) == np.int64  # torch.tensor: int64
    assert dtype_of(Tensor([1, 2, 3])) == np.float32  # torch.Tensor: the default float dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.int64])
def test_numpy_arrays_keep_their_dtype(dtype):
    assert dtype_of(Tensor(np.arange(3).astype(dtype))) == dtype


def test_dtype_argument_converts():
    t = Tensor([1.0, 2.0], dtype=np.float64)
    assert dtype_of(t) == np.float64
    assert dtype_of(Tensor(np.ones(2), dtype=np.float32)) == np.float32


@pytest.mark.parametrize("make", [
    lambda x: x * 2.0, lambda x: 2.0 * x, lambda x: x + 1, lambda x: 1.5 - x, lambda x: x / 3.0,
    lambda x: 3.0 / x, lambda x: x ** 2.0, lambda x: x ** 2, lambda x: 2.0 ** x, lambda x: -x,
])
def test_float32_tensor_with_python_scalar_stays_float32(make):
    x = Tensor(np.array([0.5, 1.5], dtype=np.float32), requires_grad=True)
    y = make(x)
    assert dtype_of(y) == np.float32
    y.sum().backward()
    assert dtype_of(x.grad) == np.float32


@pytest.mark.parametrize("make", [lambda x: x * 2.0, lambda x: 1 + x, lambda x: x ** 0.5, lambda x: 2.0 / x])
def test_float64_tensor_with_python_scalar_stays_float64(make):
    assert dtype_of(make(Tensor(np.array([0.5, 1.5])))) == np.float64


def test_float32_with_float64_tensor_promotes_to_float64_as_torch_does():
    a = Tensor(np.ones(2, dtype=np.float32), requires_grad=True)
    b = Tensor(np.ones(2, dtype=np.float64), requires_grad=True)
    (a * b).sum().backward()
    assert dtype_of(a * b) == np.float64
    # each gradient has the dtype of its own input, as in PyTorch
    assert dtype_of(a.grad) == np.float32 and dtype_of(b.grad) == np.float64


# ---------------------------------------------------------------------------
# attributes and conversions
# ---------------------------------------------------------------------------


def test_attributes():
    array = np.arange(6.0).reshape(2, 3)
    t = Tensor(array, requires_grad=True)
    assert isinstance(t.detach().numpy(), np.ndarray)
    np.testing.assert_array_equal(t.detach().numpy(), array)
    assert t.shape == (2, 3) and isinstance(t.shape, tuple)
    assert t.ndim == 2
    assert t.requires_grad is True
    assert t.grad is None


def test_numpy_item_and_array_protocol():
    t = Tensor(np.array([[1.0, 2.0]]))
    assert isinstance(t.numpy(), np.ndarray)
    np.testing.assert_array_equal(t.numpy(), [[1.0, 2.0]])
    np.testing.assert_array_equal(np.asarray(t), [[1.0, 2.0]])
    item = Tensor(np.array([2.5])).item()
    assert item == 2.5 and isinstance(item, float)


def test_item_of_several_elements_is_an_error():
    with pytest.raises((ValueError, RuntimeError)):
        Tensor([1.0, 2.0]).item()


def test_detach_cuts_the_graph():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    d = (x * 3.0).detach()
    assert d.requires_grad is False
    np.testing.assert_array_equal(d.detach().numpy(), [3.0, 6.0])
    y = (d * x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 6.0])  # d counts as a constant


def test_requires_grad_underscore_sets_the_flag_and_returns_the_tensor():
    x = Tensor(np.array([1.0, 2.0]))
    assert x.requires_grad is False
    assert x.requires_grad_() is x
    assert x.requires_grad is True
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    x.requires_grad_(False)
    assert x.requires_grad is False


def test_grad_is_a_tensor_of_the_input_shape():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    (x * 2.0).sum().backward()
    assert isinstance(x.grad, Tensor)
    assert x.grad.shape == (2, 3)


def test_repr_is_readable():
    text = repr(Tensor(np.array([1.5, -2.0]), requires_grad=True))
    assert "1.5" in text and "-2" in text
    assert "requires_grad=True" in text
    assert "\n" not in repr(Tensor(np.array(3.0)))


def test_results_of_ops_require_grad_when_an_input_does():
    x = Tensor(np.ones(2), requires_grad=True)
    c = Tensor(np.ones(2))
    assert (x + c).requires_grad is True
    assert (c + c).requires_grad is False


# ---------------------------------------------------------------------------
# comparisons: tensors without gradient
# ---------------------------------------------------------------------------

COMPARISONS = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparisons_return_tensors_without_gradient(name):
    compare = COMPARISONS[name]
    a = np.array([[1.0, 2.0, 3.0]])
    b = np.array([[2.0], [1.0]])  # broadcasts to (2, 3)
    result = compare(Tensor(a, requires_grad=True), Tensor(b, requires_grad=True))
    assert isinstance(result, Tensor)
    assert result.requires_grad is False
    np.testing.assert_array_equal(np.asarray(result.detach().numpy()), compare(a, b))
    scalar = compare(Tensor(a, requires_grad=True), 2.0)
    np.testing.assert_array_equal(np.asarray(scalar.detach().numpy()), compare(a, 2.0))


def test_tensors_stay_hashable_by_identity():
    # graph bookkeeping puts tensors in sets/dicts; elementwise == must not break that
    a, b = Tensor(np.ones(2)), Tensor(np.ones(2))
    assert len({a, b}) == 2
    assert taugrad.Tensor is Tensor


def test_only_floating_tensors_can_require_grad():
    with pytest.raises((TypeError, RuntimeError, ValueError)) as info:
        Tensor(np.array([1, 2]), requires_grad=True)
    assert "float" in str(info.value)


def test_repr_still_names_the_op_after_backward_freed_it():
    import taugrad.functional as F

    x = taugrad.tensor([[1.0, 2.0], [3.0, 0.5]], requires_grad=True)
    loss = F.cross_entropy(x, [0, 1])
    assert repr(loss).endswith("grad_fn=<NllLossBackward0>)")  # PyTorch's name for its top node
    loss.backward()
    assert repr(loss).endswith("grad_fn=<NllLossBackward0>)")

"""Indexing gradients by hand: backward scatter-adds, so repeated indices accumulate.

(The op table checks indexing against PyTorch on generated indices; these are
small cases whose answers can be read off.)
"""
import numpy as np

from taugrad import Tensor


def leaf(array):
    return Tensor(np.array(array, dtype=np.float64), requires_grad=True)


def test_repeated_integer_indices_accumulate():
    x = leaf([10.0, 20.0, 30.0, 40.0])
    y = x[np.array([0, 0, 2, 0, -1])]
    np.testing.assert_array_equal(y.data, [10.0, 10.0, 30.0, 10.0, 40.0])
    y.backward(Tensor(np.array([1.0, 2.0, 3.0, 4.0, 5.0])))
    np.testing.assert_array_equal(x.grad.data, [1.0 + 2.0 + 4.0, 0.0, 3.0, 5.0])


def test_repeated_index_pairs_in_2d_accumulate():
    x = leaf(np.zeros((2, 3)))
    rows, cols = np.array([1, 1, 0, 1]), np.array([2, 2, 0, -1])
    x[rows, cols].sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[1.0, 0.0, 0.0], [0.0, 0.0, 3.0]])


def test_repeated_rows_with_a_slice():
    x = leaf(np.arange(6.0).reshape(3, 2))
    y = x[np.array([2, 2, 0]), 1:]
    assert y.shape == (3, 1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[0.0, 1.0], [0.0, 0.0], [0.0, 2.0]])


def test_boolean_mask_gradient_lands_on_selected_elements():
    data = np.array([[1.0, -2.0], [-3.0, 4.0]])
    x = leaf(data)
    y = x[data > 0]
    np.testing.assert_array_equal(y.data, [1.0, 4.0])
    (y * Tensor(np.array([5.0, 7.0]))).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[5.0, 0.0], [0.0, 7.0]])


def test_mask_as_a_tensor_from_a_comparison():
    x = leaf([1.0, -2.0, 3.0])
    y = x[x > 0]
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 0.0, 1.0])


def test_ellipsis_none_and_negative_int():
    x = leaf(np.arange(24.0).reshape(2, 3, 4))
    y = x[..., None, -1]
    assert y.shape == (2, 3, 1)
    y.sum().backward()
    want = np.zeros((2, 3, 4))
    want[..., -1] = 1.0
    np.testing.assert_array_equal(x.grad.data, want)


def test_an_empty_selection_gives_a_zero_gradient():
    x = leaf([1.0, 2.0])
    x[np.array([], dtype=np.int64)].sum().backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 0.0])

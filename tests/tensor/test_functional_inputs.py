"""Losses and activations on unusual inputs (arrays, integers, infinities), compared with torch.

Each failed before its fix: NumPy inputs crashing deep inside, nll_loss
refusing the shapes cross_entropy takes, a dtype that depended on how the
target was passed, dropout truncating its scale on integers, and rows
holding +inf giving part-nan probabilities.
"""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import taugrad
import taugrad.functional as F
from taugrad import Tensor

INF = float("inf")


def _close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours.data), theirs.detach().numpy(), rtol=1e-10, atol=0, equal_nan=True)
    assert tuple(ours.shape) == tuple(theirs.shape)


@pytest.mark.parametrize("name", ["mse_loss", "binary_cross_entropy_with_logits"])
def test_losses_take_numpy_arrays_as_cross_entropy_does(name):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(5), rng.uniform(size=5)
    ours = getattr(F, name)(x, y)
    theirs = getattr(TF, name)(torch.tensor(x), torch.tensor(y))
    _close(ours, theirs)


def test_nll_loss_takes_a_numpy_array_and_returns_a_tensor():
    log_probs = np.log(np.full((2, 3), 1 / 3))
    ours = F.nll_loss(log_probs, [0, 2])
    assert isinstance(ours, Tensor)
    _close(ours, TF.nll_loss(torch.tensor(log_probs), torch.tensor([0, 2])))


def test_activations_take_numpy_arrays():
    x = np.array([[1.0, 2.0, 3.0]])
    _close(F.softmax(x, dim=1), TF.softmax(torch.tensor(x), dim=1))
    _close(F.log_softmax(x, dim=1), TF.log_softmax(torch.tensor(x), dim=1))


def test_a_non_numeric_loss_input_is_a_one_line_type_error():
    with pytest.raises(TypeError, match=r"^mse_loss: input must be a Tensor or an array, got str"):
        F.mse_loss("abc", [1.0])


def test_mse_loss_dtype_does_not_depend_on_how_the_target_is_passed():
    x = taugrad.tensor([1.5, 2.5], requires_grad=True)
    as_tensor = F.mse_loss(x, taugrad.tensor([1, 2]))
    as_array = F.mse_loss(x, np.array([1, 2]))
    assert as_tensor.dtype == as_array.dtype == np.float32
    assert float(as_tensor.data) == float(as_array.data)


def test_mse_loss_target_cast_keeps_its_gradient():
    x = Tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    y = Tensor(np.array([0.5, 0.5]), requires_grad=True)  # float64, needs a gradient
    F.mse_loss(x, y).backward()
    assert y.grad.dtype == np.float64
    np.testing.assert_allclose(y.grad.data, [-0.5, -1.5])


@pytest.mark.parametrize("shape, target_shape", [((3,), ()), ((2, 3, 4), (2, 4)), ((2, 3, 2, 2), (2, 2, 2))])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_takes_the_shapes_cross_entropy_takes(shape, target_shape, reduction):
    rng = np.random.default_rng(1)
    scores = rng.standard_normal(shape)
    target = rng.integers(0, 3, size=target_shape)
    x = Tensor(scores.copy(), requires_grad=True)
    tx = torch.tensor(scores.copy(), requires_grad=True)
    ours = F.nll_loss(x, target, reduction=reduction)
    theirs = TF.nll_loss(tx, torch.tensor(target), reduction=reduction)
    _close(ours, theirs)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-12)


def test_nll_loss_wrong_target_shape_names_both_shapes():
    with pytest.raises(ValueError, match=r"nll_loss: an input of shape \(2, 3, 4\) needs targets of shape \(2, 4\), got \(2,\)"):
        F.nll_loss(Tensor(np.zeros((2, 3, 4))), np.zeros(2, dtype=int))


@pytest.mark.parametrize("values", [[10, 10, 10], [True, False, True]])
def test_dropout_refuses_integer_tensors(values):
    with pytest.raises(TypeError, match="dropout: needs a floating tensor"):
        F.dropout(taugrad.tensor(values), p=0.3)


ROWS = [[INF, 0.0, 1.0], [INF, INF, 0.0], [np.nan, 0.0, 1.0], [-INF, -INF, -INF], [-INF, 0.0, 1.0]]


@pytest.mark.parametrize("row", ROWS)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_rows_with_infinities_as_pytorch_and_silent(name, row):
    x = Tensor(np.array(row), requires_grad=True)
    tx = torch.tensor(row, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = getattr(F, name)(x, dim=0)
        ours.sum().backward()
    theirs = getattr(TF, name)(tx, dim=0)
    theirs.sum().backward()
    _close(ours, theirs)
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-10, atol=1e-15, equal_nan=True)


@pytest.mark.parametrize("row, target", [([1.0, INF], 0), ([INF, 1.0], 0), ([-INF, 1.0], 1)])
def test_cross_entropy_rows_with_infinities_as_pytorch(row, target):
    x = Tensor(np.array([row]), requires_grad=True)
    tx = torch.tensor([row], dtype=torch.float64, requires_grad=True)
    ours = F.cross_entropy(x, [target], reduction="sum")
    theirs = TF.cross_entropy(tx, torch.tensor([target]), reduction="sum")
    ours.backward()
    theirs.backward()
    _close(ours, theirs)
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-10, equal_nan=True)

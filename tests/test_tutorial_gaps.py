"""Gaps found by running PyTorch's beginner tutorials with ``import taugrad as torch``.

Each test is one line of ordinary PyTorch user code, checked against torch itself.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad

VALUES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.2345, -1.2355, 3.7, -0.0, 7.0])


# ---------------------------------------------------------------------------
# one-hot targets: scatter_ / gather with a 0-d index into a 1-D tensor
# (the transforms tutorial's ``zeros(10).scatter_(0, tensor(y), value=1)``)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("label", [0, 3, 9])
def test_one_hot_with_scatter__and_a_0d_index(label):
    got = taugrad.zeros(10, dtype=taugrad.float).scatter_(0, taugrad.tensor(label), value=1)
    want = torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(label), value=1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = taugrad.zeros(10).scatter_(dim=0, index=taugrad.tensor(label), value=1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_scatter_and_scatter_add_with_a_0d_index():
    got = taugrad.zeros(5).scatter(0, taugrad.tensor(2), 4.0)
    want = torch.zeros(5).scatter(0, torch.tensor(2), 4.0)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    x = taugrad.arange(5.0).requires_grad_()
    y = x.scatter(0, taugrad.tensor(1), 9.0)
    tx = torch.arange(5.0).requires_grad_()
    ty = tx.scatter(0, torch.tensor(1), 9.0)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    weights = [1.0, 2.0, 3.0, 4.0, 5.0]
    (y * taugrad.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())  # the overwritten place gets 0


def test_gather_with_a_0d_index_gives_a_0d_result_and_its_gradient():
    x = taugrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y, ty = x.gather(0, taugrad.tensor(2)), tx.gather(0, torch.tensor(2))
    assert y.shape == tuple(ty.shape) == ()
    assert y.item() == ty.item()
    (y * 3).backward()
    (ty * 3).backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_a_0d_index_into_a_2d_tensor_is_still_refused():
    with pytest.raises(ValueError, match="scatter_: index has 0 dims"):
        taugrad.zeros(2, 3).scatter_(1, taugrad.tensor(2), value=1)


# ---------------------------------------------------------------------------
# rounding: floor, ceil, trunc, round (``(torch.sigmoid(out).round() == y)`` accuracies)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "fix", "round", "sign", "neg", "negative"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_rounding_functions_and_methods_match_torch(name, dtype):
    data = VALUES.astype(dtype) if dtype != "int64" else (VALUES * 3).astype(dtype)
    want = getattr(torch, name)(torch.tensor(data))
    for got in (getattr(taugrad, name)(taugrad.tensor(data)), getattr(taugrad.tensor(data), name)()):
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("decimals", [1, 2, 3, -1, -2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_with_decimals_matches_torch(decimals, dtype):
    data = np.concatenate([VALUES, np.random.default_rng(0).normal(0, 200, 50)]).astype(dtype)
    got = taugrad.tensor(data).round(decimals=decimals)
    want = torch.tensor(data).round(decimals=decimals)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(taugrad.round(taugrad.tensor(data), decimals=decimals).numpy(), want.numpy())


def test_round_halves_to_even_as_torch():
    got = taugrad.tensor([0.5, 1.5, 2.5, -0.5, -2.5]).round()
    np.testing.assert_array_equal(got.numpy(), [0.0, 2.0, 2.0, -0.0, -2.0])


def test_rounding_is_piecewise_constant_so_its_gradient_is_zero_as_torchs():
    for name in ("floor", "ceil", "trunc", "round"):
        grads = []
        for lib in (taugrad, torch):
            x = lib.tensor([0.3, 1.7], requires_grad=True)
            y = getattr(x, name)()
            assert y.requires_grad  # torch records it, so y.sum().backward() works
            y.sum().backward()
            grads.append(x.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])


def test_binary_accuracy_line():
    logits = np.array([-1.2, 0.3, 2.0, -0.1], dtype=np.float32)
    labels = np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32)
    got = (taugrad.sigmoid(taugrad.tensor(logits)).round() == taugrad.tensor(labels)).float().mean()
    want = (torch.sigmoid(torch.tensor(logits)).round() == torch.tensor(labels)).float().mean()
    assert got.item() == want.item()


# ---------------------------------------------------------------------------
# torch.is_tensor and load_state_dict's printed result
# ---------------------------------------------------------------------------


def test_is_tensor():
    for obj in (taugrad.zeros(2), taugrad.nn.Parameter(taugrad.zeros(2)), taugrad.tensor(1.0)):
        assert taugrad.is_tensor(obj)
    for obj in (1.0, [1.0], np.zeros(2), None):
        assert not taugrad.is_tensor(obj)
        assert torch.is_tensor(obj) is False


def test_load_state_dict_prints_as_torch_when_all_keys_match():
    model = taugrad.nn.Sequential(taugrad.nn.Linear(3, 2), taugrad.nn.ReLU())
    result = model.load_state_dict(model.state_dict())
    twin = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())
    want = twin.load_state_dict(twin.state_dict())
    assert repr(result) == repr(want) == "<All keys matched successfully>"
    assert str(result) == str(want)
    assert result.missing_keys == [] and result.unexpected_keys == []


def test_load_state_dict_result_names_the_keys_when_not_strict():
    model = taugrad.nn.Linear(3, 2)
    result = model.load_state_dict({"weight": taugrad.zeros(2, 3), "extra": taugrad.zeros(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert "bias" in repr(result) and "extra" in repr(result)

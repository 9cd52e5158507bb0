"""Indexing with PyTorch's rules (not NumPy's), gradients included, and the index-driven ops."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad

X = np.random.default_rng(5).standard_normal((5, 6, 4, 3))
L, L2 = [1, 2], [0, 2]
MASK0 = np.array([True, False, False, False, True])
MASK3 = np.array([True, False, True])

KEYS = {
    "int, slice, list": (3, slice(2, None), L),
    "list, slice, list": (L, slice(2, None), L2),
    "list, int, list": (L, 2, L2),
    "slice, list, slice, int": (slice(None), L, slice(None), 2),
    "int, slice, list (2)": (2, slice(None), L),
    "None, list, slice, list": (None, L, slice(None), L2),
    "int, ..., list": (1, Ellipsis, L2),
    "list, ..., list": (L, Ellipsis, L2),
    "mask, slice, list": (MASK0, slice(None), L),
    "int, slice, slice, mask": (2, slice(None), slice(None), MASK3),
    "int, None, slice, 2-d list, int": (1, None, slice(None), [[0, 1], [2, 3]], 2),
    "0-d tensor, slice, list": ("zero_d", slice(None), L),
    "range, list": (range(3), [1, 2, 0]),
}


def _key(T, key):
    parts = []
    for p in key:
        if isinstance(p, np.ndarray):
            p = T.tensor(p)
        elif p == "zero_d":
            p = T.tensor(1)
        parts.append(p)
    return tuple(parts)


@pytest.mark.parametrize("name", list(KEYS))
def test_getitem_and_setitem_follow_torch(name):
    def program(T):
        x = T.tensor(X, requires_grad=True)
        y = x * 1
        out = y[_key(T, KEYS[name])]
        weights = T.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))
        z = y * 2
        z[_key(T, KEYS[name])] = out.exp() * weights  # the value has torch's shape, written back in place
        ((out * weights).sum() + (z * z).sum()).backward()
        return out, z, x.grad

    for got, want in zip(program(taugrad), program(torch)):
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)


def test_makemore_idiom_range_and_target_tensor():
    def program(T):
        logits = T.tensor(X[:, :, 0, 0], requires_grad=True)
        ys = T.tensor([1, 0, 5, 2, 2])
        logprobs = T.log_softmax(logits, 1)
        loss = -logprobs[range(5), ys].mean()
        loss.backward()
        return loss, logits.grad

    for got, want in zip(program(taugrad), program(torch)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)


def test_list_of_lists_is_a_tuple_of_indices_as_torch():
    x = taugrad.tensor(X[:, :, 0, 0])
    with pytest.warns(UserWarning):
        want = torch.tensor(X[:, :, 0, 0])[[[0, 1], [1, 2]]]
    assert x[[[0, 1], [1, 2]]].tolist() == want.tolist()


OPS = {
    "gather": lambda T, x: x.gather(1, T.tensor([[0, 0, 3], [2, 1, 1], [3, 3, 3]])),
    "module gather": lambda T, x: T.gather(x, 0, T.tensor([[2, 0, 1, 1]])),
    "take_along_dim": lambda T, x: x.take_along_dim(T.tensor([[1], [0], [3]]), 1),
    "take_along_dim flat": lambda T, x: T.take_along_dim(x, T.tensor([5, 11, 5])),
    "index_select": lambda T, x: x.index_select(1, T.tensor([3, 0, 3])),
    "masked_select": lambda T, x: x.masked_select(T.tensor(X[:3, :4, 0, 0] > 0)),
    "masked_fill": lambda T, x: x.masked_fill(T.tensor([True, False, True, False]), -2.0),
    "scatter": lambda T, x: x.scatter(1, T.tensor([[1, 0], [3, 2], [0, 1]]), x[:, 2:] * 3),
    "scatter value": lambda T, x: T.scatter(x, 0, T.tensor([[2, 0, 1, 1]]), 0.5),
    "scatter_add": lambda T, x: x.scatter_add(1, T.tensor([[1, 1], [3, 3], [0, 1]]), x[:, :2] ** 2),
    "index_add": lambda T, x: x.index_add(0, T.tensor([2, 0]), x[:2] * 5, alpha=0.5),
}


@pytest.mark.parametrize("name", list(OPS))
def test_index_ops_match_torch(name):
    def program(T):
        x = T.tensor(X[:3, :4, 0, 0], requires_grad=True)
        out = OPS[name](T, x)
        (out * out.detach().exp()).sum().backward()
        return out, x.grad

    for got, want in zip(program(taugrad), program(torch)):
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)


def test_scatter_in_place_and_masked_fill_in_place_match_torch():
    def program(T):
        x = T.tensor(X[:3, :4, 0, 0], requires_grad=True)
        src = T.tensor(X[1, :3, :2, 1], requires_grad=True)
        y = x * 2
        y.scatter_(1, T.tensor([[1, 0], [3, 2], [0, 1]]), src)
        y.masked_fill_(T.tensor([False, True, False, False]), 7.0)
        (y * y).sum().backward()
        return y, x.grad, src.grad

    for got, want in zip(program(taugrad), program(torch)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)


def test_bad_index_arguments_are_one_line_errors():
    x = taugrad.tensor(X[:3, :4, 0, 0])
    with pytest.raises(TypeError, match="gather: index must be an integer tensor"):
        x.gather(1, taugrad.tensor([[0.5]]))
    with pytest.raises(IndexError, match="index_select: index out of range"):
        x.index_select(0, taugrad.tensor([3]))
    with pytest.raises(TypeError, match="masked_fill: the mask must be a bool tensor"):
        x.masked_fill(taugrad.tensor([1, 0, 1, 0]), 1.0)

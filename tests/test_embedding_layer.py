"""nn.Embedding's padding_idx and from_pretrained, against torch: values, gradients, frozen weights and reprs."""
import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn as nn

F64 = taugrad.float64


def _pair(rows, cols, padding_idx, seed=0):
    """Our layer and torch's with the same float64 weight (copied after init, so the padding row is whatever init left)."""
    ours = nn.Embedding(rows, cols, padding_idx, dtype=F64)
    theirs = torch.nn.Embedding(rows, cols, padding_idx, dtype=torch.float64)
    weight = np.random.default_rng(seed).normal(size=(rows, cols))
    with taugrad.no_grad():
        ours.weight.copy_(taugrad.tensor(weight))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(weight))
    return ours, theirs


@pytest.mark.parametrize("padding_idx", [0, 3, -1, -5])
def test_padding_row_gets_no_gradient_as_torchs(padding_idx):
    ours, theirs = _pair(6, 4, padding_idx)
    index = np.array([[0, 3, 5, 3], [1, 1, 2, 0]])
    w = np.random.default_rng(1).normal(size=(2, 4, 4))
    out, ref = ours(taugrad.tensor(index)), theirs(torch.tensor(index))
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    (out * taugrad.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12, atol=0)
    assert ours.padding_idx == theirs.padding_idx


@pytest.mark.parametrize("padding_idx", [0, 2, -1])
def test_padding_row_starts_at_zero(padding_idx):
    layer = nn.Embedding(4, 3, padding_idx)
    row = padding_idx % 4
    np.testing.assert_array_equal(layer.weight.detach().numpy()[row], np.zeros(3, np.float32))
    others = np.delete(layer.weight.detach().numpy(), row, axis=0)
    assert np.all(others != 0)
    assert layer.weight.requires_grad


def test_reset_parameters_zeroes_the_padding_row_again():
    layer = nn.Embedding(4, 3, padding_idx=1)
    with taugrad.no_grad():
        layer.weight.fill_(5.0)
    layer.reset_parameters()
    assert np.all(layer.weight.detach().numpy()[1] == 0) and np.all(layer.weight.detach().numpy()[0] != 5.0)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"norm_type": 1.0},
                                    {"max_norm": 1.5}, {"scale_grad_by_freq": True}, {"sparse": True}])
def test_repr_as_torchs(kwargs):
    assert repr(nn.Embedding(5, 3, **kwargs)) == repr(torch.nn.Embedding(5, 3, **kwargs))


@pytest.mark.parametrize("padding_idx", [5, -6, 100])
def test_padding_idx_outside_the_rows_is_refused(padding_idx):
    with pytest.raises(AssertionError):
        torch.nn.Embedding(5, 3, padding_idx)
    with pytest.raises(ValueError, match=r"padding_idx must be within num_embeddings \(5\), got"):
        nn.Embedding(5, 3, padding_idx)


@pytest.mark.parametrize("freeze", [True, False])
def test_from_pretrained_as_torchs(freeze):
    weight = np.random.default_rng(2).normal(size=(5, 3))
    ours = nn.Embedding.from_pretrained(taugrad.tensor(weight), freeze=freeze)
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(weight), freeze=freeze)
    assert ours.weight.requires_grad == theirs.weight.requires_grad == (not freeze)
    assert (ours.num_embeddings, ours.embedding_dim) == (theirs.num_embeddings, theirs.embedding_dim)
    index = [4, 0, 4]
    np.testing.assert_array_equal(ours(taugrad.tensor(index)).detach().numpy(), theirs(torch.tensor(index)).detach().numpy())
    assert repr(ours) == repr(theirs)


def test_from_pretrained_keeps_the_padding_row_and_freezes_only_its_gradient():
    weight = np.random.default_rng(3).normal(size=(4, 2))
    ours = nn.Embedding.from_pretrained(taugrad.tensor(weight), freeze=False, padding_idx=1)
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(weight), freeze=False, padding_idx=1)
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    assert np.all(ours.weight.detach().numpy()[1] != 0)  # torch does not zero a pretrained row
    index = [1, 2, 1, 3]
    ours(taugrad.tensor(index)).sum().backward()
    theirs(torch.tensor(index)).sum().backward()
    np.testing.assert_array_equal(ours.weight.grad.numpy(), theirs.weight.grad.numpy())


def test_from_pretrained_wants_a_matrix():
    with pytest.raises(ValueError, match=r"embeddings must be 2-d, got shape \(6,\)"):
        nn.Embedding.from_pretrained(taugrad.zeros(6))


def test_state_dict_keys_as_torchs():
    assert list(nn.Embedding(4, 2, 0).state_dict()) == list(torch.nn.Embedding(4, 2, 0).state_dict())


def _weights(rows=6, cols=4, seed=5):
    return np.random.default_rng(seed).normal(size=(rows, cols)) * 2


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1.5, 100.0])
def test_max_norm_rescales_the_rows_used_in_place_as_torch(max_norm, norm_type):
    weight = _weights()
    index = np.array([[0, 3, 3], [5, 0, 1]])
    ours = taugrad.tensor(weight.copy(), requires_grad=True)
    theirs = torch.tensor(weight.copy(), requires_grad=True)
    out = taugrad.nn.functional.embedding(taugrad.tensor(index), ours, max_norm=max_norm, norm_type=norm_type)
    ref = torch.nn.functional.embedding(torch.tensor(index), theirs, max_norm=max_norm, norm_type=norm_type)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)  # rows 2, 4 untouched
    np.testing.assert_array_equal(ours.detach().numpy()[[2, 4]], weight[[2, 4]])
    g = np.random.default_rng(6).normal(size=out.shape)
    (out * taugrad.tensor(g)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("padding_idx", [None, 3])
def test_scale_grad_by_freq_divides_each_rows_gradient_by_its_count_as_torch(padding_idx):
    weight = _weights()
    index = np.array([[0, 3, 3], [3, 0, 1], [5, 5, 5]])
    ours, theirs = nn.Embedding(6, 4, padding_idx, scale_grad_by_freq=True, dtype=F64), \
        torch.nn.Embedding(6, 4, padding_idx, scale_grad_by_freq=True, dtype=torch.float64)
    with taugrad.no_grad():
        ours.weight.copy_(taugrad.tensor(weight))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(weight))
    out, ref = ours(taugrad.tensor(index)), theirs(torch.tensor(index))
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())  # the values are unchanged
    g = np.random.default_rng(7).normal(size=out.shape)
    (out * taugrad.tensor(g)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_sparse_gradients_are_refused_in_one_line():
    with pytest.raises(NotImplementedError, match="embedding: sparse gradients are not supported"):
        nn.Embedding(4, 2, sparse=True)(taugrad.tensor([1]))

"""Sparse COO tensors against torch in float64: construction, coalesce, to_dense, sum, scalar product,
sparse.mm/spmm values and the gradients to the dense operand and to the sparse values."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad as tg
import taugrad.sparse

INDICES = np.array([[0, 2, 1, 0, 2], [1, 0, 3, 1, 2]])  # (0, 1) twice: a duplicate to sum
VALUES = np.array([1.5, -2.0, 0.25, 3.0, 4.0])


def both(requires_grad=False):
    ours = tg.sparse_coo_tensor(INDICES, tg.tensor(VALUES), (3, 4), requires_grad=requires_grad)
    theirs = torch.sparse_coo_tensor(torch.tensor(INDICES), torch.tensor(VALUES), (3, 4), requires_grad=requires_grad)
    return ours, theirs


def test_coalesce_indices_values_and_to_dense():
    ours, theirs = both()
    assert not ours.is_coalesced() and not theirs.is_coalesced()
    a, b = ours.coalesce(), theirs.coalesce()
    np.testing.assert_array_equal(a.indices().numpy(), b.indices().numpy())
    np.testing.assert_allclose(a.values().numpy(), b.values().numpy())
    np.testing.assert_allclose(ours.to_dense().numpy(), theirs.to_dense().numpy())
    assert ours.shape == tuple(theirs.shape) and ours.is_sparse and not tg.zeros(2).is_sparse


def test_to_sparse_round_trip_and_default_size():
    dense = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, -3.0]])
    a, b = tg.tensor(dense).to_sparse(), torch.tensor(dense).to_sparse()
    np.testing.assert_array_equal(a.indices().numpy(), b.indices().numpy())
    np.testing.assert_allclose(a.values().numpy(), b.values().numpy())
    np.testing.assert_allclose(a.to_dense().numpy(), dense)
    assert tg.sparse_coo_tensor(INDICES, VALUES).shape == tuple(torch.sparse_coo_tensor(
        torch.tensor(INDICES), torch.tensor(VALUES)).shape)


def test_sum_and_scalar_product():
    ours, theirs = both()
    np.testing.assert_allclose(ours.sum().item(), torch.sparse.sum(theirs).item())
    np.testing.assert_allclose(tg.sparse.sum(ours).item(), torch.sparse.sum(theirs).item())
    np.testing.assert_allclose((ours * 2.5).to_dense().numpy(), (theirs * 2.5).to_dense().numpy())
    np.testing.assert_allclose((3 * ours).to_dense().numpy(), (3 * theirs).to_dense().numpy())
    np.testing.assert_allclose(ours.sum(dim=1).to_dense().numpy(), torch.sparse.sum(theirs, dim=1).to_dense().numpy())


@pytest.mark.parametrize("fn", ["sparse.mm", "spmm", "matmul"])
def test_mm_values_and_gradients(fn):
    rng = np.random.default_rng(0)
    d = rng.standard_normal((4, 2))
    g = rng.standard_normal((3, 2))
    a_leaf, b_leaf = both(requires_grad=True)
    D, Dt = tg.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    call = {"sparse.mm": (tg.sparse.mm, torch.sparse.mm), "spmm": (tg.spmm, torch.spmm),
            "matmul": (lambda a, b: a @ b, lambda a, b: a @ b)}[fn]
    out, out_t = call[0](a_leaf, D), call[1](b_leaf, Dt)
    np.testing.assert_allclose(out.detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
    out.backward(tg.tensor(g))
    out_t.backward(torch.tensor(g))
    np.testing.assert_allclose(D.grad.numpy(), Dt.grad.numpy(), rtol=1e-12)
    theirs_grad = b_leaf.grad.to_dense().numpy()
    if fn != "sparse.mm":  # torch.mm/spmm give the whole dense G D^T; taugrad's values take it at their positions
        theirs_grad = theirs_grad * (tg.sparse_coo_tensor(INDICES, np.ones(5), (3, 4)).to_dense().numpy() > 0)
    np.testing.assert_allclose(a_leaf.grad.to_dense().numpy(), theirs_grad, rtol=1e-12)


def test_anything_else_is_one_line_naming_the_op():
    ours, _ = both()
    with pytest.raises(NotImplementedError, match=r"^relu: not supported on a sparse COO tensor"):
        ours.relu()
    with pytest.raises(NotImplementedError, match=r"^add: not supported on a sparse COO tensor"):
        ours + ours
    with pytest.raises(RuntimeError, match="coalesce"):
        ours.indices()
    with pytest.raises(RuntimeError, match=r"sparse.mm: shapes \(3, 4\) and \(3, 2\) cannot be multiplied"):
        tg.sparse.mm(ours, tg.zeros(3, 2))

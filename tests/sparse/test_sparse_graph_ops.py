"""The sparse operations a graph network uses (pytorch/examples gcn), against torch in float64: the layout of
each result (sparse or dense, as torch returns it), its values, and the gradients."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import taugrad as tg
import taugrad.sparse

warnings.filterwarnings("ignore", message="Sparse invariant checks")  # torch's notice, not a result
RNG = np.random.default_rng(5)
EDGES = np.array([[0, 1], [1, 2], [2, 0], [3, 1], [0, 3], [2, 3], [0, 1]], dtype=np.int32)  # (0, 1) twice


def same(ours, theirs, rtol=1e-12):
    """``ours`` has torch's layout, shape, dtype and values."""
    assert ours.is_sparse == theirs.is_sparse, (type(ours), theirs.layout)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    if theirs.is_sparse:
        assert ours.is_coalesced() == theirs.is_coalesced()
        if theirs.is_coalesced():
            np.testing.assert_array_equal(ours.indices().numpy(), theirs.indices().numpy())
        ours, theirs = ours.to_dense(), theirs.to_dense()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol)


def adjacency(lib):
    """gcn's adjacency: int64 sparse from int32 edge columns (a transposed NumPy view) and float ones."""
    return lib.sparse_coo_tensor(EDGES.T, lib.ones(len(EDGES), dtype=lib.float64), (4, 4), dtype=lib.int64)


def test_sparse_coo_tensor_from_numpy_edges_with_a_dtype():
    same(adjacency(tg), adjacency(torch))
    assert not adjacency(tg).is_coalesced()


def test_diag_to_sparse():
    v = RNG.standard_normal(4)
    v[2] = 0.0
    same(tg.diag(tg.tensor(v)).to_sparse(), torch.diag(torch.tensor(v)).to_sparse())


def test_dense_plus_sparse_is_dense_with_gradients_to_both():
    d = RNG.standard_normal((4, 4))
    ours = tg.eye(4, dtype=tg.float64) + adjacency(tg)
    same(ours, torch.eye(4, dtype=torch.float64) + adjacency(torch))  # float64 + int64: float64, dense
    values = RNG.standard_normal(len(EDGES))
    g = RNG.standard_normal((4, 4))
    v_o, v_t = tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    x_o, x_t = tg.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    out_o = x_o + tg.sparse_coo_tensor(EDGES.T, v_o, (4, 4))
    out_t = x_t + torch.sparse_coo_tensor(torch.tensor(EDGES.T), v_t, (4, 4))
    same(out_o, out_t)
    out_o.backward(tg.tensor(g))
    out_t.backward(torch.tensor(g))
    np.testing.assert_allclose(x_o.grad.numpy(), x_t.grad.numpy())
    np.testing.assert_allclose(v_o.grad.numpy(), v_t.grad.numpy())


@pytest.mark.parametrize("dim, keepdim", [(1, False), (0, False), (-1, False), ((0, 1), False), (1, True)])
def test_sum_over_dims_is_sparse_as_torch_gives(dim, keepdim):
    values = RNG.standard_normal(len(EDGES))
    ours = tg.sum(tg.sparse_coo_tensor(EDGES.T, values, (4, 4)), dim=dim, keepdim=keepdim)
    theirs = torch.sum(torch.sparse_coo_tensor(torch.tensor(EDGES.T), torch.tensor(values), (4, 4)), dim=dim,
                       keepdim=keepdim)
    same(ours, theirs)


def test_sum_of_int64_values_and_of_everything():
    same(tg.sum(adjacency(tg), dim=1), torch.sum(adjacency(torch), dim=1))
    same(tg.sum(adjacency(tg)), torch.sum(adjacency(torch)))


@pytest.mark.parametrize("call", ["@", "mm", "sparse.mm", "spmm"])
def test_sparse_times_sparse_is_sparse_and_coalesced(call):
    va, vb = RNG.standard_normal(len(EDGES)), RNG.standard_normal(len(EDGES))
    g = RNG.standard_normal((4, 4))
    product = {"@": lambda lib, a, b: a @ b, "mm": lambda lib, a, b: lib.mm(a, b),
               "sparse.mm": lambda lib, a, b: lib.sparse.mm(a, b), "spmm": lambda lib, a, b: lib.spmm(a, b)}[call]
    results = []
    for lib, index in ((tg, EDGES.T), (torch, torch.tensor(EDGES.T))):
        a_values, b_values = lib.tensor(va, requires_grad=True), lib.tensor(vb, requires_grad=True)
        a = lib.sparse_coo_tensor(index, a_values, (4, 4))
        b = lib.sparse_coo_tensor(index[::-1].copy() if lib is tg else index.flip(0), b_values, (4, 4))
        out = product(lib, a, b)
        out.to_dense().backward(lib.tensor(g))
        results.append((out, a_values.grad, b_values.grad))
    (out_o, ga_o, gb_o), (out_t, ga_t, gb_t) = results
    same(out_o, out_t)
    np.testing.assert_allclose(ga_o.numpy(), ga_t.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gb_o.numpy(), gb_t.numpy(), rtol=1e-12)


def test_dense_times_sparse_is_dense_with_the_gradient_to_the_dense_operand():
    d, g = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    values = RNG.standard_normal(len(EDGES))
    x_o, x_t = tg.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    out_o = x_o @ tg.sparse_coo_tensor(EDGES.T, values, (4, 4))
    out_t = x_t @ torch.sparse_coo_tensor(torch.tensor(EDGES.T), torch.tensor(values), (4, 4))
    same(out_o, out_t)
    out_o.backward(tg.tensor(g))
    out_t.backward(torch.tensor(g))
    np.testing.assert_allclose(x_o.grad.numpy(), x_t.grad.numpy(), rtol=1e-12)
    same(tg.mm(x_o, tg.sparse_coo_tensor(EDGES.T, values, (4, 4))),
         torch.mm(x_t, torch.sparse_coo_tensor(torch.tensor(EDGES.T), torch.tensor(values), (4, 4))))


@pytest.mark.parametrize("call", ["mm", "spmm", "matmul"])
def test_features_to_sparse_then_mm_gives_the_weight_its_gradient(call):
    """gcn's first layer: ``torch.mm(features.to_sparse(), kernel)``, the kernel learning."""
    features = (RNG.random((5, 4)) < 0.4) * RNG.random((5, 4))
    k, g = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3))
    k_o, k_t = tg.tensor(k, requires_grad=True), torch.tensor(k, requires_grad=True)
    out_o = getattr(tg, call)(tg.tensor(features).to_sparse().to("cpu"), k_o)
    out_t = getattr(torch, call)(torch.tensor(features).to_sparse().to("cpu"), k_t)
    same(out_o, out_t)
    out_o.backward(tg.tensor(g))
    out_t.backward(torch.tensor(g))
    np.testing.assert_allclose(k_o.grad.numpy(), k_t.grad.numpy(), rtol=1e-12)


def test_matmul_of_sparse_and_a_vector_is_a_dense_vector():
    values, v = RNG.standard_normal(len(EDGES)), RNG.standard_normal(4)
    same(tg.sparse_coo_tensor(EDGES.T, values, (4, 4)) @ tg.tensor(v),
         torch.sparse_coo_tensor(torch.tensor(EDGES.T), torch.tensor(values), (4, 4)) @ torch.tensor(v))


def test_transpose_is_sparse_and_not_coalesced():
    values = RNG.standard_normal(len(EDGES))
    a = tg.sparse_coo_tensor(EDGES.T, values, (4, 4)).coalesce()
    same(a.t(), torch.sparse_coo_tensor(torch.tensor(EDGES.T), torch.tensor(values), (4, 4)).coalesce().t())


def test_products_of_two_dtypes_are_refused_as_torch_refuses():
    a = tg.sparse_coo_tensor(EDGES.T, np.ones(len(EDGES)), (4, 4))
    with pytest.raises(RuntimeError, match=r"^sparse.mm: expected both operands to have the same dtype, but got "
                                           r"taugrad.float64 and taugrad.float32"):
        a @ tg.ones(4, 2, dtype=tg.float32)
    with pytest.raises(RuntimeError):
        torch.sparse_coo_tensor(torch.tensor(EDGES.T), torch.ones(len(EDGES), dtype=torch.float64)) @ \
            torch.ones(4, 2)


@pytest.mark.parametrize("op, name", [
    (lambda a: tg.eye(4) * a, "mul"), (lambda a: tg.eye(4) - a, "sub"), (lambda a: tg.relu(a), "relu"),
    (lambda a: a + tg.eye(4), "add"), (lambda a: tg.add(a, tg.eye(4)), "add"),
])
def test_other_ops_on_a_sparse_operand_are_one_line_naming_the_op(op, name):
    with pytest.raises(NotImplementedError) as err:
        op(tg.sparse_coo_tensor(EDGES.T, np.ones(len(EDGES), dtype=np.float32), (4, 4)))
    assert str(err.value).startswith(f"{name}: not supported on a sparse COO tensor") and "\n" not in str(err.value)

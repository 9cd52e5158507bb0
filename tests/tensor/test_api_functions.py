"""The PyTorch API functions that are not a single op row: creation, memory sharing, dispatch, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import taugrad


@pytest.mark.parametrize("start, end, steps", [(-1.3, 2.7, 17), (0.0, 1.0, 10), (3.0, -2.2, 8), (0.1, 0.7, 257)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_and_logspace_are_torchs_values_bit_for_bit(start, end, steps, dtype):
    got = taugrad.linspace(start, end, steps, dtype=dtype).numpy()
    want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
    np.testing.assert_array_equal(got, want)
    got = taugrad.logspace(start, end, steps, base=2.0, dtype=dtype).numpy()
    want = torch.logspace(start, end, steps, base=2.0, dtype=getattr(torch, dtype)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-14)


def test_arange_dtypes_and_lengths_follow_torch():
    for args in [(5,), (0, 1, 0.1), (-3.3, 7.1, 0.37), (1, 10, 3), (0.5, 3)]:
        got, want = taugrad.arange(*args), torch.arange(*args)
        assert got.shape == tuple(want.shape), args
        assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1], args
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_from_numpy_and_as_tensor_share_memory():
    array = np.arange(3.0)
    shared, also_shared = taugrad.from_numpy(array), taugrad.as_tensor(array)
    array[0] = 9.0
    assert shared[0].item() == 9.0 and also_shared[0].item() == 9.0
    t = taugrad.tensor([1.0, 2.0])
    assert taugrad.as_tensor(t) is t
    assert taugrad.numel(taugrad.zeros(2, 3)) == 6
    assert taugrad.empty_like(taugrad.ones(2, 5, dtype="float64")).shape == (2, 5)


def test_topk_and_sort_send_the_gradient_to_the_picked_elements():
    x = taugrad.tensor([0.3, -1.0, 2.0, 0.5], requires_grad=True)
    values, indices = x.topk(2)
    assert indices.tolist() == [2, 3]
    values.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 1.0]


def test_sort_descending_is_stable_and_puts_nan_first():
    x = taugrad.tensor([1.0, float("nan"), 2.0, 1.0, 2.0])
    values, indices = x.sort(descending=True)
    assert indices.tolist() == [1, 2, 4, 0, 3]
    assert math.isnan(values[0].item())


def test_cumprod_and_prod_gradients_at_zeros_match_torch():
    data = np.array([[2.0, 0.0, 3.0, 0.0], [1.5, -2.0, 0.0, 4.0]])
    for fn in (lambda L, x: x.cumprod(1), lambda L, x: x.prod(1), lambda L, x: x.prod()):
        a, b = taugrad.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        out_a, out_b = fn(taugrad, a), fn(torch, b)
        upstream = np.arange(1.0, out_b.numel() + 1).reshape(tuple(out_b.shape))
        out_a.backward(taugrad.tensor(upstream))
        out_b.backward(torch.tensor(upstream))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_einsum_backward_records_a_graph_of_einsums():
    a = taugrad.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = taugrad.tensor(np.arange(3.0), requires_grad=True)
    (grad_a,) = taugrad.grad(taugrad.einsum("ij,j->", a, b) ** 2, [a], create_graph=True)
    assert grad_a.grad_fn is not None
    (hessian_row,) = taugrad.grad(grad_a[0, 0], [b])
    ta = torch.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    tb = torch.tensor(np.arange(3.0), requires_grad=True)
    (tg,) = torch.autograd.grad(torch.einsum("ij,j->", ta, tb) ** 2, [ta], create_graph=True)
    (want,) = torch.autograd.grad(tg[0, 0], [tb])
    np.testing.assert_allclose(hessian_row.numpy(), want.numpy())


def test_linalg_norm_chooses_vector_or_matrix_norm_as_torch():
    data = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
    a, b = taugrad.tensor(data), torch.tensor(data)
    for kwargs in [{}, {"ord": 1}, {"ord": math.inf}, {"ord": "fro"}, {"dim": 1}, {"ord": 3, "dim": 0},
                   {"dim": (0, 1), "ord": -1}, {"ord": 2}, {"ord": -2}, {"ord": "nuc"}, {"dim": (1, 0), "ord": 2}]:
        np.testing.assert_allclose(taugrad.linalg.norm(a, **kwargs).numpy(), torch.linalg.norm(b, **kwargs).numpy(),
                                   err_msg=str(kwargs))


@pytest.mark.parametrize("call, message", [
    (lambda: taugrad.einsum("ij,jk->ik", taugrad.ones(2, 3), taugrad.ones(2, 3)), "label 'j' has sizes 3 and 2"),
    (lambda: taugrad.einsum("ij->k", taugrad.ones(2, 3)), "output label 'k' is not in any operand"),
    (lambda: taugrad.einsum("ij,j", taugrad.ones(2, 3)), "names 2 operands, 1 given"),
    (lambda: taugrad.ones(4).topk(5), r"topk: k \(5\) out of range"),
    (lambda: taugrad.ones(4).tril(), "tril: needs a tensor of at least 2 dimensions"),
    (lambda: taugrad.ones(2, 3).repeat(2), "repeat: 1 sizes for a tensor of 2 dims"),
    (lambda: taugrad.ones(2, 3).diag().diag().diag().reshape(2, 1, 1).diag(), "diag: expects a 1-D or 2-D tensor"),
    (lambda: taugrad.tensor([1.0, -1.0]).histc(bins=0), "histc: bins must be positive"),
    (lambda: taugrad.bincount(taugrad.tensor([1, -1])), "bincount: values must be non-negative"),
])
def test_bad_arguments_get_one_clear_line(call, message):
    with pytest.raises((ValueError, TypeError, IndexError), match=message):
        call()

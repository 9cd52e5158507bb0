"""backward(): accumulation, non-scalar roots, retain_graph and memory, deep graphs, taugrad.grad."""
import gc
import tracemalloc

import numpy as np
import pytest
import torch

import taugrad
from taugrad import Tensor


def leaf(array, dtype=np.float64):
    return Tensor(np.array(array, dtype=dtype), requires_grad=True)


def torch_leaf(array):
    return torch.tensor(np.array(array, dtype=np.float64), requires_grad=True)


# ---------------------------------------------------------------------------
# .grad accumulates, as in PyTorch
# ---------------------------------------------------------------------------


def test_grad_accumulates_across_backward_calls():
    x = leaf([1.0, -2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.data, [2.0, -4.0, 6.0])
    (x * 3.0).sum().backward()  # a second graph adds to .grad
    np.testing.assert_allclose(x.grad.data, [5.0, -1.0, 9.0])


def test_retain_graph_allows_a_second_backward_that_accumulates():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    want = 2 * (np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0])))
    np.testing.assert_allclose(x.grad.data, want, rtol=1e-12)


def test_a_value_used_twice_gets_both_contributions():
    # diamond: x -> a, x -> b, (a, b) -> y; compare with torch
    data = np.array([[0.3, -1.2], [2.0, 0.7]])
    x, tx = leaf(data), torch_leaf(data)
    for v in (x, tx):
        a = v.tanh()
        b = v * v
        (a * b + a - b.exp()).sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-12)


def test_backward_with_explicit_gradient_matches_torch():
    data = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    g = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])
    x, tx = leaf(data), torch_leaf(data)
    (x.sigmoid() * x).backward(Tensor(g))
    (tx.sigmoid() * tx).backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-12)


def test_non_scalar_backward_without_gradient_says_so():
    y = leaf([1.0, 2.0]) * 2.0
    with pytest.raises((RuntimeError, ValueError), match="scalar|single-element") as info:
        y.backward()
    assert "\n" not in str(info.value) and "gradient" in str(info.value)


def test_backward_gradient_of_the_wrong_shape_names_both_shapes():
    y = leaf(np.ones((2, 3))) * 2.0
    with pytest.raises((RuntimeError, ValueError)) as info:
        y.backward(Tensor(np.ones((3, 2))))
    assert "(2, 3)" in str(info.value) and "(3, 2)" in str(info.value)


def test_leaves_not_requiring_grad_get_none():
    x = leaf([1.0, 2.0])
    c = Tensor(np.array([3.0, 4.0]))
    (x * c).sum().backward()
    assert c.grad is None


def test_a_chain_deeper_than_the_recursion_limit():
    x = leaf([0.5, -0.5])
    y = x
    for _ in range(5000):  # far beyond a recursive traversal's ~1000 frames
        y = y * 1.0001 + 0.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, [1.0001 ** 5000] * 2, rtol=1e-10)


# ---------------------------------------------------------------------------
# memory: saved tensors are released after backward unless retain_graph=True
# ---------------------------------------------------------------------------


def test_second_backward_through_a_released_graph_names_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises((RuntimeError, ValueError), match="retain_graph"):
        y.backward()


def test_retain_graph_error_also_for_a_shared_subgraph():
    x = leaf([1.0, 2.0])
    h = x.exp()
    (h * 2.0).sum().backward()
    with pytest.raises((RuntimeError, ValueError), match="retain_graph"):
        (h * 3.0).sum().backward()  # h's saved output went with the first backward


def test_backward_releases_the_intermediates_it_saved():
    n = 200_000  # 1.6 MB per float64 array
    x = leaf(np.linspace(-1.0, 1.0, n))
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        loss = ((x.exp() * x).tanh() * x.sigmoid()).sum()  # ~5 saved intermediates of 1.6 MB
        held_by_graph = tracemalloc.get_traced_memory()[0] - base
        loss.backward()
        gc.collect()
        held_after = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    mb = n * 8
    assert held_by_graph > 3 * mb, "the test needs a graph that saves several arrays"
    # still holding `loss`: only x.grad (one array) and small change may stay alive
    assert held_after < 1.5 * mb, f"after backward {held_after / mb:.1f} arrays of x's size are still held"


def test_retain_graph_keeps_the_graph_usable():
    x = leaf(np.linspace(-1.0, 1.0, 5))
    loss = (x.exp() * x).sum()
    for _ in range(3):
        loss.backward(retain_graph=True)
    t = torch_leaf(np.linspace(-1.0, 1.0, 5))
    (3 * (t.exp() * t).sum()).backward()
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------------------
# taugrad.grad
# ---------------------------------------------------------------------------


def test_grad_returns_gradients_without_touching_dot_grad():
    data_a, data_b = np.array([0.5, -1.5, 2.0]), np.array([1.0, 0.25, -0.5])
    a, b = leaf(data_a), leaf(data_b)
    ta, tb = torch_leaf(data_a), torch_leaf(data_b)
    ga, gb = taugrad.grad((a * b.exp()).sum(), [a, b])
    want = torch.autograd.grad((ta * tb.exp()).sum(), [ta, tb])
    np.testing.assert_allclose(ga.data, want[0].numpy(), rtol=1e-12)
    np.testing.assert_allclose(gb.data, want[1].numpy(), rtol=1e-12)
    assert a.grad is None and b.grad is None


def test_grad_with_grad_outputs_for_a_non_scalar_output():
    data = np.array([[0.5, -1.5], [2.0, 0.1]])
    g = np.array([[1.0, 2.0], [-3.0, 0.5]])
    x, tx = leaf(data), torch_leaf(data)
    (gx,) = taugrad.grad(x.tanh(), [x], grad_outputs=Tensor(g))
    (want,) = torch.autograd.grad(tx.tanh(), [tx], grad_outputs=torch.tensor(g))
    np.testing.assert_allclose(gx.data, want.numpy(), rtol=1e-12)


def test_grad_of_an_unused_input_is_an_error_unless_allow_unused():
    a, unused = leaf([1.0, 2.0]), leaf([3.0])
    with pytest.raises((RuntimeError, ValueError), match="allow_unused"):
        taugrad.grad((a * a).sum(), [a, unused])
    ga, gu = taugrad.grad((a * a).sum(), [a, unused], allow_unused=True)
    np.testing.assert_allclose(ga.data, [2.0, 4.0])
    assert gu is None


def test_grad_releases_the_graph_unless_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    (g1,) = taugrad.grad(y, [x], retain_graph=True)
    (g2,) = taugrad.grad(y, [x])
    np.testing.assert_allclose(g1.data, g2.data)
    with pytest.raises((RuntimeError, ValueError), match="retain_graph"):
        taugrad.grad(y, [x])


def test_grad_accepts_a_single_input_tensor():
    x = leaf([1.0, 2.0])
    result = taugrad.grad((x * x).sum(), x)
    assert len(result) == 1
    np.testing.assert_allclose(result[0].data, [2.0, 4.0])


# ---------------------------------------------------------------------------
# gradients never alias each other or the caller's arrays
# ---------------------------------------------------------------------------


def test_gradients_of_different_leaves_are_independent():
    a, b = leaf(np.ones(4)), leaf(np.ones(4))
    (a + b).sum().backward()  # the same upstream array reaches both leaves
    a.grad.zero_()
    np.testing.assert_array_equal(b.grad.data, np.ones(4))
    (a * 2.0 + b).sum().backward()
    np.testing.assert_array_equal(a.grad.data, np.full(4, 2.0))
    np.testing.assert_array_equal(b.grad.data, np.full(4, 2.0))


def test_grad_does_not_alias_the_gradient_passed_to_backward():
    g = Tensor(np.full((2, 3), 2.0))
    x = leaf(np.ones((2, 3)))
    (x * 1.0).backward(g)
    x.grad.zero_()
    np.testing.assert_array_equal(g.data, np.full((2, 3), 2.0))

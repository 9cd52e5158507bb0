"""In-place ops on results of ops are recorded in the graph as PyTorch records them.

Each program is written once against a module ``T`` (``taugrad`` or ``torch``)
and run with both; values and gradients must agree.  A program returns the
tensors whose gradients are compared (leaves) after it called backward().
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad

X = np.array([[0.5, -1.0, 2.0, -0.25], [1.5, 0.75, -2.0, 0.1], [-0.3, 0.2, 0.9, -1.1]])
W = np.array([[0.3, -0.2, 0.5, 0.1], [0.7, 0.4, -0.6, 0.2]])


def _leaf(T, array):
    return T.tensor(np.array(array), requires_grad=True)


def chain(T):
    x = _leaf(T, X)
    y = x * 2
    y += 1
    y *= y.detach().clone()
    y.sum().backward()
    return y, [x]


def sub_div(T):
    x = _leaf(T, X)
    d = _leaf(T, X[0] + 3.0)
    y = x * 3
    y -= 1
    y /= d
    (y * y).sum().backward()
    return y, [x, d]


def mul_by_tensor_needing_grad(T):
    x, m = _leaf(T, X), _leaf(T, X[::-1].copy())
    y = x * 1
    y *= m
    y += 2  # a later change of y: mul_'s saved old value is a copy, so no error
    (y ** 2).sum().backward()
    return y, [x, m]


def add_alpha(T):
    x, b = _leaf(T, X), _leaf(T, X[1])
    y = x.exp()
    z = y * 1
    z.add_(b, alpha=2.5)
    z.sub_(b, alpha=0.5)
    z.sum().backward()
    return z, [x, b]


def setitem_zero_row(T):
    x = _leaf(T, X)
    y = x * x
    y[0] = 0
    y.sum().backward()
    return y, [x]


def setitem_into_zeros(T):
    x = _leaf(T, X)
    out = T.zeros(3, 4, dtype=T.float64)
    out[1] = x[0] * 2
    out[2, 1:] = x[1, :3].exp()
    (out * T.tensor(X)).sum().backward()
    return out, [x]


def out_i_equals_model(T):
    lin = T.nn.Linear(4, 2)  # float32, as the default
    with T.no_grad():
        lin.weight.copy_(T.tensor(W))
        lin.bias.fill_(0.1)
    x = T.tensor(X, dtype=T.float32)
    out = T.zeros(3, 2)
    for i in range(3):
        out[i] = lin(x[i])
    (out ** 2).sum().backward()
    return out, [lin.weight, lin.bias]


def setitem_minus_equals(T):
    x = _leaf(T, X)
    y = x * 3
    y[1] -= 1
    y[:, 2] *= 4
    y[[0, 2], 1:3] /= 2
    y[0, 0] += y[2, 3]
    (y * y).sum().backward()
    return y, [x]


def setitem_broadcast_value(T):
    x, v = _leaf(T, X), _leaf(T, X[0, :2])
    y = x.tanh()
    y = y * 1
    y[:, 1:3] = v
    y[T.tensor([True, False, True])] = v.sum() * 2
    (y * T.tensor(X)).sum().backward()
    return y, [x, v]


def relu_after_linear(T):
    x = T.tensor(X)
    w = _leaf(T, W)
    h = x @ w.t()
    h.relu_()
    (h * h).sum().backward()
    return h, [w]


def masked_fill_mask(T):
    x = _leaf(T, X)
    y = x * 2
    y.masked_fill_(T.tensor(X) > 0.5, -1.0)
    v = _leaf(T, 0.25)
    y.masked_fill_(T.tensor(X) < -1.0, v)
    (y ** 3).sum().backward()
    return y, [x, v]


def clamp_zero_copy(T):
    x, s = _leaf(T, X), _leaf(T, X[2])
    y = x * 1.5
    y.clamp_(-1.0, 1.0)
    z = y * 2
    z[0].zero_()
    z[1].copy_(s)
    (z * T.tensor(X)).sum().backward()
    return z, [x, s]


def view_inplace(T):
    x = _leaf(T, X)
    y = x * 1
    y[1].mul_(3)
    y.t()[0].add_(1)  # a view of a view: torch supports it; taugrad raises (see test below)
    y.sum().backward()
    return y, [x]


def used_before_change(T):
    x = _leaf(T, X)
    y = x * 2
    z = y.sum(dim=0)  # uses y's old value
    y *= 3
    y[0] = 0
    (z * 2 + y.sum(dim=0)).sum().backward()
    return y, [x]


def reassign_through_graph(T):
    x, b = _leaf(T, X), _leaf(T, X[0])
    y = x.sigmoid()
    y = y + 0
    y.add_(b)
    y.mul_(b)
    y.div_(2.0)
    y.sub_(1)
    y.sum().backward()
    return y, [x, b]


PROGRAMS = [chain, sub_div, mul_by_tensor_needing_grad, add_alpha, setitem_zero_row, setitem_into_zeros,
            out_i_equals_model, setitem_minus_equals, setitem_broadcast_value, relu_after_linear, masked_fill_mask,
            clamp_zero_copy, used_before_change, reassign_through_graph]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_inplace_program_matches_torch(program):
    got_value, got_leaves = program(taugrad)
    want_value, want_leaves = program(torch)
    tol = 1e-12 if want_value.dtype == torch.float64 else 1e-5
    assert str(got_value.dtype).endswith(str(want_value.dtype).replace("torch.", ""))
    np.testing.assert_allclose(got_value.detach().numpy(), want_value.detach().numpy(), rtol=tol, atol=tol)
    assert not got_value.is_leaf and got_value.requires_grad
    for got, want in zip(got_leaves, want_leaves):
        assert want.grad is not None
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=tol, atol=tol)


def test_setitem_zeroes_the_gradient_of_that_element():
    x = taugrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 5
    y[0] = 0
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 5.0, 5.0]


def test_out_of_place_result_becomes_a_non_leaf():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    out = taugrad.zeros(3, 2)
    assert out.is_leaf and not out.requires_grad
    out[1] = x * 2
    assert not out.is_leaf and out.requires_grad and out.grad_fn is not None


def test_backward_that_needs_an_overwritten_value_raises_naming_the_op():
    x = taugrad.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x.exp()
    y += 1
    with pytest.raises(RuntimeError, match=r"backward of 'exp'.*modified by an in-place operation after .exp. saved it"):
        y.sum().backward()
    # torch raises the same
    tx = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    ty = tx.exp()
    ty += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ty.sum().backward()


def test_mul_by_own_detached_value_raises_as_torch():
    """``y *= y.detach()``: mul_ saved ``other``, which is y's storage, then overwrote it."""
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y *= y.detach()
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_inplace_on_leaf_requiring_grad_is_refused_outside_no_grad():
    w = taugrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w += 1
    with pytest.raises(RuntimeError, match="leaf"):
        w[0] = 3.0
    with pytest.raises(RuntimeError, match="view of a leaf"):
        w[0:1].mul_(2)
    with taugrad.no_grad():
        w += 1
    assert w.tolist() == [2.0, 3.0]


def test_view_of_a_view_is_refused_with_a_clear_error():
    with pytest.raises(RuntimeError, match="view of a view"):
        view_inplace(taugrad)


def test_view_used_after_its_base_changed_raises_instead_of_a_wrong_gradient():
    x = taugrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    v = y[1:]
    y *= 2
    with pytest.raises(RuntimeError, match="view whose base was changed in place"):
        v.sum().backward()


def test_inplace_on_a_view_rebases_its_base():
    x = taugrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[1:].mul_(3)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 6.0, 6.0]


def test_create_graph_through_inplace_ops_matches_torch():
    def program(T):
        x = _leaf(T, X)
        y = x * x
        y[0] *= 3
        y += x
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (g * g).sum().backward()
        return x.grad

    np.testing.assert_allclose(program(taugrad).numpy(), program(torch).numpy(), rtol=1e-12)


def test_unrecorded_inplace_is_unchanged_under_no_grad():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with taugrad.no_grad():
        y += 1
    assert y.grad_fn is not None and y.tolist() == [3.0, 5.0]


def test_self_product_raises_and_overlapping_setitem_works_as_torch():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y *= y
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()

    def program(T):
        x = _leaf(T, [1.0, 2.0, 3.0])
        y = x * 2
        y[0] = y[1]
        y.sum().backward()
        return x.grad

    assert program(taugrad).tolist() == program(torch).tolist() == [0.0, 4.0, 2.0]


def test_recurrence_written_into_a_buffer_matches_torch():
    """``h[t] = f(h[t-1])``: each view is used before the next write, as PyTorch allows.

    (``h[t - 1] * w`` would save the view for w's gradient, and the next write
    changes it: PyTorch and taugrad both raise then.)
    """
    def program(T):
        w = _leaf(T, [0.9, -0.4, 0.3])
        h = T.zeros(5, 3, dtype=T.float64)
        h[0] = w
        for t in range(1, 5):
            h[t] = (h[t - 1] * 0.5 + w).tanh()
        (h * h).sum().backward()
        return h, w.grad

    (h1, g1), (h2, g2) = program(taugrad), program(torch)
    np.testing.assert_allclose(h1.detach().numpy(), h2.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-12)


@pytest.mark.parametrize("program", ["add_", "mul_", "setitem"])
def test_autograd_grad_follows_the_parents_an_inplace_op_recorded(program):
    """grad() walks to the tensor through the rebased tensor's old node, as backward() does."""

    def run(lib):
        a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = a * 1.0
        if program == "add_":
            y.add_(y * 2)
        elif program == "mul_":
            y.mul_(y.detach() + 1.0)
        else:
            y[1:] = y[:2] * 3.0
        (ga,) = lib.autograd.grad((y * y).sum(), a)
        return ga.detach().numpy()

    np.testing.assert_allclose(run(taugrad), run(torch), rtol=1e-12)

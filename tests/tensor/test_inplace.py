"""Changing in place a tensor that backward still needs raises instead of giving a wrong gradient.

PyTorch's rule, checked against it where it applies: every tensor (and every
view of the same storage) has a version; an op's backward refuses to run if a
value it saved was modified after the op recorded it.
"""
import numpy as np
import pytest
import torch

import taugrad
from taugrad import Tensor

MODIFIED = "in-place|in place|inplace"


def leaf(values):
    return Tensor(np.array(values, dtype=np.float64), requires_grad=True)


def const(values):
    return Tensor(np.array(values, dtype=np.float64))


CHANGES = {
    "+=": lambda c: c.__iadd__(1.0),
    "add_": lambda c: c.add_(1.0),
    "mul_": lambda c: c.mul_(2.0),
    "zero_": lambda c: c.zero_(),
    "setitem": lambda c: c.__setitem__(0, 5.0),
}


@pytest.mark.parametrize("change", CHANGES)
def test_changing_a_saved_constant_is_detected(change):
    x, c = leaf([1.0, 2.0, 3.0]), const([4.0, 5.0, 6.0])
    y = (x * c).sum()  # mul saves c for x's gradient
    CHANGES[change](c)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_torch_agrees_that_this_is_an_error():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    c = torch.tensor([4.0, 5.0])
    y = (x * c).sum()
    c.add_(1.0)
    with pytest.raises(RuntimeError, match="inplace"):
        y.backward()


def test_changing_a_value_backward_does_not_read_is_fine():
    x, c = leaf([1.0, 2.0]), const([4.0, 5.0])
    y = (x + c).sum()  # add's gradient does not depend on c
    c.add_(1.0)
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 1.0])


def test_changing_a_leaf_under_no_grad_before_backward_is_detected():
    w = leaf([1.0, -2.0])
    y = (w * w).sum()
    with taugrad.no_grad():
        w -= 0.5  # an optimizer step too early
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_changing_a_saved_output_is_detected():
    x = leaf([0.5, 1.0])
    e = x.exp()  # exp's backward reads its output
    y = (e * 1.0).sum()
    with taugrad.no_grad():
        e.add_(1.0)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


VIEWS = {
    "slice": lambda c: c[1:3],
    "reshape": lambda c: c.reshape(2, 2),
    "transpose": lambda c: c.reshape(2, 2).transpose(0, 1),
    "T": lambda c: c.reshape(2, 2).T,
    "unsqueeze": lambda c: c.unsqueeze(0),
    "detach": lambda c: c.detach(),
    "split": lambda c: c.split(2)[1],
}


@pytest.mark.parametrize("view", VIEWS)
def test_changing_the_base_of_a_saved_view_is_detected(view):
    c = const([1.0, 2.0, 3.0, 4.0])
    v = VIEWS[view](c)
    x = leaf(np.ones(v.shape))
    y = (x * v).sum()
    c.mul_(2.0)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


@pytest.mark.parametrize("view", VIEWS)
def test_changing_a_view_of_a_saved_tensor_is_detected(view):
    c = const([1.0, 2.0, 3.0, 4.0])
    x = leaf(np.ones(4))
    y = (x * c).sum()
    v = VIEWS[view](c)
    v.mul_(2.0)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_in_place_on_a_leaf_that_requires_grad_is_refused_while_recording():
    w = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no_grad"):
        w += 1.0


def test_in_place_outside_any_graph_just_changes_values():
    c = const([1.0, 2.0])
    c += 1.0
    c.mul_(3.0)
    c[0] = -1.0
    np.testing.assert_array_equal(c.data, [-1.0, 9.0])
    x = leaf([1.0, 1.0])
    (x * c).sum().backward()  # a graph built after the change sees the new values
    np.testing.assert_array_equal(x.grad.data, [-1.0, 9.0])


def test_a_training_loop_updates_in_place_between_graphs():
    w = leaf([1.0, -1.0])
    for _ in range(3):
        loss = (w * w).sum()
        loss.backward()
        with taugrad.no_grad():
            w -= 0.25 * w.grad
        w.grad = None
    np.testing.assert_allclose(w.data, [0.125, -0.125])  # w *= (1 - 0.5) three times

"""``Tensor.data``: a detached tensor sharing memory, as ``torch.Tensor.data``."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad


def test_data_is_a_detached_tensor_sharing_memory():
    for L in (taugrad, torch):
        p = L.tensor([1.0, 2.0], requires_grad=True)
        d = p.data
        assert isinstance(d, L.Tensor) and not d.requires_grad and d.is_leaf and d.grad_fn is None
        d[0] = 5.0  # writes through to p
        assert p.tolist() == [5.0, 2.0]
        assert p.requires_grad


def test_lecture_update_changes_the_parameter_in_place():
    """makemore's ``p.data += -lr * p.grad`` gives torch's numbers, records nothing."""
    results = {}
    for L in (taugrad, torch):
        w0 = np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32)
        W = L.tensor(w0, requires_grad=True)
        x = L.tensor([[1.0, 2.0], [3.0, -1.0]])
        for _ in range(3):
            loss = ((x @ W).tanh() ** 2).mean()
            W.grad = None
            loss.backward()
            before = W.data
            W.data += -0.1 * W.grad
            assert W.is_leaf and W.requires_grad and W.grad_fn is None
            assert before.tolist() == W.tolist()  # the same memory, updated
        results[L.__name__] = W.detach().numpy().copy()
    np.testing.assert_allclose(results["taugrad"], results["torch"], rtol=1e-6)


def test_update_through_data_bumps_the_version():
    """A backward that saved ``p`` refuses to run after ``p.data`` changed in place.

    A deliberate difference: torch's ``.data`` does not share the version
    counter, so torch silently returns a gradient computed from the changed
    values (checked below); taugrad raises, as for any in-place change.
    """
    p = taugrad.tensor([1.0, 2.0], requires_grad=True)
    y = (p * p).sum()
    p.data += 1.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()
    tp = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = (tp * tp).sum()
    tp.data += 1.0
    ty.backward()
    assert tp.grad.tolist() == [4.0, 6.0]  # 2 * (p + 1): not the gradient at the recorded p = [1, 2]


def test_data_under_grad_mode_records_no_graph():
    p = taugrad.tensor([1.0, 2.0], requires_grad=True)
    q = p.data * 3
    assert not q.requires_grad and q.grad_fn is None


def test_assigning_a_tensor_replaces_the_storage():
    for L in (taugrad, torch):
        p = L.tensor([1.0, 2.0], requires_grad=True)
        new = L.zeros(2, 3, dtype=L.float64)
        p.data = new
        assert tuple(p.shape) == (2, 3) and p.dtype == L.float64 and p.requires_grad and p.is_leaf
        new[0, 0] = 7.0  # shared, as torch
        assert p[0, 0].item() == 7.0


def test_assigning_a_non_tensor_is_one_clear_line():
    p = taugrad.tensor([1.0, 2.0], requires_grad=True)
    for value in ([1.0, 2.0], np.zeros(2), 3.0):
        with pytest.raises(TypeError, match=r"^data: assigned value must be a Tensor, got \w+") as info:
            p.data = value
        assert "\n" not in str(info.value)
    with pytest.raises(TypeError):
        torch.tensor([1.0]).data = [1.0]


def test_numpy_array_is_reached_publicly():
    t = taugrad.tensor([1.0, 2.0])
    assert isinstance(t.numpy(), np.ndarray) and isinstance(np.asarray(t), np.ndarray)
    assert isinstance(t.data.numpy(), np.ndarray)
    assert taugrad.tensor([1.0], requires_grad=True).data.numpy().tolist() == [1.0]


def test_optimizer_step_and_data_update_agree():
    """SGD and the hand-written ``.data`` update move a parameter to the same place."""
    a = taugrad.tensor([1.0, -2.0], requires_grad=True)
    b = taugrad.tensor([1.0, -2.0], requires_grad=True)
    opt = taugrad.optim.SGD([a], lr=0.1)
    for p in (a, b):
        (p * p).sum().backward()
    opt.step()
    b.data += -0.1 * b.grad
    assert a.tolist() == b.tolist()

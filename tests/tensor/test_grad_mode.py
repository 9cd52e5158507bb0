"""no_grad / enable_grad with Tensors: context managers, decorators, per thread."""
import threading

import numpy as np
import pytest

import taugrad
from taugrad import Tensor


def leaf():
    return Tensor(np.array([1.0, 2.0]), requires_grad=True)


def test_no_grad_block_records_nothing():
    x = leaf()
    with taugrad.no_grad():
        y = x * 2.0
    assert y.requires_grad is False
    assert (x * 2.0).requires_grad is True  # restored after the block


def test_no_grad_result_cannot_be_backpropagated_to_the_leaf():
    x = leaf()
    with taugrad.no_grad():
        y = (x * x).sum()
    with pytest.raises((RuntimeError, ValueError)):
        y.backward()
    assert x.grad is None


def test_no_grad_as_decorator():
    @taugrad.no_grad()
    def double(t):
        return t * 2.0

    x = leaf()
    assert double(x).requires_grad is False
    assert (x * 2.0).requires_grad is True


def test_enable_grad_inside_no_grad():
    x = leaf()
    with taugrad.no_grad():
        with taugrad.enable_grad():
            y = (x * x).sum()
        z = x * 3.0
    assert y.requires_grad is True and z.requires_grad is False
    y.backward()
    np.testing.assert_allclose(x.grad.data, [2.0, 4.0])


def test_enable_grad_as_decorator_inside_no_grad():
    @taugrad.enable_grad()
    def square_sum(t):
        return (t * t).sum()

    x = leaf()
    with taugrad.no_grad():
        y = square_sum(x)
    y.backward()
    np.testing.assert_allclose(x.grad.data, [2.0, 4.0])


def test_mode_is_restored_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with taugrad.no_grad():
            1 / 0
    assert (leaf() * 2.0).requires_grad is True


def test_grad_mode_is_per_thread():
    x = leaf()
    seen = {}

    def worker():
        seen["other thread"] = (x * 2.0).requires_grad

    with taugrad.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        seen["this thread"] = (x * 2.0).requires_grad
    assert seen == {"other thread": True, "this thread": False}


def test_no_grad_forward_keeps_no_intermediates_alive():
    import gc
    import tracemalloc

    n = 200_000
    x = Tensor(np.linspace(-1.0, 1.0, n), requires_grad=True)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with taugrad.no_grad():
            y = ((x.exp() * x).tanh() * x.sigmoid()).sum()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert y.requires_grad is False
    assert held < 0.5 * n * 8, f"{held / (n * 8):.1f} arrays of x's size held by a no_grad result"

"""Graphs never leak: a dropped forward pass is freed at once, by reference counting alone.

Every test runs with the cyclic garbage collector switched off, so anything
that is only freed by ``gc.collect()`` (a reference cycle) stays alive and the
weak references below stay live: the test fails.
"""
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import taugrad
from taugrad import nn
from taugrad.functional import cross_entropy


@pytest.fixture
def no_gc():
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _graph_refs(root):
    """Weak references to every interior tensor of ``root``'s graph and every array saved in it."""
    refs, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen or not node._prev:
            continue
        seen.add(id(node))
        refs.append(weakref.ref(node))
        ctx = node._ctx
        for item in ctx if isinstance(ctx, tuple) else (ctx,):
            if isinstance(item, np.ndarray) and item.base is None:
                refs.append(weakref.ref(item))
        stack.extend(node._prev)
    return refs


def _alive(refs):
    return [r() for r in refs if r() is not None]


def _mlp_loss(model, x, y):
    return cross_entropy(model(x), y)


def test_dropping_the_output_frees_graph_and_saved_arrays(no_gc):
    taugrad.manual_seed(0)
    x = taugrad.randn(8, 5, requires_grad=True)
    w = taugrad.randn(5, 4, requires_grad=True)
    h = (x @ w).relu()
    h_ref = weakref.ref(h)
    h_data_ref = weakref.ref(h.detach().numpy())
    out = (h.tanh() * 2 - h.exp().log1p()).sum(dim=1)
    out = taugrad.softmax(out, dim=0).max()
    refs = _graph_refs(out)
    assert len(refs) >= 6  # the walk really saw the graph
    del h
    assert h_ref() is not None  # the graph keeps the intermediate alive ...
    del out
    assert h_ref() is None  # ... and dropping the output frees it at once
    assert h_data_ref() is None
    assert _alive(refs) == []


def test_mlp_forward_graph_is_freed_without_backward(no_gc):
    taugrad.manual_seed(0)
    model = nn.MLP(6, [16, 16], 3)
    x = taugrad.randn(10, 6)
    loss = _mlp_loss(model, x, np.arange(10) % 3)  # the targets live only in the graph
    refs = _graph_refs(loss)
    assert len(refs) >= 7  # 6 nodes (linear, relu, linear, relu, linear, cross_entropy) + saved arrays
    del loss
    assert _alive(refs) == []


def test_mlp_graph_is_freed_after_backward_and_step(no_gc):
    taugrad.manual_seed(1)
    model = nn.MLP(6, [16], 3)
    opt = taugrad.optim.Adam(model.parameters(), lr=1e-2)
    x = taugrad.randn(10, 6)
    loss = _mlp_loss(model, x, np.arange(10) % 3)
    refs = _graph_refs(loss)
    opt.zero_grad()
    loss.backward(retain_graph=True)  # keep saved values, so only dropping frees them
    opt.step()
    del loss
    assert _alive(refs) == []


def test_hooks_and_retained_grads_do_not_keep_graphs(no_gc):
    taugrad.manual_seed(2)
    model = nn.MLP(4, [8], 2)
    seen = []
    handle = model.register_forward_hook(lambda module, inputs, output: seen.append(output.shape))
    x = taugrad.randn(5, 4, requires_grad=True)
    h = model(x)
    h.retain_grad()
    h.register_hook(lambda g: g * 2)
    loss = h.sum()
    refs = _graph_refs(loss) + [weakref.ref(h)]
    loss.backward()
    assert h.grad is not None and seen == [(5, 2)]
    del loss, h
    assert _alive(refs) == []
    handle.remove()


def test_anomaly_mode_does_not_keep_graphs(no_gc):
    taugrad.manual_seed(3)
    x = taugrad.randn(6, 3, requires_grad=True)
    with taugrad.detect_anomaly():
        out = (x.exp() * x).sum()
        refs = _graph_refs(out)
        out.backward(retain_graph=True)
        del out
    assert _alive(refs) == []


def test_custom_function_graph_is_freed(no_gc):
    class Square(taugrad.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    x = taugrad.randn(4, requires_grad=True)
    y = Square.apply(x * 3)
    refs = _graph_refs(y)
    y.sum().backward(retain_graph=True)
    del y
    assert _alive(refs) == []


def test_scalar_value_graphs_are_freed_by_reference_counting(no_gc):
    """Value has no weak references (slots), so count the GC-tracked objects instead."""

    def forward_backward():
        a = taugrad.Value(0.5)
        b = taugrad.Value(-1.5)
        out = ((a * b).tanh() + (a ** 2).exp() - b.relu() / 3 + 2 ** b).sigmoid()
        out.backward()

    forward_backward()
    before = len(gc.get_objects())
    for _ in range(200):
        forward_backward()
    assert len(gc.get_objects()) - before < 50  # a cycle per graph would leave 200+ nodes behind


def test_ten_thousand_training_steps_run_in_constant_memory(no_gc):
    """10,000 steps of a 20-32-2 MLP: the last 1,000 allocate less than 1 MB more than they free."""
    taugrad.manual_seed(0)
    nn.init.manual_seed(0)
    model = nn.MLP(20, [32], 2)
    opt = taugrad.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = taugrad.tensor(rng.standard_normal((4, 20)).astype(np.float32))
    y = np.array([0, 1, 1, 0])

    def step():
        loss = cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    tracemalloc.start()
    try:
        for _ in range(9_000):
            step()
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(1_000):
            step()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 1_000_000, f"the last 1,000 steps grew memory by {after - before} bytes"

"""A compiled step computes bit for bit what the eager step computes, step after step."""
from __future__ import annotations

import numpy as np
import pytest

import taugrad
from taugrad import nn, optim

from .steps import train_step as _step

STEPS = 50


def _mlp(seed: int):
    taugrad.manual_seed(seed)
    return nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 5))


OPTIMIZERS = {
    "sgd": lambda p: optim.SGD(p, lr=0.05),
    "sgd-momentum": lambda p: optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-3),
    "sgd-nesterov": lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "adam": lambda p: optim.Adam(p, lr=1e-2, weight_decay=1e-4),
    "adamw": lambda p: optim.AdamW(p, lr=1e-2),
}


def _batches(n: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    return [(taugrad.tensor(rng.standard_normal((16, 12)).astype(np.float32)),
             taugrad.tensor(rng.integers(0, 5, 16))) for _ in range(n)]


def _same_parameters(a, b) -> bool:
    return all(np.array_equal(p._data, q._data) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_fifty_steps_equal_eager_bit_for_bit(name):
    eager_model, compiled_model = _mlp(0), _mlp(0)
    eager_opt, compiled_opt = OPTIMIZERS[name](eager_model.parameters()), OPTIMIZERS[name](compiled_model.parameters())
    compiled = taugrad.compile(_step)
    for x, y in _batches(STEPS):
        expected = _step(eager_model, eager_opt, x, y)
        got = compiled(compiled_model, compiled_opt, x, y)
        assert np.array_equal(expected._data, got._data)
        assert _same_parameters(eager_model, compiled_model)
        for p, q in zip(eager_model.parameters(), compiled_model.parameters()):
            assert np.array_equal(p.grad._data, q.grad._data)
    assert compiled.stats["replays"] >= STEPS - 2  # really replayed, not eager


def test_replay_builds_no_graph_nodes(monkeypatch):
    """A replay runs array kernels only: no op's forward and no backward rule is called."""
    from taugrad.tensors import engine
    from taugrad.tensors.core import node

    model = _mlp(0)
    opt = optim.SGD(model.parameters(), lr=0.1)
    compiled = taugrad.compile(_step)
    batches = _batches(3)
    for x, y in batches[:2]:
        compiled(model, opt, x, y)
    calls = []
    monkeypatch.setattr(node, "make", lambda *a, **k: calls.append("make"))
    monkeypatch.setattr(engine, "_reverse_pass", lambda *a, **k: calls.append("backward"))
    compiled(model, opt, *batches[2])
    assert calls == []
    assert compiled.stats["replays"] == 1


def test_float64_and_manual_sgd_on_arrays():
    """A step that updates the parameters' arrays itself (no optimizer) replays too."""
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((6, 3))
    x = taugrad.tensor(rng.standard_normal((8, 6)))

    def step(w, x):
        loss = ((x @ w).tanh() ** 2).mean()
        loss.backward()
        w._data -= 0.1 * w.grad._data
        w.grad = None
        return loss

    a, b = taugrad.tensor(w0.copy(), requires_grad=True), taugrad.tensor(w0.copy(), requires_grad=True)
    compiled = taugrad.compile(step)
    for _ in range(10):
        assert np.array_equal(step(a, x)._data, compiled(b, x)._data)
        assert np.array_equal(a._data, b._data)
    assert compiled.stats["replays"] >= 8

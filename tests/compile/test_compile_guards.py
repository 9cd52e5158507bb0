"""The guard: what re-captures, what runs eagerly, what a replay re-reads."""
from __future__ import annotations

import gc
import tracemalloc
import warnings

import numpy as np
import pytest

import taugrad
import taugrad.functional as F
from taugrad import nn, optim

from .steps import train_step as _step
from taugrad.compile import CompileWarning


def _model(seed=0, dropout=0.0):
    taugrad.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(dropout), nn.Linear(16, 4))


def _data(n=16, seed=1):
    rng = np.random.default_rng(seed)
    return taugrad.tensor(rng.standard_normal((n, 8)).astype(np.float32)), taugrad.tensor(rng.integers(0, 4, n))


def _pair(make_opt, dropout=0.0):
    a, b = _model(0, dropout), _model(0, dropout)
    return (a, make_opt(a.parameters())), (b, make_opt(b.parameters()))


def _equal(a, b):
    return all(np.array_equal(p._data, q._data) for p, q in zip(a.parameters(), b.parameters()))


def test_new_shape_recaptures_and_cache_is_bounded():
    (m, opt), _ = _pair(lambda p: optim.SGD(p, lr=0.1))
    compiled = taugrad.compile(_step, cache_size=2)
    for n in (4, 4, 4, 6, 6, 8, 8, 4):
        compiled(m, opt, *_data(n))
    assert len(compiled.plans) <= 2
    assert compiled.stats["captures"] >= 4  # each new batch size captured, 4 again after eviction


def test_value_read_in_user_code_runs_eagerly_with_one_warning():
    (m1, o1), (m2, o2) = _pair(lambda p: optim.SGD(p, lr=0.1))

    def step(model, opt, x, y):
        loss = _step(model, opt, x, y)
        return loss.item()

    compiled = taugrad.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4):
            x, y = _data()
            assert step(m1, o1, x, y) == compiled(m2, o2, x, y)
    assert [w.category for w in caught] == [CompileWarning]
    assert "loss.item()" in str(caught[0].message)
    assert compiled.stats["replays"] == 0
    assert _equal(m1, m2)


def test_if_on_a_tensor_value_is_never_replayed_stale():
    (m, opt), _ = _pair(lambda p: optim.SGD(p, lr=0.1))

    def step(model, opt, x, y):
        loss = _step(model, opt, x, y)
        if loss > 100:
            return loss * 0
        return loss

    compiled = taugrad.compile(step)
    with pytest.warns(CompileWarning, match="loss > 100"):
        compiled(m, opt, *_data())
    assert compiled.eager_reason is not None


def test_dropout_draws_fresh_numbers_on_every_replay_from_eagers_stream():
    (m1, o1), (m2, o2) = _pair(lambda p: optim.SGD(p, lr=0.1), dropout=0.5)
    compiled = taugrad.compile(_step)
    x, y = _data()
    losses = []
    for i in range(6):
        taugrad.manual_seed(100 + i)
        expected = _step(m1, o1, x, y)
        taugrad.manual_seed(100 + i)
        got = compiled(m2, o2, x, y)
        assert np.array_equal(expected._data, got._data)
        assert _equal(m1, m2)
        losses.append(float(got))
    assert compiled.stats["replays"] >= 3
    assert len(set(losses)) == len(losses)  # fresh masks each step


def test_lr_scheduler_and_hyperparameter_changes_take_effect():
    (m1, o1), (m2, o2) = _pair(lambda p: optim.SGD(p, lr=0.1, momentum=0.9))
    s1, s2 = optim.lr_scheduler.StepLR(o1, step_size=2, gamma=0.5), optim.lr_scheduler.StepLR(o2, step_size=2, gamma=0.5)

    def step(model, opt, sched, x, y):
        loss = _step(model, opt, x, y)
        sched.step()
        return loss

    compiled = taugrad.compile(step)
    for i in range(8):
        x, y = _data(seed=i)
        if i == 5:
            for o in (o1, o2):
                o.param_groups[0]["momentum"] = 0.5
        step(m1, o1, s1, x, y)
        compiled(m2, o2, s2, x, y)
        assert _equal(m1, m2)
        assert o1.param_groups[0]["lr"] == o2.param_groups[0]["lr"]
    assert compiled.stats["replays"] >= 5


def test_clip_grad_norm_is_recomputed_each_replay():
    (m1, o1), (m2, o2) = _pair(lambda p: optim.SGD(p, lr=0.5))

    def step(model, opt, x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        opt.step()
        return loss

    compiled = taugrad.compile(step)
    for i in range(6):
        x, y = _data(seed=i)
        step(m1, o1, x, y)
        compiled(m2, o2, x, y)
        assert _equal(m1, m2)
    assert compiled.stats["replays"] >= 3


def test_training_flag_flip_recaptures():
    (m1, o1), (m2, o2) = _pair(lambda p: optim.SGD(p, lr=0.1), dropout=0.5)
    compiled = taugrad.compile(_step)
    x, y = _data()
    for train in (True, True, True, False, False, True):
        m1.train(train)
        m2.train(train)
        taugrad.manual_seed(7)
        expected = _step(m1, o1, x, y)
        taugrad.manual_seed(7)
        assert np.array_equal(expected._data, compiled(m2, o2, x, y)._data)
    assert len(compiled.plans) == 2 or compiled.stats["captures"] >= 3


def test_replaced_parameter_array_recaptures():
    (m1, o1), (m2, o2) = _pair(lambda p: optim.SGD(p, lr=0.1))
    compiled = taugrad.compile(_step)
    for i in range(6):
        if i == 3:
            for m in (m1, m2):
                w = m[0].weight
                w.data = taugrad.tensor(np.full(tuple(w.shape), 0.01, dtype=np.float32))
        x, y = _data(seed=i)
        _step(m1, o1, x, y)
        compiled(m2, o2, x, y)
        assert _equal(m1, m2)


def test_hooks_and_anomaly_mode_run_eagerly():
    (m, opt), _ = _pair(lambda p: optim.SGD(p, lr=0.1))
    compiled = taugrad.compile(_step)
    seen = []
    handle = m[0].register_forward_hook(lambda mod, i, o: seen.append(1))
    for _ in range(3):
        compiled(m, opt, *_data())
    assert seen == [1, 1, 1] and compiled.stats["eager"] == 3
    handle.remove()
    with taugrad.detect_anomaly():
        compiled(m, opt, *_data())
    assert compiled.stats["eager"] == 4


def test_no_memory_growth_over_500_replays():
    (m, opt), _ = _pair(lambda p: optim.Adam(p, lr=1e-3))
    compiled = taugrad.compile(_step)
    x, y = _data()
    for _ in range(5):
        compiled(m, opt, x, y)
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(20):
            compiled(m, opt, x, y)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(500):
            compiled(m, opt, x, y)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert compiled.stats["replays"] >= 520
    assert after - before < 4096, f"{after - before} bytes more after 500 replays"

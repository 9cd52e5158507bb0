"""Adversarial checks of ``taugrad.compile``: a replay must give eager's numbers, or run eagerly / raise.

Each test runs one function eagerly on a model (and optimizer) and compiled
on an identical twin, over several calls whose inputs or surroundings change
in a way the guard might miss, and compares results, parameters, gradients
and every piece of state the function touches with ``np.array_equal``.
"""
from __future__ import annotations

import sys
import threading
import warnings

import numpy as np
import pytest

import taugrad
import taugrad.functional as F
from taugrad import nn, optim
from taugrad.compile import CompileWarning
from taugrad.compile.recording import Tape

from .steps import train_step as _step


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _mlp(seed=0, dropout=0.0, bn=False):
    taugrad.manual_seed(seed)
    layers = [nn.Linear(8, 16)]
    if bn:
        layers.append(nn.BatchNorm1d(16))
    layers += [nn.ReLU(), nn.Dropout(dropout), nn.Linear(16, 4)]
    return nn.Sequential(*layers)


def _xy(n=16, seed=1, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return taugrad.tensor(rng.standard_normal((n, 8)).astype(dtype)), taugrad.tensor(rng.integers(0, 4, n))


def _arr(t):
    if t is None:
        return None
    if isinstance(t, taugrad.Tensor):
        return np.array(t._data)
    return np.asarray(t)


def _same(a, b):
    """Deep bit-for-bit equality of results (tensors, arrays, containers, scalars)."""
    if isinstance(a, (taugrad.Tensor, np.ndarray)) or isinstance(b, (taugrad.Tensor, np.ndarray)):
        x, y = _arr(a), _arr(b)
        return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f")
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b or (a != a and b != b)


def _same_state(m1, m2, o1=None, o2=None):
    """Parameters, gradients and buffers of two modules (and optimizer state) are bit-for-bit equal."""
    for (n1, p), (n2, q) in zip(m1.named_parameters(), m2.named_parameters()):
        assert n1 == n2
        assert np.array_equal(p._data, q._data), f"parameter {n1} differs"
        assert (p.grad is None) == (q.grad is None), f"grad presence of {n1} differs"
        if p.grad is not None:
            assert np.array_equal(p.grad._data, q.grad._data), f"grad of {n1} differs"
    for (n1, b1), (n2, b2) in zip(m1.named_buffers(), m2.named_buffers()):
        assert np.array_equal(b1._data, b2._data), f"buffer {n1} differs"
    if o1 is not None:
        s1, s2 = o1.state_dict(), o2.state_dict()
        assert _same(s1["param_groups"], s2["param_groups"])
        for k in s1["state"]:
            for name, v in s1["state"][k].items():
                assert _same(v, s2["state"][k][name]), f"optimizer state {k}.{name} differs"


def _twins(dropout=0.0, bn=False, make_opt=lambda p: optim.SGD(p, lr=0.1, momentum=0.9)):
    a, b = _mlp(0, dropout, bn), _mlp(0, dropout, bn)
    return (a, make_opt(a.parameters())), (b, make_opt(b.parameters()))


def _run_twins(step, first, second, calls: int):
    """``step`` eagerly on ``first`` (model, optimizer) and compiled on ``second`` with the same batches, call
    after call; results and every piece of state must be equal.  Returns the compiled function."""
    (m1, o1), (m2, o2) = first, second
    compiled = taugrad.compile(step)
    for i in range(calls):
        x, y = _xy(seed=i)
        assert _same(step(m1, o1, x, y), compiled(m2, o2, x, y)), f"call {i}"
        _same_state(m1, m2, o1, o2)
    return compiled


# ---------------------------------------------------------------------------
# inputs that change between calls
# ---------------------------------------------------------------------------


def test_same_shape_new_values_replays_new_numbers():
    (m1, o1), (m2, o2) = _twins()
    compiled = _run_twins(_step, (m1, o1), (m2, o2), calls=5)
    assert compiled.stats["replays"] >= 3


def test_numpy_array_argument_mutated_in_place_between_calls():
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, xs, y):
        return _step(model, opt, taugrad.tensor(xs), y)

    compiled = taugrad.compile(step)
    xs = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
    y = _xy()[1]
    for i in range(5):
        xs[:] = xs * 0.5 + i
        assert _same(step(m1, o1, xs, y), compiled(m2, o2, xs, y))
        _same_state(m1, m2, o1, o2)
    assert compiled.stats["replays"] >= 3


def test_input_that_is_a_view_of_another_array():
    (m1, o1), (m2, o2) = _twins()
    compiled = taugrad.compile(_step)
    big = np.random.default_rng(3).standard_normal((40, 8)).astype(np.float32)
    y = _xy()[1]
    for i in range(5):
        x = taugrad.from_numpy(big[i:i + 16])
        assert _same(_step(m1, o1, x, y), compiled(m2, o2, x, y))
        _same_state(m1, m2, o1, o2)


def test_non_contiguous_input_then_contiguous_with_the_same_shape():
    """A capture on a transposed (Fortran-ordered) input must not change the rounding of a later C-ordered one."""
    taugrad.manual_seed(0)
    w1 = taugrad.randn(64, 1)

    def step(x, w):
        h = x * 1.5  # a buffer laid out like the capture's x
        return h.sum(1), (h @ w).sum(0)

    compiled = taugrad.compile(step)
    rng = np.random.default_rng(4)
    for i in range(6):
        a = rng.standard_normal((64, 257)).astype(np.float32)
        # shape (257, 64) each time: Fortran-ordered on the capture (and call 3), C-ordered otherwise
        x = taugrad.from_numpy(np.asfortranarray(a.T) if i in (0, 3) else a.T.copy())
        assert _same(step(x, w1), compiled(x, w1)), f"call {i}"


def test_python_int_argument_that_changes():
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, x, y, k):
        opt.zero_grad()
        loss = F.cross_entropy(model(x[:k]), y[:k]) * k
        loss.backward()
        opt.step()
        return loss

    compiled = taugrad.compile(step)
    x, y = _xy()
    for k in (4, 4, 8, 8, 4, 12):
        assert _same(step(m1, o1, x, y, k), compiled(m2, o2, x, y, k))
        _same_state(m1, m2, o1, o2)


def test_list_of_tensors_and_kwarg():
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, xs, *, y, scale):
        opt.zero_grad()
        loss = sum(F.cross_entropy(model(x), y) for x in xs) * scale
        loss.backward()
        opt.step()
        return {"loss": loss, "parts": (xs[0].sum(), xs[1].mean())}

    compiled = taugrad.compile(step)
    for i in range(5):
        xs = [_xy(seed=i)[0], _xy(seed=i + 10)[0]]
        y = _xy(seed=i)[1]
        scale = 1.0 if i < 3 else 0.5
        assert _same(step(m1, o1, xs, y=y, scale=scale), compiled(m2, o2, xs, y=y, scale=scale))
        _same_state(m1, m2, o1, o2)
    assert compiled.stats["replays"] >= 2


def test_deeply_nested_container_argument_mutated_between_calls():
    """Tensors deeper than discovery looks must not become constants of the plan."""
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, batch):
        x, y = batch[0][0][0][0]
        return _step(model, opt, x, y)

    compiled = taugrad.compile(step)
    inner = [None]
    batch = [[[inner]]]
    for i in range(5):
        inner[0] = _xy(seed=i)
        assert _same(step(m1, o1, batch), compiled(m2, o2, batch)), f"call {i}"
        _same_state(m1, m2, o1, o2)


class _Batch:
    def __init__(self, x, y):
        self.x, self.y = x, y


def test_tensors_in_a_plain_object_argument_mutated_between_calls():
    """A batch object holding tensors as attributes: its tensors change between calls, the object does not."""
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, batch):
        return _step(model, opt, batch.x, batch.y)

    compiled = taugrad.compile(step)
    batch = _Batch(*_xy())
    for i in range(5):
        batch.x, batch.y = _xy(seed=i)
        assert _same(step(m1, o1, batch), compiled(m2, o2, batch)), f"call {i}"
        _same_state(m1, m2, o1, o2)


_GLOBAL_X = np.random.default_rng(5).standard_normal((16, 8)).astype(np.float32)
_GLOBAL_SCALE = 1.0


def test_tensor_made_inside_from_a_global_numpy_array_mutated_between_calls():
    (m1, o1), (m2, o2) = _twins()
    y = _xy()[1]

    def step(model, opt):
        return _step(model, opt, taugrad.tensor(_GLOBAL_X), y)

    compiled = taugrad.compile(step)
    for i in range(5):
        _GLOBAL_X[:] = _GLOBAL_X * 0.5 + i
        assert _same(step(m1, o1), compiled(m2, o2)), f"call {i}"
        _same_state(m1, m2, o1, o2)


def test_global_python_float_changed_between_calls():
    global _GLOBAL_SCALE
    (m1, o1), (m2, o2) = _twins()
    x, y = _xy()

    def step(model, opt):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) * _GLOBAL_SCALE
        loss.backward()
        opt.step()
        return loss

    compiled = taugrad.compile(step)
    try:
        for i in range(5):
            _GLOBAL_SCALE = 1.0 + i
            assert _same(step(m1, o1), compiled(m2, o2)), f"call {i}"
            _same_state(m1, m2, o1, o2)
    finally:
        _GLOBAL_SCALE = 1.0


def test_closure_python_float_changed_between_calls():
    (m1, o1), (m2, o2) = _twins()
    x, y = _xy()
    lr = 0.1

    def make(model):
        def step():
            with taugrad.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
            return model(x).sum()
        return step

    for m in (m1, m2):
        F.cross_entropy(m(x), y).backward()
    eager, compiled = make(m1), taugrad.compile(make(m2))
    for i in range(5):
        lr = 0.1 / (i + 1)
        assert _same(eager(), compiled()), f"call {i}"
        _same_state(m1, m2)


# ---------------------------------------------------------------------------
# state changed inside the function
# ---------------------------------------------------------------------------


def test_batchnorm_running_stats_and_count_over_calls():
    (m1, o1), (m2, o2) = _twins(bn=True)
    compiled = _run_twins(_step, (m1, o1), (m2, o2), calls=6)
    assert int(m2[1].num_batches_tracked._data) == 6
    assert compiled.stats["replays"] >= 4
    m1.eval(), m2.eval()
    for i in range(3):
        x, _ = _xy(seed=20 + i)
        assert _same(m1(x), m2(x))


def test_batchnorm_cumulative_average_runs_eagerly_or_matches():
    a, b = _mlp(bn=True), _mlp(bn=True)
    a[1].momentum = b[1].momentum = None
    o1, o2 = optim.SGD(a.parameters(), lr=0.1), optim.SGD(b.parameters(), lr=0.1)
    compiled = taugrad.compile(_step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for i in range(4):
            x, y = _xy(seed=i)
            assert _same(_step(a, o1, x, y), compiled(b, o2, x, y))
            _same_state(a, b, o1, o2)


def test_manual_sgd_under_no_grad_and_grad_zero_():
    a, b = _mlp(), _mlp()

    def step(model, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with taugrad.no_grad():
            for p in model.parameters():
                p -= 0.05 * p.grad
                p.grad.zero_()
        return loss

    compiled = taugrad.compile(step)
    for i in range(6):
        x, y = _xy(seed=i)
        assert _same(step(a, x, y), compiled(b, x, y))
        _same_state(a, b)
    assert compiled.stats["replays"] >= 3


def test_zero_grad_set_to_none_false_and_two_micro_batches():
    (m1, o1), (m2, o2) = _twins(make_opt=lambda p: optim.Adam(p, lr=1e-2))

    def step(model, opt, x, y):
        opt.zero_grad(set_to_none=False)
        total = 0
        for part in (slice(0, 8), slice(8, 16)):
            loss = F.cross_entropy(model(x[part]), y[part]) / 2
            loss.backward()
            total = total + loss.detach()
        opt.step()
        return total

    compiled = _run_twins(step, (m1, o1), (m2, o2), calls=6)
    assert compiled.stats["replays"] >= 3


def test_gradient_accumulation_across_calls_without_zero_grad():
    a, b = _mlp(), _mlp()

    def step(model, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    compiled = taugrad.compile(step)
    for i in range(6):
        x, y = _xy(seed=i)
        assert _same(step(a, x, y), compiled(b, x, y))
        _same_state(a, b)


def test_backward_twice_with_retain_graph():
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward(retain_graph=True)
        (loss * 0.5).backward()
        opt.step()
        return loss

    compiled = _run_twins(step, (m1, o1), (m2, o2), calls=5)


def test_in_place_update_of_an_input_tensor():
    def step(x, acc):
        acc.add_(x * 2)
        x.mul_(0.5)
        return acc.sum()

    compiled = taugrad.compile(step)
    rng = np.random.default_rng(0)
    acc1, acc2 = taugrad.zeros(4, 3), taugrad.zeros(4, 3)
    for i in range(5):
        a = rng.standard_normal((4, 3)).astype(np.float32)
        x1, x2 = taugrad.tensor(a), taugrad.tensor(a)
        assert _same(step(x1, acc1), compiled(x2, acc2))
        assert _same(x1, x2) and _same(acc1, acc2)


def test_same_array_passed_as_two_arguments_then_distinct():
    """Aliasing of two inputs that a capture saw as one memory must not leak into a replay on distinct arrays."""
    def step(a, b):
        a.mul_(2.0)
        return (b + 1.0).sum(), b * 3.0

    compiled = taugrad.compile(step)
    rng = np.random.default_rng(0)
    for i in range(5):
        base = rng.standard_normal(6).astype(np.float32)
        if i in (0, 3):
            a1 = b1 = taugrad.tensor(base)
            a2 = b2 = taugrad.tensor(base)
        else:
            a1, b1 = taugrad.tensor(base), taugrad.tensor(base + 1)
            a2, b2 = taugrad.tensor(base), taugrad.tensor(base + 1)
        assert _same(step(a1, b1), compiled(a2, b2)), f"call {i}"
        assert _same(a1, a2) and _same(b1, b2)


def test_p_data_replacement_inside_runs_eagerly():
    a, b = _mlp(), _mlp()
    x, y = _xy()

    def step(model):
        w = model[0].weight
        w.data = w.data * 0.9
        return model(x).sum()

    compiled = taugrad.compile(step)
    with pytest.warns(CompileWarning):
        for i in range(4):
            assert _same(step(a), compiled(b))
            _same_state(a, b)


# ---------------------------------------------------------------------------
# optimizer and module changes between calls
# ---------------------------------------------------------------------------


def test_requires_grad_false_on_a_parameter_between_calls():
    (m1, o1), (m2, o2) = _twins()
    compiled = taugrad.compile(_step)
    for i in range(7):
        if i == 3:
            for m in (m1, m2):
                m[0].weight.requires_grad_(False)
        if i == 5:
            for m in (m1, m2):
                m[0].weight.requires_grad_(True)
        x, y = _xy(seed=i)
        assert _same(_step(m1, o1, x, y), compiled(m2, o2, x, y)), f"call {i}"
        _same_state(m1, m2, o1, o2)


def test_add_param_group_between_calls():
    a, b = _mlp(), _mlp()
    o1 = optim.SGD(a[0].parameters(), lr=0.1, momentum=0.9)
    o2 = optim.SGD(b[0].parameters(), lr=0.1, momentum=0.9)
    compiled = taugrad.compile(_step)
    for i in range(6):
        if i == 3:
            o1.add_param_group({"params": list(a[3].parameters()), "lr": 0.05})
            o2.add_param_group({"params": list(b[3].parameters()), "lr": 0.05})
        x, y = _xy(seed=i)
        assert _same(_step(a, o1, x, y), compiled(b, o2, x, y)), f"call {i}"
        _same_state(a, b, o1, o2)


def test_lr_changed_and_new_optimizer_object_as_argument():
    (m1, o1), (m2, o2) = _twins()
    compiled = taugrad.compile(_step)
    for i in range(8):
        if i == 2:
            o1.param_groups[0]["lr"] = o2.param_groups[0]["lr"] = 0.01
        if i == 4:
            o1, o2 = optim.Adam(m1.parameters(), lr=1e-3), optim.Adam(m2.parameters(), lr=1e-3)
        x, y = _xy(seed=i)
        assert _same(_step(m1, o1, x, y), compiled(m2, o2, x, y)), f"call {i}"
        _same_state(m1, m2, o1, o2)


def test_global_model_and_optimizer_reassigned_between_calls():
    """Rebinding the names the function reads (a notebook re-running its setup cell) must not replay the old objects."""
    env1, env2 = {}, {}

    def setup(env, kind):
        env["model"] = _mlp(0)
        env["opt"] = (optim.SGD if kind == 0 else optim.Adam)(env["model"].parameters(), lr=0.01)

    x, y = _xy()

    def make(env):
        def step():
            env_opt = env["opt"]
            return _step(env["model"], env_opt, x, y)
        return step

    # closures over a dict: the objects are reached through a container of the closure
    eager, compiled = make(env1), taugrad.compile(make(env2))
    for i in range(6):
        if i in (0, 3):
            setup(env1, i // 3), setup(env2, i // 3)
        assert _same(eager(), compiled()), f"call {i}"
        _same_state(env1["model"], env2["model"], env1["opt"], env2["opt"])


def test_closure_cell_model_rebound_between_calls():
    x, y = _xy()
    model = opt = None

    def step():
        return _step(model, opt, x, y)

    compiled_holder = {}
    results = []
    for i in range(6):
        if i in (0, 3):
            model = _mlp(0)
            opt = optim.SGD(model.parameters(), lr=0.1)
            twin = _mlp(0)
            twin_opt = optim.SGD(twin.parameters(), lr=0.1)
        expected = _step(twin, twin_opt, x, y)
        if "c" not in compiled_holder:
            compiled_holder["c"] = taugrad.compile(step)
        got = compiled_holder["c"]()
        results.append(_same(expected, got))
        _same_state(twin, model, twin_opt, opt)
    assert all(results)


def test_eval_train_flip_and_dropout_seeded_and_unseeded():
    (m1, o1), (m2, o2) = _twins(dropout=0.3)
    compiled = taugrad.compile(_step)
    x, y = _xy()
    for i, train in enumerate((True, True, False, True, False, True)):
        m1.train(train), m2.train(train)
        taugrad.manual_seed(50 + i)
        expected = _step(m1, o1, x, y)
        taugrad.manual_seed(50 + i)
        assert _same(expected, compiled(m2, o2, x, y)), f"call {i}"
        _same_state(m1, m2, o1, o2)


def test_dropout_probability_changed_between_calls():
    (m1, o1), (m2, o2) = _twins(dropout=0.1)
    compiled = taugrad.compile(_step)
    x, y = _xy()
    for i in range(5):
        if i == 3:
            m1[2].p = m2[2].p = 0.9
        taugrad.manual_seed(60 + i)
        expected = _step(m1, o1, x, y)
        taugrad.manual_seed(60 + i)
        assert _same(expected, compiled(m2, o2, x, y)), f"call {i}"
        _same_state(m1, m2, o1, o2)


def test_generator_argument_draws_the_eager_stream():
    def step(x, g):
        noise = taugrad.randn(*x.shape, generator=g)
        return (x + noise).sum(), taugrad.rand(3, generator=g)

    compiled = taugrad.compile(step)
    g1, g2 = taugrad.Generator().manual_seed(1), taugrad.Generator().manual_seed(1)
    for i in range(5):
        x = _xy(seed=i)[0]
        if i == 3:
            g1.manual_seed(9), g2.manual_seed(9)
        assert _same(step(x, g1), compiled(x, g2)), f"call {i}"


def test_new_generator_object_each_call():
    def step(x, g):
        return x + taugrad.randn(*x.shape, generator=g)

    compiled = taugrad.compile(step)
    x = _xy()[0]
    for i in range(4):
        g1, g2 = taugrad.Generator().manual_seed(i), taugrad.Generator().manual_seed(i)
        assert _same(step(x, g1), compiled(x, g2)), f"call {i}"


# ---------------------------------------------------------------------------
# what the function returns / reads
# ---------------------------------------------------------------------------


def test_returns_dict_tuple_and_python_float():
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, x, y):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return {"loss": loss, "pair": (logits.detach(), logits.argmax(1)), "n": x.shape[0] * 0.5}

    compiled = _run_twins(step, (m1, o1), (m2, o2), calls=5)


def test_returned_intermediate_mutated_by_user_does_not_leak_into_next_call():
    a, b = _mlp(), _mlp()

    def fwd(model, x):
        h = model[0](x)
        return h, model(x).detach().sum()

    compiled = taugrad.compile(fwd)
    for i in range(5):
        x = _xy(seed=i)[0]
        e, c = fwd(a, x), compiled(b, x)
        assert _same(e, c)
        e[0]._data[...] = 7.0
        c[0]._data[...] = 7.0


def test_item_only_on_some_calls_goes_eager_not_stale():
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, x, y, report):
        loss = _step(model, opt, x, y)
        if report:
            return loss.item()
        return loss

    compiled = taugrad.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for i in range(12):
            x, y = _xy(seed=i)
            report = i % 5 == 4
            assert _same(step(m1, o1, x, y, report), compiled(m2, o2, x, y, report)), f"call {i}"
            _same_state(m1, m2, o1, o2)


_STEP_COUNT = [0]


def test_item_only_every_nth_call_via_a_global_counter():
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, x, y):
        loss = _step(model, opt, x, y)
        _STEP_COUNT[0] += 1
        if _STEP_COUNT[0] % 4 == 0:
            return loss.item()
        return loss

    compiled = taugrad.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for i in range(9):
            x, y = _xy(seed=i)
            _STEP_COUNT[0] = i
            expected = step(m1, o1, x, y)
            _STEP_COUNT[0] = i
            assert _same(expected, compiled(m2, o2, x, y)), f"call {i}"
            _same_state(m1, m2, o1, o2)


def test_exception_on_third_call_leaves_a_usable_function():
    (m1, o1), (m2, o2) = _twins()

    def step(model, opt, x, y, fail):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if fail:
            raise ValueError("boom")
        loss.backward()
        opt.step()
        return loss

    compiled = taugrad.compile(step)
    for i in range(6):
        x, y = _xy(seed=i)
        fail = i == 2
        if fail:
            with pytest.raises(ValueError):
                step(m1, o1, x, y, True)
            with pytest.raises(ValueError):
                compiled(m2, o2, x, y, True)
        else:
            assert _same(step(m1, o1, x, y, False), compiled(m2, o2, x, y, False)), f"call {i}"
        _same_state(m1, m2, o1, o2)
    # numpy is itself again after the failed capture
    assert type(np.zeros(3)) is np.ndarray and np.zeros.__module__ == "numpy"


def test_target_out_of_range_on_a_replay_raises_like_eager():
    (m1, o1), (m2, o2) = _twins()
    compiled = taugrad.compile(_step)
    for i in range(5):
        x, y = _xy(seed=i)
        if i == 3:
            y = taugrad.tensor(np.full(16, 9))
            with pytest.raises(Exception) as e1:
                _step(m1, o1, x, y)
            with pytest.raises(Exception) as e2:
                compiled(m2, o2, x, y)
            assert type(e1.value) is type(e2.value)
        else:
            assert _same(_step(m1, o1, x, y), compiled(m2, o2, x, y))
        _same_state(m1, m2, o1, o2)


# ---------------------------------------------------------------------------
# several compiled functions
# ---------------------------------------------------------------------------


def test_two_compiled_functions_sharing_one_model():
    (m1, o1), (m2, o2) = _twins(make_opt=lambda p: optim.Adam(p, lr=1e-2))

    def evaluate(model, x):
        return model(x).sum(1)

    c_train, c_eval = taugrad.compile(_step), taugrad.compile(evaluate)
    for i in range(6):
        x, y = _xy(seed=i)
        assert _same(_step(m1, o1, x, y), c_train(m2, o2, x, y))
        with taugrad.no_grad():
            assert _same(evaluate(m1, x), c_eval(m2, x))
        assert _same(evaluate(m1, x).detach(), c_eval(m2, x).detach())
        _same_state(m1, m2, o1, o2)


def test_compiled_function_calling_a_compiled_function():
    (m1, o1), (m2, o2) = _twins()

    def inner(model, x):
        return model(x)

    c_inner = taugrad.compile(inner)

    def outer_eager(model, opt, x, y):
        opt.zero_grad()
        loss = F.cross_entropy(inner(model, x), y)
        loss.backward()
        opt.step()
        return loss

    def outer_compiled(model, opt, x, y):
        opt.zero_grad()
        loss = F.cross_entropy(c_inner(model, x), y)
        loss.backward()
        opt.step()
        return loss

    c_outer = taugrad.compile(outer_compiled)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for i in range(5):
            x, y = _xy(seed=i)
            assert _same(outer_eager(m1, o1, x, y), c_outer(m2, o2, x, y)), f"call {i}"
            _same_state(m1, m2, o1, o2)


def test_recursive_compiled_function():
    def f(x, n):
        if n == 0:
            return x * 2.0
        return compiled(x + 1.0, n - 1) * 0.5

    def g(x, n):
        if n == 0:
            return x * 2.0
        return g(x + 1.0, n - 1) * 0.5

    compiled = taugrad.compile(f)
    for i in range(4):
        x = _xy(seed=i)[0]
        assert _same(g(x, 2), compiled(x, 2))


# ---------------------------------------------------------------------------
# threads
# ---------------------------------------------------------------------------


def test_two_threads_each_with_their_own_model():
    # The twins are built before the threads start: building one reseeds the process-wide default generator
    # (as torch.manual_seed does), so two threads building at once draw each other's numbers and a thread's
    # twins start with different weights, whatever compile does.
    models = [_twins(make_opt=lambda p: optim.Adam(p, lr=1e-2)) for _ in range(2)]
    start = threading.Barrier(2)
    results = {}

    def worker(k):
        try:
            (m1, o1), (m2, o2) = models[k]
            compiled = taugrad.compile(_step)
            start.wait(10)  # both threads step (and capture) at the same time
            ok = True
            for i in range(20):
                x, y = _xy(seed=i + 100 * k)
                ok &= _same(_step(m1, o1, x, y), compiled(m2, o2, x, y))
                ok &= all(np.array_equal(p._data, q._data) for p, q in zip(m1.parameters(), m2.parameters()))
            results[k] = ok
        except Exception as e:  # pragma: no cover - reported below
            results[k] = e

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: True, 1: True}


class _Gate:
    """Called inside a step: on its ``pause_at``-th call, says so and waits until it is let go."""

    def __init__(self, pause_at: int) -> None:
        self.calls = 0
        self.pause_at = pause_at
        self.inside, self.go = threading.Event(), threading.Event()

    def __call__(self) -> None:
        self.calls += 1
        if self.calls == self.pause_at:
            self.inside.set()
            assert self.go.wait(10)


def test_captures_overlapping_in_two_threads_record_all_of_each_step():
    """A starts capturing, B starts capturing, A finishes and replays, then B finishes and replays.

    Each capture pauses between its forward and its backward, so the other thread's swaps are put in and
    taken out around it: the recording functions must stay in place until the last capture ends (else
    ``opt.step()`` after the pause runs unrecorded and the replays never update the parameters).
    """
    gates = [_Gate(pause_at=2), _Gate(pause_at=2)]  # call 1: the eager twin, call 2: the capture
    results = {}

    def worker(k):
        gate = gates[k]

        def step(model, opt, x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            gate()
            loss.backward()
            opt.step()
            return loss

        try:
            (m1, o1), (m2, o2) = models[k]
            compiled = taugrad.compile(step)
            ok = True
            for i in range(5):
                x, y = _xy(seed=i + 100 * k)
                ok &= _same(step(m1, o1, x, y), compiled(m2, o2, x, y))
                ok &= all(np.array_equal(p._data, q._data) for p, q in zip(m1.parameters(), m2.parameters()))
            results[k] = (ok, compiled.stats["replays"] >= 2)
        except Exception as e:  # pragma: no cover - reported below
            results[k] = e

    models = [_twins(make_opt=lambda p: optim.Adam(p, lr=1e-2)) for _ in range(2)]
    a, b = (threading.Thread(target=worker, args=(k,)) for k in range(2))
    a.start()
    assert gates[0].inside.wait(10)  # A is inside its capture
    b.start()
    assert gates[1].inside.wait(10)  # B too
    gates[0].go.set()
    a.join()  # A's capture ended (and A replayed) while B's is still running
    gates[1].go.set()
    b.join()
    assert results == {0: (True, True), 1: (True, True)}


def test_a_capture_paused_while_numbering_its_tape_does_not_break_another_threads():
    """Thread A is switched out inside ``Tape()`` (forced with a trace function); B makes a tape meanwhile."""
    init = Tape.__init__.__code__
    paused, go = threading.Event(), threading.Event()
    numbers = {}

    def pause_in_python_called_by_tape_init(frame, event, arg):
        if event == "call" and frame.f_back is not None and frame.f_back.f_code is init:
            paused.set()
            go.wait(10)

    def first():
        sys.settrace(pause_in_python_called_by_tape_init)
        try:
            numbers["A"] = Tape().number
        finally:
            sys.settrace(None)
            paused.set()  # also when Tape() called no Python at all

    t = threading.Thread(target=first)
    t.start()
    assert paused.wait(10)
    try:
        numbers["B"] = Tape().number
    finally:
        go.set()
        t.join()
    assert set(numbers) == {"A", "B"} and numbers["A"] != numbers["B"]


def test_other_thread_gets_plain_numpy_during_a_capture():
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def other():
        inside.wait(10)
        seen["zeros"] = type(np.zeros(3))
        seen["asarray"] = type(np.asarray([1.0, 2.0]))
        a = np.arange(4.0)
        seen["sum"] = type(a + a)
        done.set()

    def step(x):
        y = x * 2.0
        inside.set()
        done.wait(10)
        return (y + taugrad.tensor(np.zeros(3, dtype=np.float32))).sum()

    t = threading.Thread(target=other)
    t.start()
    compiled = taugrad.compile(step)
    x = taugrad.tensor(np.ones(3, dtype=np.float32))
    out = compiled(x)
    t.join()
    assert seen == {"zeros": np.ndarray, "asarray": np.ndarray, "sum": np.ndarray}
    assert _same(out, step(x))


# ---------------------------------------------------------------------------
# dtypes, sizes, cache
# ---------------------------------------------------------------------------


def test_integer_and_bool_tensors():
    def step(a, mask):
        b = a * 3 + 1
        c = (b % 5) * mask
        return c.sum(), (b > 4), c.max()

    compiled = taugrad.compile(step)
    rng = np.random.default_rng(0)
    for i in range(5):
        a = taugrad.tensor(rng.integers(-50, 50, (6, 7)))
        mask = taugrad.tensor(rng.integers(0, 2, (6, 7)).astype(bool))
        assert _same(step(a, mask), compiled(a, mask))


def test_float64_model():
    a, b = _mlp(), _mlp()
    a.double(), b.double()
    o1, o2 = optim.Adam(a.parameters(), lr=1e-2), optim.Adam(b.parameters(), lr=1e-2)
    compiled = taugrad.compile(_step)
    for i in range(5):
        x, y = _xy(seed=i, dtype=np.float64)
        assert _same(_step(a, o1, x, y), compiled(b, o2, x, y))
        _same_state(a, b, o1, o2)


def test_float32_then_float64_input_recaptures():
    def step(x):
        return (x * 0.1).sum()

    compiled = taugrad.compile(step)
    for i in range(6):
        dtype = np.float32 if i % 2 == 0 else np.float64
        x = _xy(seed=i, dtype=dtype)[0]
        assert _same(step(x), compiled(x))


def test_empty_batch():
    (m1, o1), (m2, o2) = _twins()

    def fwd(model, x):
        return model(x), model(x).sum()

    compiled = taugrad.compile(fwd)
    for n in (0, 0, 4, 0):
        x = _xy(n=n)[0]
        assert _same(fwd(m1, x), compiled(m2, x))


def test_shape_seen_before_after_eviction_cache_size_one():
    (m1, o1), (m2, o2) = _twins(make_opt=lambda p: optim.Adam(p, lr=1e-2))
    compiled = taugrad.compile(_step, cache_size=1)
    for i, n in enumerate((4, 4, 8, 8, 4, 4, 8)):
        x, y = _xy(n=n, seed=i)
        assert _same(_step(m1, o1, x, y), compiled(m2, o2, x, y)), f"call {i}"
        _same_state(m1, m2, o1, o2)


def test_alternating_shapes_within_the_cache():
    (m1, o1), (m2, o2) = _twins(make_opt=lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True))
    compiled = taugrad.compile(_step, cache_size=4)
    for i in range(10):
        x, y = _xy(n=(4, 8, 12)[i % 3], seed=i)
        assert _same(_step(m1, o1, x, y), compiled(m2, o2, x, y)), f"call {i}"
        _same_state(m1, m2, o1, o2)


def test_a_function_reaching_too_many_objects_runs_eagerly_with_one_warning(monkeypatch):
    """Past the discovery budget a tensor could hide where the walk did not look: eager, said once."""
    from taugrad.compile import state

    monkeypatch.setattr(state, "MAX_VISITED", 50)
    (m1, o1), (m2, o2) = _twins()
    crowd = [_Batch(i, [i]) for i in range(60)]

    def step(model, opt, x, y, crowd):
        return _step(model, opt, x, y)

    compiled = taugrad.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(3):
            x, y = _xy(seed=i)
            assert _same(step(m1, o1, x, y, crowd), compiled(m2, o2, x, y, crowd))
    assert [w.category for w in caught] == [CompileWarning]
    assert "more than 50 objects" in str(caught[0].message)
    assert compiled.stats["replays"] == 0

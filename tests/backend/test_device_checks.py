"""Index checks on a device never make the host wait, and never let a bad index through unseen.

On a GPU, ``bool(flag)`` waits for every kernel queued before it.  A
training step must not read anything back: the checks of class targets and
embedding indices stay on the device, and their error is raised at the next
read of a value (``.item()``, printing, ``.cpu()``...), as torch's
device-side asserts are.  The strict fake records every device-to-host read
(:func:`strict_backend.recording_syncs`), so these tests count them on every
machine; the ``cuda``-marked runs repeat the error tests on CuPy.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

import taugrad
import taugrad.nn.functional as F
from taugrad import nn, optim
from taugrad.tensors.core import device_checks
from taugrad.tensors.ops import losses

from . import strict_backend


class TinyGPT(nn.Module):
    """Token and position embeddings, one causal attention block, a language-model head."""

    def __init__(self, vocab=11, block=6, width=8):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(block, width)
        self.norm, self.qkv, self.head = nn.LayerNorm(width), nn.Linear(width, 3 * width), nn.Linear(width, vocab)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(taugrad.arange(T, device=idx.device))
        q, k, v = self.qkv(self.norm(x)).split(x.shape[-1], dim=-1)
        x = x + F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.head(x)


def _mlp():
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 5))


STEPS = {
    "mlp-sgd": (_mlp, lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4),
                lambda r: (r.standard_normal((8, 12)).astype(np.float32), r.integers(0, 5, 8))),
    "mlp-adamw": (_mlp, lambda p: optim.AdamW(p, lr=1e-3),
                  lambda r: (r.standard_normal((8, 12)).astype(np.float32), r.integers(0, 5, 8))),
    "gpt-adamw": (TinyGPT, lambda p: optim.AdamW(p, lr=1e-3),
                  lambda r: (r.integers(0, 11, (4, 6)), r.integers(0, 11, (4, 6)))),
}


def _loss(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


@pytest.mark.parametrize("name", sorted(STEPS))
def test_a_training_step_reads_nothing_back_from_the_device(fake_cuda, name):
    make_model, make_optimizer, make_batch = STEPS[name]
    taugrad.manual_seed(0)
    model = make_model().to("cuda")
    optimizer = make_optimizer(model.parameters())
    x, y = (taugrad.tensor(a, device="cuda") for a in make_batch(np.random.default_rng(0)))
    for _ in range(2):  # the second step has the optimizer's state
        with strict_backend.recording_syncs() as syncs:
            loss = _loss(model, x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        assert syncs == [], f"{name}: the step read values back from the device at {syncs}"
        assert np.isfinite(loss.item())


def test_a_cnn_step_reads_nothing_back_from_the_device(fake_cuda):
    """Max-pooling gives a tile holding NaN PyTorch's index (its last NaN) on the device, without asking the host."""
    taugrad.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3, padding=1),
                          nn.ReLU(), nn.MaxPool2d(3, stride=2, padding=1), nn.Flatten(), nn.Linear(16, 3)).to("cuda")
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    x = taugrad.tensor(rng.standard_normal((2, 1, 8, 8)).astype(np.float32), device="cuda")
    y = taugrad.tensor(rng.integers(0, 3, 2), device="cuda")
    with strict_backend.recording_syncs() as syncs:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert syncs == [], syncs


#: ops with integer indices (and full max/min, max-pooling), each as ``fn(x, device) -> output``
INDEXED = {
    "getitem": lambda x, d: x[taugrad.tensor([[0, 3], [-1, 2]], device=d)],
    "getitem-two-arrays": lambda x, d: x[taugrad.tensor([1, -2], device=d), :, taugrad.tensor([0, 2], device=d)],
    "getitem-ellipsis": lambda x, d: x[..., taugrad.tensor([2, -3, 0], device=d)],
    "setitem": lambda x, d: _written(x, (taugrad.tensor([0, -1], device=d),), taugrad.ones(2, 3, 3, device=d)),
    "gather": lambda x, d: x.gather(1, taugrad.tensor([[[0, 2, 1]], [[-1, 0, 0]], [[1, 1, 2]], [[2, 0, -3]]],
                                                      device=d)),
    "scatter_add": lambda x, d: x.scatter_add(2, taugrad.tensor([[[0], [2], [1]]] * 4, device=d),
                                              x[:, :, :1] * 2),
    "index_select": lambda x, d: x.index_select(0, taugrad.tensor([3, -4, 1], device=d)),
    "index_fill": lambda x, d: x.index_fill(2, taugrad.tensor([0, -1], device=d), 0.5),
    "take": lambda x, d: x.take(taugrad.tensor([[0, 35], [-36, 7]], device=d)),
    "max": lambda x, d: x.max() * x.min(),
    "max_pool2d": lambda x, d: F.max_pool2d(x.reshape(1, 4, 3, 3), 2, stride=1),
    "max_pool2d-tiles": lambda x, d: F.max_pool2d(x.reshape(1, 1, 6, 6), 2),
}


def _written(x, key, value):
    y = x * 1
    y[key] = value
    return y


def _indexed_run(name, device, nan=False):
    data = np.random.default_rng(3).standard_normal((4, 3, 3))
    if nan:
        data[0, 0, 0] = data[1, 2, 1] = data[1, 2, 2] = np.nan
    x = taugrad.tensor(data, device=device, requires_grad=True)
    out = INDEXED[name](x, device)
    out.backward(taugrad.ones(out.shape, dtype=out.dtype, device=device))
    return out.detach().cpu().numpy(), x.grad.cpu().numpy()


@pytest.mark.parametrize("name", sorted(INDEXED))
def test_indexed_ops_read_nothing_back_and_equal_the_cpu(fake_cuda, name):
    with strict_backend.recording_syncs() as syncs:
        data = np.random.default_rng(3).standard_normal((4, 3, 3))
        x = taugrad.tensor(data, device="cuda", requires_grad=True)
        out = INDEXED[name](x, "cuda")
        out.backward(taugrad.ones(out.shape, dtype=out.dtype, device="cuda"))
    assert syncs == [], f"{name} read values back from the device at {syncs}"
    for got, want in zip(_indexed_run(name, "cuda"), _indexed_run(name, "cpu")):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["max", "max_pool2d", "max_pool2d-tiles"])
def test_nan_takes_the_gradient_on_the_device_as_on_the_cpu(device_backend, name):
    """PyTorch's rule where a window (or the whole tensor) holds NaN: its last NaN gets the gradient."""
    (got, got_grad), (want, want_grad) = _indexed_run(name, "cuda", nan=True), _indexed_run(name, "cpu", nan=True)
    assert np.isnan(want).any()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_grad, want_grad)


BAD_INDEX = {
    "getitem": (lambda x, d: x[taugrad.tensor([0, 4], device=d)], "index: an index is out of range for dim 0 of size 4"),
    "getitem-negative": (lambda x, d: x[:, taugrad.tensor([-4], device=d)],
                         "index: an index is out of range for dim 1 of size 3"),
    "setitem": (lambda x, d: _written(x, (0, taugrad.tensor([3], device=d)), 1.0),
                "index: an index is out of range for dim 1 of size 3"),
    "gather": (lambda x, d: x.gather(2, taugrad.tensor([[[3]]] * 4, device=d)),
               "gather: index out of range for dim 2 of size 3"),
    "scatter_add": (lambda x, d: x.scatter_add(0, taugrad.tensor([[[-5]]], device=d), x[:1, :1, :1]),
                    "scatter_add: index out of range for dim 0 of size 4"),
    "index_select": (lambda x, d: x.index_select(1, taugrad.tensor([0, 7], device=d)),
                     "index_select: index out of range for dim 1 of size 3"),
    "index_fill": (lambda x, d: x.index_fill(0, taugrad.tensor([9], device=d), 0.0),
                   "index_fill: index out of range for dim 0 of size 4"),
    "take": (lambda x, d: x.take(taugrad.tensor([36], device=d)), "take: index out of range for a tensor of 36"),
    "index_add": (lambda x, d: x.index_add(0, taugrad.tensor([7], device=d), taugrad.ones(1, 3, 3, device=d)),
                  "index_add: index out of range for dim 0 of size 4"),
}


@pytest.mark.parametrize("name", sorted(BAD_INDEX))
def test_a_bad_index_on_a_device_raises_at_the_next_read(device_backend, name):
    """CuPy wraps an index outside the array around: the check must run, on the device, and surface at a read."""
    fn, message = BAD_INDEX[name]
    x = taugrad.randn(4, 3, 3, device="cuda", requires_grad=True)
    out = fn(x, "cuda")
    out.sum().backward()
    with pytest.raises(IndexError, match=re.escape(message)):
        out.sum().item()
    with pytest.raises(IndexError, match=r"^[a-z_]+: "):
        fn(taugrad.randn(4, 3, 3), "cpu")  # the CPU raises in the op itself, naming it


def test_a_bad_class_target_on_a_device_raises_at_the_next_read(device_backend):
    logits = taugrad.randn(4, 10, device="cuda", requires_grad=True)
    target = taugrad.tensor([1, 12, 3, 0], device="cuda")
    loss = F.cross_entropy(logits, target)  # no error yet: asking would wait for the device
    loss.backward()
    with pytest.raises(ValueError, match=r"cross_entropy: a target is out of range for 10 classes \(0 to 9\)"):
        loss.item()
    assert np.isfinite(F.cross_entropy(logits, taugrad.tensor([1, 2, 3, 0], device="cuda")).item())


@pytest.mark.parametrize("read", ["item", "print", "cpu", "tolist", "bool", "synchronize", "dlpack"])
def test_every_read_of_a_value_raises_the_pending_error(device_backend, read):
    weight = taugrad.randn(5, 3, device="cuda")
    out = F.embedding(taugrad.tensor([[0, 5]], device="cuda"), weight)
    reads = {"item": lambda: out.sum().item(), "print": lambda: str(out), "cpu": lambda: out.cpu(),
             "tolist": lambda: out.tolist(), "bool": lambda: bool(out.sum() > 0),
             "synchronize": taugrad.cuda.synchronize, "dlpack": lambda: out.__dlpack__()}
    with pytest.raises(IndexError, match=r"embedding: an index is out of range for 5 rows"):
        reads[read]()


def test_negative_indices_and_targets_are_caught_too(device_backend):
    layer = nn.Embedding(4, 2).to("cuda")
    with pytest.raises(IndexError, match="out of range for 4 rows"):
        layer(taugrad.tensor([-1, 2], device="cuda")).sum().item()
    nll = F.nll_loss(taugrad.randn(3, 4, device="cuda").log_softmax(1), taugrad.tensor([0, -3, 1], device="cuda"))
    with pytest.raises(ValueError, match=r"nll_loss: a target is out of range for 4 classes"):
        nll.item()


def test_a_failed_check_is_kept_until_read_even_after_good_steps(device_backend):
    logits = taugrad.randn(2, 3, device="cuda")
    F.cross_entropy(logits, taugrad.tensor([0, 3], device="cuda"))
    for _ in range(3):
        loss = F.cross_entropy(logits, taugrad.tensor([0, 1], device="cuda"))
    with pytest.raises(ValueError, match="out of range for 3 classes"):
        loss.item()
    assert np.isfinite(loss.item())  # raised once; the stand-in values of the bad call are gone with it


def test_the_cpu_still_raises_at_once():
    with pytest.raises(ValueError, match="target 12 is out of range for 10 classes"):
        F.cross_entropy(taugrad.randn(2, 10), taugrad.tensor([1, 12]))
    with pytest.raises(IndexError, match="embedding: index out of range for 5 rows: min 0, max 5"):
        F.embedding(taugrad.tensor([0, 5]), taugrad.randn(5, 3))


def _cross_entropy_both(logits, target, **kwargs):
    """Loss and input gradient on the CPU and on the device, for the same float64 inputs."""
    results = []
    for device in ("cpu", "cuda"):
        x = taugrad.tensor(logits, device=device, requires_grad=True)
        loss = F.cross_entropy(x, taugrad.tensor(target, device=device), **kwargs)
        loss.backward(taugrad.ones(loss.shape, dtype=loss.dtype, device=device) * 0.7)
        results.append((loss.detach().cpu().numpy(), x.grad.cpu().numpy()))
    return results


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 255])
def test_ignored_targets_on_a_device_count_nowhere_as_on_the_cpu(device_backend, reduction, ignore_index):
    """The device's fused loss multiplies ignored rows by 0; the CPU takes its composed path: same numbers."""
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((6, 5))
    target = np.array([1, ignore_index, 4, 0, ignore_index, 2])
    (want, want_grad), (got, got_grad) = _cross_entropy_both(logits, target, ignore_index=ignore_index,
                                                             reduction=reduction)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12, atol=1e-15)
    assert not got_grad[[1, 4]].any()


def test_ignored_positions_of_a_sequence_and_every_target_ignored(device_backend):
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((2, 4, 3))  # (N, C, L)
    target = np.array([[0, -100, 3], [-100, 1, 2]])
    (want, want_grad), (got, got_grad) = _cross_entropy_both(logits, target)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12, atol=1e-15)
    (want, want_grad), (got, got_grad) = _cross_entropy_both(rng.standard_normal((2, 3)), np.array([-100, -100]))
    assert np.isnan(got) and np.isnan(want)  # 0 / 0, as torch
    np.testing.assert_array_equal(got_grad, want_grad)
    assert not want_grad.any()  # torch's gradient of an all-ignored mean is zeros


def test_second_order_through_the_device_loss_with_ignored_targets(device_backend):
    logits = np.random.default_rng(6).standard_normal((4, 3))
    grads = []
    for device in ("cpu", "cuda"):
        x = taugrad.tensor(logits, device=device, requires_grad=True)
        loss = F.cross_entropy(x, taugrad.tensor([2, -100, 0, 1], device=device))
        (g,) = taugrad.autograd.grad(loss, x, create_graph=True)
        (gg,) = taugrad.autograd.grad((g * g).sum(), x)
        grads.append(gg.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-14)
    assert not grads[1][1].any()


def test_float32_losses_on_the_device_equal_the_cpus_without_ignored_targets(fake_cuda):
    """With no target ignored, the device's masked loss is bit for bit the CPU's (the fake computes with NumPy)."""
    rng = np.random.default_rng(7)
    logits, target = rng.standard_normal((9, 7)).astype(np.float32), rng.integers(0, 7, 9)
    for reduction in ("mean", "sum", "none"):
        (want, want_grad), (got, got_grad) = _cross_entropy_both(logits, target, reduction=reduction)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_grad, want_grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_an_ignored_row_with_minus_infinity_at_class_zero_counts_nowhere(device_backend, reduction):
    """The device computes an ignored row at stand-in class 0: a masked (-inf) logit there must not leak inf * 0."""
    logits = np.array([[0.5, 1.0, -0.2], [-np.inf, 2.0, 0.1], [0.3, 0.0, 1.5]])
    target = np.array([2, -100, 1])
    (want, want_grad), (got, got_grad) = _cross_entropy_both(logits, target, reduction=reduction)
    assert np.isfinite(want).all() and np.isfinite(want_grad).all()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12, atol=1e-15)


def test_the_operation_counter_sees_each_sgd_update():
    """benchmarks/count_device_ops.py, run as a user runs it: an SGD step on 6 packed parameters is 3 operations.

    The model was moved with ``.to('cuda')``, so its parameters lie in one
    buffer: the gradients are gathered once, and ``p -= lr * g`` runs once.
    """
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "src"))
    out = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "count_device_ops.py"), "--case", "mlp",
                          "--top", "50"], capture_output=True, text=True, env=env, timeout=120, check=True).stdout
    assert out.startswith("mlp: ") and " array operations in one training step" in out
    sgd = [line.split() for line in out.splitlines() if "optim/sgd.py" in line and not line.startswith("by file")]
    assert sum(int(fields[0]) for fields in sgd) == 2, out
    gathers = [line.split() for line in out.splitlines() if "optim/packed.py" in line and not line.startswith("by file")]
    assert sum(int(fields[0]) for fields in gathers) == 1, out


def test_bincount_of_a_negative_value_names_the_value_on_any_device(device_backend):
    """The message shows the number, not the device array's repr (the size of the result needs the read anyway)."""
    for device in ("cpu", "cuda"):
        with pytest.raises(ValueError, match=r"^bincount: values must be non-negative, got -3$"):
            taugrad.bincount(taugrad.tensor([2, -3, 1], device=device))


@pytest.mark.parametrize("kwargs", [{"max_norm": 1.0}, {"max_norm": 2.0, "norm_type": 1.0},
                                    {"scale_grad_by_freq": True}, {"scale_grad_by_freq": True, "padding_idx": 2}])
def test_embedding_options_on_a_device_equal_the_cpu_and_read_nothing_back(fake_cuda, kwargs):
    """max_norm masks the rows used instead of finding them (np.unique's size would need a read)."""
    weight = np.random.default_rng(8).normal(size=(5, 3)) * 2
    index = np.array([[0, 2, 2], [4, 0, 0]])
    results = []
    for device in ("cpu", "cuda"):
        w = taugrad.tensor(weight.copy(), device=device, requires_grad=True)
        with strict_backend.recording_syncs() as syncs:
            out = F.embedding(taugrad.tensor(index, device=device), w, **kwargs)
            (out * out).sum().backward()
        assert device == "cpu" or syncs == [], syncs
        results.append([out.detach().cpu().numpy(), w.detach().cpu().numpy(), w.grad.cpu().numpy()])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


OPTIMIZERS = {
    "SGD": lambda p: optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    "Adam": lambda p: optim.Adam(p, lr=1e-3, weight_decay=0.01),
    "Adam-amsgrad": lambda p: optim.Adam(p, lr=1e-3, amsgrad=True),
    "AdamW": lambda p: optim.AdamW(p),
    "RMSprop": lambda p: optim.RMSprop(p, momentum=0.5, centered=True),
    "Adagrad": lambda p: optim.Adagrad(p),
    "Adadelta": lambda p: optim.Adadelta(p),
    "Adamax": lambda p: optim.Adamax(p),
    "NAdam": lambda p: optim.NAdam(p),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_step_with_clipping_and_dropout_reads_nothing_back(fake_cuda, name):
    taugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Tanh(), nn.LayerNorm(8), nn.Linear(8, 3)).to("cuda")
    optimizer = OPTIMIZERS[name](model.parameters())
    x, y = taugrad.randn(5, 4, device="cuda"), taugrad.tensor([0, 1, 2, 1, 0], device="cuda")
    for _ in range(2):  # the second step has the optimizer's state
        with strict_backend.recording_syncs() as syncs:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        assert syncs == [], f"{name}: read values back at {syncs}"


def test_a_check_left_by_another_thread_during_a_read_is_kept(monkeypatch):
    """A read takes the pending checks and clears them: a check another thread leaves in between must survive."""
    class ClearedSlowly(dict):
        other = None

        def clear(self):
            if self.other is None:  # once: a second thread must not outlive the test and write to the real dict
                self.other = threading.Thread(target=device_checks.defer,
                                              args=("late", np.array(True), IndexError, "the late check"))
                self.other.start()
                self.other.join(0.2)  # the other thread gets its chance to write now
            super().clear()

    pending = ClearedSlowly()
    monkeypatch.setattr(device_checks, "_PENDING", pending)
    device_checks.defer("first", np.array(False), IndexError, "the first check")
    device_checks.raise_pending()  # the first check passed
    pending.other.join()
    with pytest.raises(IndexError, match="the late check"):
        device_checks.raise_pending()
    assert not pending  # nothing left for the tests after this one


def test_cross_entropy_on_a_device_makes_its_row_indices_once(fake_cuda):
    """Every step picks one logit per row with arange(n): on a GPU a fresh one is a kernel launch each time."""
    first = taugrad.zeros(3, device="cuda")._data
    second = taugrad.ones(4, device="cuda")._data
    rows = losses._row_indices(6, first)
    assert type(rows) is type(first) and rows.tolist() == list(range(6))
    assert losses._row_indices(6, second) is rows
    assert losses._row_indices(6, np.zeros(2)) is not rows  # NumPy's own, for CPU arrays


def test_embedding_and_take_check_their_index_once_on_a_device(fake_cuda):
    """Each checks its own index, with its own message; the rows are then picked without a second check.

    A check on a device is a few operations (the range test, its ``any`` and
    the stand-in index); a second check through ``getitem`` made five more
    per call.
    """
    weight = taugrad.randn(5, 3, device="cuda")
    index = taugrad.tensor([[0, 4], [2, 2]], device="cuda")
    with strict_backend.counting_operations() as embedding:
        out = F.embedding(index, weight)
    # as_unsigned(i) >= rows, its any(), where(outside, 0, i), then the rows picked
    assert embedding.count == 4, embedding.count
    np.testing.assert_array_equal(out.cpu().numpy(), weight.cpu().numpy()[[[0, 4], [2, 2]]])
    flat = taugrad.tensor([0, -1, 3], device="cuda")
    with strict_backend.counting_operations() as take:
        picked = weight.take(flat)
    # i + n, >= 2n (unsigned), its any(), ~outside, i * ~outside, then the elements picked
    assert take.count == 6, take.count
    np.testing.assert_array_equal(picked.cpu().numpy(), weight.cpu().numpy().reshape(-1)[[0, -1, 3]])


def test_embedding_moves_host_indices_and_refuses_a_table_on_the_cpu_for_device_indices(fake_cuda):
    """Host indices for a table on a device are moved, as indexing moves them; the other way round is torch's error."""
    weight = np.random.default_rng(3).normal(size=(5, 3))
    results = []
    for device in ("cpu", "cuda"):
        w = taugrad.tensor(weight, device=device, requires_grad=True)
        out = F.embedding(taugrad.tensor([[0, 4], [4, 1]]), w, padding_idx=1)
        (out * out).sum().backward()
        assert out.device.type == device
        results.append((out.detach().cpu().numpy(), w.grad.cpu().numpy()))
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(RuntimeError, match=r"^embedding: expected all tensors to be on the same device, but found "
                                           r"at least two devices, cuda:0 and cpu!$"):
        F.embedding(taugrad.tensor([0, 1], device="cuda"), taugrad.tensor(weight))

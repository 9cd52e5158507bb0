"""Training steps on the device backend equal the CPU's: an MLP, the digits CNN and the lecture's GPT.

Each program runs twice from the same initial weights and seed, once on the
CPU and once with the model and batches moved to ``'cuda'`` (the strict fake,
or CuPy for the ``cuda``-marked run); losses and final weights must be EQUAL
on the fake (it computes with NumPy) and agree to float32 rounding on CuPy.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import taugrad
import taugrad.nn.functional as F
from taugrad import nn, optim
from taugrad.cli.train_engines import digits_cnn
from taugrad.tensors.core import backend

from programs.test_gpt_program import TEXT, batch_size, block_size, gpt_program

FLOAT32_CLOSE = dict(rtol=1e-4, atol=1e-5)


def _train(model, optimizer_class, batches, device):
    """Losses of one step per batch, and the final weights (host arrays), with ``model`` on ``device``."""
    taugrad.manual_seed(0)
    model = copy.deepcopy(model).to(device)
    assert all(p.device.type == device for p in model.parameters())
    optimizer = optimizer_class(model.parameters())
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(taugrad.tensor(x, device=device)), taugrad.tensor(y, device=device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    buffers = [v._data if isinstance(v, taugrad.Tensor) else v for state in optimizer.state.values()
               for v in state.values()]
    buffers = [b for b in buffers if backend.is_array(b) and b.ndim]
    assert buffers or isinstance(optimizer, optim.SGD) and not optimizer.defaults.get("momentum")
    assert all(backend.device_of(b).type == device for b in buffers), "optimizer state off the parameters' device"
    return losses, {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}


def _assert_same(got, want, tolerance):
    (got_losses, got_state), (want_losses, want_state) = got, want
    check = np.testing.assert_array_equal if tolerance is None else (
        lambda a, b, err_msg: np.testing.assert_allclose(a, b, **tolerance, err_msg=err_msg))
    check(np.array(got_losses), np.array(want_losses), err_msg="losses")
    assert got_state.keys() == want_state.keys()
    for name in want_state:
        check(got_state[name], want_state[name], err_msg=name)


def _digits_batches(n_batches=3, size=32):
    X, y = taugrad.data.digits()
    images = (X / 16.0).astype(np.float32)
    return [(images[i * size:(i + 1) * size], y[i * size:(i + 1) * size]) for i in range(n_batches)]


def test_mlp_steps_on_device_equal_cpu(device_backend):
    _, tolerance = device_backend
    taugrad.manual_seed(1)
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 10))
    batches = _digits_batches()
    for optimizer_class in (lambda p: optim.SGD(p, lr=0.1, momentum=0.9), lambda p: optim.Adam(p, lr=1e-2)):
        want = _train(model, optimizer_class, batches, "cpu")
        got = _train(model, optimizer_class, batches, "cuda")
        _assert_same(got, want, None if tolerance is None else FLOAT32_CLOSE)


def test_digits_cnn_steps_on_device_equal_cpu(device_backend):
    _, tolerance = device_backend
    taugrad.manual_seed(2)
    model = digits_cnn()
    batches = [(x.reshape(-1, 1, 8, 8), y) for x, y in _digits_batches(n_batches=2, size=16)]
    want = _train(model, lambda p: optim.Adam(p, lr=1e-2), batches, "cpu")
    got = _train(model, lambda p: optim.Adam(p, lr=1e-2), batches, "cuda")
    _assert_same(got, want, None if tolerance is None else FLOAT32_CLOSE)


def test_lenet_steps_on_device_equal_cpu(device_backend):
    """LeNet-5-shaped: few channels on 28x28 maps (the batch-last convolution layout), reflect padding,
    BatchNorm, the tiled max pool, Dropout2d."""
    _, tolerance = device_backend
    taugrad.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2, padding_mode="reflect"), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(6, 16, 5), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout2d(0.2),
                          nn.Flatten(), nn.Linear(400, 10))
    rng = np.random.default_rng(3)
    batches = [(rng.standard_normal((8, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 8)) for _ in range(2)]
    want = _train(model, lambda p: optim.SGD(p, lr=0.1, momentum=0.9), batches, "cpu")
    got = _train(model, lambda p: optim.SGD(p, lr=0.1, momentum=0.9), batches, "cuda")
    _assert_same(got, want, None if tolerance is None else FLOAT32_CLOSE)


def test_gpt_steps_on_device_equal_cpu(device_backend):
    """The lecture's GPT program (tests/programs) with ``device = 'cuda'``, as the lecture writes it."""
    _, tolerance = device_backend
    steps = 3
    rng = np.random.default_rng(1)
    n_val = len(TEXT) - int(0.9 * len(TEXT))
    batches = {"train": rng.integers(0, int(0.9 * len(TEXT)) - block_size, (steps, batch_size)),
               "eval": rng.integers(0, n_val - block_size, (1, batch_size))}
    runs = []
    for device in ("cpu", "cuda"):
        taugrad.manual_seed(1337)
        record, generated, model = gpt_program(taugrad, taugrad.nn, taugrad.nn.functional, None, batches, steps,
                                               device=device)
        assert all(p.device.type == device for p in model.parameters())
        runs.append((record, generated))
    (want_record, want_generated), (got_record, got_generated) = runs
    if tolerance is None:
        assert got_record == want_record
    else:
        np.testing.assert_allclose(got_record, want_record, **FLOAT32_CLOSE)
    # sampling draws from the device's own generator (as torch's CUDA generator): other numbers, same form
    assert len(got_generated) == len(want_generated) == 6 and got_generated[0] == 0

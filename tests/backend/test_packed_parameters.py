"""Parameters moved to a device lie in one buffer, and an optimizer steps them all at once.

``Module.to('cuda')`` packs the parameters it moves side by side; an
optimizer whose parameters are consecutive in that buffer runs its rule once
on the slice holding them, so a step launches the same few kernels whatever
the number of parameters.  These tests run on the strict fake device (NumPy
underneath, so every number must EQUAL the CPU's) and check what a user can
see: the values, the optimizer's state, memory shared with ``p.data``, and
what happens when a parameter leaves its slot.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

import taugrad
import taugrad.nn.functional as F
from taugrad import nn, optim
from taugrad.tensors.core import flat_storage

from . import strict_backend
from .test_seam_training_tools import OPTIMIZERS as TOOLS_OPTIMIZERS

OPTIMIZERS = {"SGD": lambda p: optim.SGD(p, lr=0.1), **TOOLS_OPTIMIZERS}


def _model(layers: int = 2, seed: int = 0):
    taugrad.manual_seed(seed)
    mods = []
    for _ in range(layers - 1):
        mods += [nn.Linear(6, 6), nn.Tanh()]
    return nn.Sequential(*mods, nn.Linear(6, 3))


def _batch(device):
    rng = np.random.default_rng(1)
    x = taugrad.tensor(rng.standard_normal((5, 6)).astype(np.float32), device=device)
    return x, taugrad.tensor(rng.integers(0, 3, 5), device=device)


def _step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def _host_state(optimizer):
    """The optimizer's state_dict with every array as a host array, for comparing two runs."""
    state = optimizer.state_dict()["state"]
    return {i: {k: (v.cpu().numpy() if isinstance(v, taugrad.Tensor) else
                    strict_backend._to_host(v) if isinstance(v, strict_backend.StrictArray) else v)
                for k, v in entry.items()} for i, entry in state.items()}


def _train(make_optimizer, device, steps=3, between=None):
    model = _model().to(device)
    optimizer = make_optimizer(model.parameters())
    x, y = _batch(device)
    losses = []
    for k in range(steps):
        if between is not None:
            between(k, model, optimizer)
        losses.append(_step(model, optimizer, x, y))
    weights = [p.detach().cpu().numpy().copy() for p in model.parameters()]
    return losses, weights, _host_state(optimizer)


def _assert_equal_runs(got, want):
    (got_losses, got_weights, got_state), (want_losses, want_weights, want_state) = got, want
    assert got_losses == want_losses
    for g, w in zip(got_weights, want_weights):
        np.testing.assert_array_equal(g, w)
    assert got_state.keys() == want_state.keys()
    for i in want_state:
        assert got_state[i].keys() == want_state[i].keys()
        for key, w in want_state[i].items():
            g = got_state[i][key]
            assert np.shape(g) == np.shape(w), (i, key)
            np.testing.assert_array_equal(g, w, err_msg=f"state of parameter {i}, {key!r}")


def test_moving_a_model_puts_its_parameters_side_by_side_keeping_values_and_layout(fake_cuda):
    model = _model()
    before = [(p.detach().numpy().copy(), p._data.flags.f_contiguous) for p in model.parameters()]
    params = list(model.parameters())
    model.to("cuda")
    assert [p for p in model.parameters()] == params or all(a is b for a, b in zip(model.parameters(), params))
    for p, (values, column_major) in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.detach().cpu().numpy(), values)
        assert p._data.flags.f_contiguous == column_major  # the layout decides a matrix product's rounding
    packed = flat_storage.span(params, [p._data for p in params])
    assert packed is not None and packed.whole.size == sum(p.numel() for p in params)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_packed_step_gives_the_per_parameter_numbers_and_state(fake_cuda, name):
    _assert_equal_runs(_train(OPTIMIZERS[name], "cuda"), _train(OPTIMIZERS[name], "cpu"))


def _operations_of_a_step(model, optimizer, x, y) -> int:
    """The fake device's array operations in ``optimizer.step()`` after one backward pass."""
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    with strict_backend.counting_operations() as counter:
        optimizer.step()
    return counter.count


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_step_makes_as_many_array_operations_for_many_parameters_as_for_few(fake_cuda, name):
    """PyTorch launches one multi-tensor kernel per operation of the rule; a packed group is one array."""
    counts = []
    for layers in (2, 6):  # 4 and 12 parameters
        model = _model(layers).to("cuda")
        optimizer = OPTIMIZERS[name](model.parameters())
        x, y = _batch("cuda")
        _step(model, optimizer, x, y)  # the state exists from here on
        counts.append(_operations_of_a_step(model, optimizer, x, y))
    assert counts[0] == counts[1], counts
    assert counts[0] <= 20, counts


def test_a_parameter_replaced_by_the_user_leaves_the_buffer_and_is_still_stepped(fake_cuda):
    def replace_first_weight(k, model, optimizer):
        if k == 1:
            first = model[0].weight
            first.data = first.data * 0.5  # a new array: no longer in the buffer
    for name in ("SGD-nesterov", "Adam", "RMSprop"):
        _assert_equal_runs(_train(OPTIMIZERS[name], "cuda", steps=4, between=replace_first_weight),
                           _train(OPTIMIZERS[name], "cpu", steps=4, between=replace_first_weight))


def test_a_parameter_without_gradient_for_a_step_is_skipped_as_on_the_cpu(fake_cuda):
    def freeze_the_last_bias_once(k, model, optimizer):
        model[-1].bias.requires_grad_(k != 1)
    for name in ("SGD-nesterov", "Adam", "Adagrad", "NAdam"):
        _assert_equal_runs(_train(OPTIMIZERS[name], "cuda", steps=4, between=freeze_the_last_bias_once),
                           _train(OPTIMIZERS[name], "cpu", steps=4, between=freeze_the_last_bias_once))


def test_an_optimizer_state_loaded_mid_training_is_used_by_the_packed_step(fake_cuda):
    def reload_a_scaled_state(k, model, optimizer):
        if k == 2:
            saved = optimizer.state_dict()
            for entry in saved["state"].values():
                for key, value in entry.items():
                    if isinstance(value, strict_backend.StrictArray) or isinstance(value, np.ndarray):
                        entry[key] = value * 2
            optimizer.load_state_dict(saved)
    for name in ("SGD-nesterov", "Adam", "RMSprop"):
        _assert_equal_runs(_train(OPTIMIZERS[name], "cuda", steps=4, between=reload_a_scaled_state),
                           _train(OPTIMIZERS[name], "cpu", steps=4, between=reload_a_scaled_state))


def test_p_data_taken_after_the_move_follows_the_steps(fake_cuda):
    """As in PyTorch, ``p.data`` shares memory with ``p``: packing happens at the move, never later."""
    model = _model().to("cuda")
    held = [p.data for p in model.parameters()]
    model.to("cuda")  # already there: nothing moves, nothing is repacked
    optimizer = optim.Adam(model.parameters(), lr=0.1)
    x, y = _batch("cuda")
    for _ in range(2):
        _step(model, optimizer, x, y)
    for p, d in zip(model.parameters(), held):
        np.testing.assert_array_equal(d.cpu().numpy(), p.detach().cpu().numpy())


def test_a_dtype_change_on_the_device_repacks_and_trains_as_on_the_cpu(fake_cuda):
    results = []
    for device in ("cuda", "cpu"):
        model = _model().to(device).double()
        optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = _batch(device)
        losses = [_step(model, optimizer, x.double(), y) for _ in range(3)]
        results.append((losses, [p.detach().cpu().numpy() for p in model.parameters()]))
        if device == "cuda":
            params = list(model.parameters())
            assert flat_storage.span(params, [p._data for p in params]) is not None
    assert results[0][0] == results[1][0]
    for g, w in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(g, w)


def test_the_cpu_is_never_packed():
    model = _model().to("cpu")
    params = list(model.parameters())
    assert flat_storage.span(params, [p._data for p in params]) is None
    assert model[0].weight._data.flags.c_contiguous  # nn.Linear's (out, in) row-major layout, as torch's, stays


def test_a_dropped_model_takes_its_slots_with_it(fake_cuda):
    model = _model(layers=3).to("cuda")
    ids = [id(p) for p in model.parameters()]
    assert all(flat_storage.slot_of(p) is not None for p in model.parameters())
    del model
    gc.collect()
    assert not any(i in flat_storage._SLOTS for i in ids)


def test_large_parameters_are_stepped_one_by_one(fake_cuda, monkeypatch):
    """Gathering the gradients costs memory traffic; for large parameters it outweighs the launches saved."""
    from taugrad.optim import packed
    counts = []
    for largest in (10**9, 10):  # every parameter small, then every one "large" (the 6x6 weights: 36)
        monkeypatch.setattr(packed, "LARGEST_AVERAGE_SIZE", largest)
        model = _model(4).to("cuda")
        optimizer = optim.SGD(model.parameters(), lr=0.1)
        counts.append(_operations_of_a_step(model, optimizer, *_batch("cuda")))
    assert counts == [3, 2 * 8], counts  # gather, lr * g, p -= ...; then two per parameter
    want = _train(OPTIMIZERS["SGD-nesterov"], "cpu")
    _assert_equal_runs(_train(OPTIMIZERS["SGD-nesterov"], "cuda"), want)

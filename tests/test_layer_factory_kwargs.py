"""``device=`` / ``dtype=`` on every layer with parameters or buffers, against ``torch.nn``.

PyTorch's layers take these "factory arguments"; code written for torch passes
them positionally or by keyword, so the names must be there and bind as in
torch.  Parameters and buffers are made in the dtype asked for (the default
float dtype when None) and initialised from the same draws whatever the dtype:
taugrad draws float64 numbers on the host and casts them into the parameter,
so a float64 layer holds exactly the numbers a float32 layer rounds.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn

from layer_cases import TORCH_LAYERS as LAYERS

F64 = taugrad.float64


def _params(name):
    return list(inspect.signature(getattr(nn, name).__init__).parameters.values())[1:]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_device_and_dtype_are_in_torchs_order(name):
    ours = _params(name)
    theirs = list(inspect.signature(getattr(torch.nn, name).__init__).parameters)[1:]
    names = [p.name for p in ours]
    # device and dtype come last, apart from other keyword-only arguments after them (torch's bias=)
    factory = [p for p in ours if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD or p.name in ("device", "dtype")]
    assert [p.name for p in factory[-2:]] == ["device", "dtype"]
    assert all(p.default is None for p in factory[-2:])
    # the parameters both have, in the same order
    assert [n for n in names if n in theirs] == [n for n in theirs if n in names]
    # a positional call binds as in torch: every positional parameter sits at torch's index
    for index, p in enumerate(ours):
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            assert theirs.index(p.name) == index, (name, p.name)


def test_embedding_binds_its_third_positional_argument_to_padding_idx():
    """torch's third positional argument is padding_idx: it must not land in device or dtype."""
    layer = nn.Embedding(7, 3, 0)
    assert layer.padding_idx == 0 and layer.weight.dtype == taugrad.float32
    assert nn.Embedding(7, 3, dtype=F64).weight.dtype == F64


def _build(name, seed, **kwargs):
    args, extra = LAYERS[name][:2]
    taugrad.manual_seed(seed)
    return getattr(nn, name)(*args, **extra, **kwargs)


def _state(module):
    return {k: v.detach().numpy() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_float64_layers_hold_the_float32_draws_unrounded(name):
    single, double = _state(_build(name, 11)), _state(_build(name, 11, dtype=F64))
    assert single.keys() == double.keys() and single
    for key, value in double.items():
        if key == "num_batches_tracked":
            assert value.dtype == np.int64  # a counter, not a floating buffer
            continue
        assert value.dtype == np.float64, key
        assert single[key].dtype == np.float32, key
        # the same draws: the float32 layer's numbers are the float64 ones rounded
        np.testing.assert_array_equal(value.astype(np.float32), single[key], err_msg=key)
    assert all(p.dtype == F64 for p in _build(name, 11, dtype=F64).parameters())


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_explicit_cpu_device_and_float32_change_nothing(name):
    plain, explicit = _state(_build(name, 5)), _state(_build(name, 5, device="cpu", dtype=taugrad.float32))
    for key in plain:
        np.testing.assert_array_equal(plain[key], explicit[key], err_msg=key)
    on_device = _build(name, 5, device=taugrad.device("cpu"))
    assert all(t.device.type == "cpu" for t in list(on_device.parameters()) + list(on_device.buffers()))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_float64_forward_equals_torch_with_the_state_dict_copied(name):
    ours = _build(name, 2, dtype=F64)
    args, extra, make = LAYERS[name]
    theirs = getattr(torch.nn, name)(*args, **extra, dtype=torch.float64)
    assert all(p.dtype == torch.float64 for p in theirs.parameters())
    theirs.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in _state(ours).items()})
    rng = np.random.default_rng(0)
    x = make(rng)
    if name == "MultiheadAttention":
        got = ours(x, x, x)[0].detach().numpy()
        want = theirs(*(torch.from_numpy(x),) * 3)[0].detach().numpy()
    else:
        got = ours(x).detach().numpy()
        want = theirs(torch.from_numpy(x)).detach().numpy()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_default_dtype_is_the_layers_dtype_when_none():
    previous = taugrad.get_default_dtype()
    taugrad.set_default_dtype(F64)
    try:
        layers = [nn.Linear(2, 3), nn.BatchNorm1d(3), nn.MultiheadAttention(4, 2), nn.Conv2d(1, 1, 2)]
    finally:
        taugrad.set_default_dtype(previous)
    assert all(t.dtype == F64 for m in layers for t in m.parameters())
    assert nn.BatchNorm1d(3).running_mean.dtype == taugrad.float32  # back to float32 after


def test_mlp_passes_device_and_dtype_to_every_linear():
    model = nn.MLP(3, [4, 5], 2, device="cpu", dtype=F64)
    assert [p.dtype for p in model.parameters()] == [F64] * 6


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("bad, error, text", [
    ({"dtype": taugrad.int64}, TypeError, "dtype must be a floating dtype"),
    ({"dtype": taugrad.complex64}, TypeError, "dtype must be a floating dtype"),
    ({"dtype": "no-such-dtype"}, TypeError, "unknown dtype"),
    ({"device": "mps"}, RuntimeError, "no MPS device"),
    ({"device": 2.5}, TypeError, "device must be a string"),
])
def test_bad_device_or_dtype_is_one_line_naming_the_layer(name, bad, error, text):
    args, extra = LAYERS[name][:2]
    with pytest.raises(error) as info:
        getattr(nn, name)(*args, **extra, **bad)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{name}: ") and text in message

"""``device='cuda'`` on the layers, on the strict fake device (which refuses any NumPy call on its arrays).

A layer made with ``device=`` is initialised on the CPU from the CPU generator
and then moved, so with the same seed it holds the same numbers as a CPU
layer; and because the fake computes with NumPy, its forward and backward
must EQUAL the CPU ones.
"""
from __future__ import annotations

import numpy as np
import pytest

import taugrad
from taugrad import nn

from layer_cases import LAYERS

from .strict_backend import StrictArray

CUDA0 = taugrad.device("cuda", 0)


def _build(name, device=None):
    args, extra, _ = LAYERS[name]
    taugrad.manual_seed(4)
    return getattr(nn, name)(*args, **extra, device=device)


def _input(name, device):
    x = LAYERS[name][2](np.random.default_rng(1))
    if x.dtype.kind == "f":
        return taugrad.tensor(x.astype(np.float32), device=device, requires_grad=True)
    return taugrad.tensor(x, device=device)


def _run(module, x):
    """Forward, then backward from a fixed upstream gradient (the same C-ordered numbers on both devices)."""
    out = module(x, x, x)[0] if isinstance(module, nn.MultiheadAttention) else module(x)
    upstream = np.random.default_rng(2).standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(taugrad.tensor(upstream, device=out.device))
    return out


def _host(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("device", ["cuda", CUDA0, 0])
def test_every_parameter_and_buffer_is_made_on_the_device(fake_cuda, name, device):
    layer = _build(name, device)
    tensors = dict(layer.named_parameters()) | dict(layer.named_buffers())
    assert tensors
    for key, t in tensors.items():
        assert t.device.type == "cuda" and t.device == CUDA0, key
        assert type(t._data) is StrictArray, key
    assert all(p.requires_grad for p in layer.parameters())


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_same_seed_same_numbers_and_forward_backward_equal_the_cpu(fake_cuda, name):
    cpu, gpu = _build(name), _build(name, "cuda")
    for (key, want), (key2, got) in zip(cpu.state_dict().items(), gpu.state_dict().items()):
        assert key == key2 and got.dtype == want.dtype
        np.testing.assert_array_equal(_host(got), _host(want), err_msg=key)
    x_cpu, x_gpu = _input(name, "cpu"), _input(name, "cuda")
    out_cpu, out_gpu = _run(cpu, x_cpu), _run(gpu, x_gpu)
    assert out_gpu.device == CUDA0
    np.testing.assert_array_equal(_host(out_gpu), _host(out_cpu))
    for (key, p_cpu), (_, p_gpu) in zip(cpu.named_parameters(), gpu.named_parameters()):
        assert p_gpu.grad is not None and p_gpu.grad.device == CUDA0, key
        np.testing.assert_array_equal(_host(p_gpu.grad), _host(p_cpu.grad), err_msg=key)
    if x_cpu.requires_grad:
        assert x_gpu.grad.device == CUDA0
        np.testing.assert_array_equal(_host(x_gpu.grad), _host(x_cpu.grad))
    for (key, b_cpu), (_, b_gpu) in zip(cpu.named_buffers(), gpu.named_buffers()):  # running statistics
        np.testing.assert_array_equal(_host(b_gpu), _host(b_cpu), err_msg=key)


def test_device_layers_draw_from_the_cpu_generator(fake_cuda):
    """Initialised on the CPU, then moved: the CPU stream moves on as for a CPU layer, the CUDA one does not."""
    taugrad.manual_seed(9)
    nn.Linear(3, 2)
    after_cpu_layer = taugrad.rand(4).numpy()
    taugrad.manual_seed(9)
    nn.Linear(3, 2, device="cuda")
    np.testing.assert_array_equal(taugrad.rand(4).numpy(), after_cpu_layer)
    fresh = _host(taugrad.rand(4, device="cuda"))
    taugrad.manual_seed(9)
    np.testing.assert_array_equal(_host(taugrad.rand(4, device="cuda")), fresh)


def test_device_and_dtype_together(fake_cuda):
    layer = nn.BatchNorm2d(3, device="cuda", dtype=taugrad.float64)
    assert layer.running_var.dtype == taugrad.float64 and layer.running_var.device == CUDA0
    assert layer.num_batches_tracked.dtype == taugrad.int64 and layer.num_batches_tracked.device == CUDA0
    model = nn.Sequential(nn.Conv2d(1, 2, 3, device="cuda", dtype=taugrad.float64), nn.Flatten(),
                          nn.Linear(8, 2, device="cuda", dtype=taugrad.float64))
    out = model(taugrad.randn(2, 1, 4, 4, dtype=taugrad.float64, device="cuda"))
    out.sum().backward()
    assert out.device == CUDA0 and all(p.grad.device == CUDA0 for p in model.parameters())


@pytest.mark.parametrize("steps", [5, 5000])  # both of linspace's paths: exact (host) and the long formula
def test_linspace_on_the_device_equals_the_cpu(fake_cuda, steps):
    got = taugrad.linspace(-1.0, 3.0, steps, device="cuda")
    assert type(got._data) is StrictArray and got.device == CUDA0
    np.testing.assert_array_equal(_host(got), taugrad.linspace(-1.0, 3.0, steps).numpy())

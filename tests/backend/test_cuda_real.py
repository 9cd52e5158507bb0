"""The user's side of devices on a real GPU (CuPy): DLPack with torch, CuPy and JAX, save/load, Module.to.

The strict fake proves the same calls on every machine (``test_devices.py``);
here the memory really is on the GPU, so zero copy means the device pointers
agree and a write through one library is read through the other.  Marked
``cuda``: skipped with the reason where CuPy or a GPU is missing.
"""
from __future__ import annotations

import numpy as np
import pytest

import taugrad
from taugrad import nn
from taugrad.tensors.core import backend

from .conftest import cupy_missing_reason

pytestmark = pytest.mark.cuda


@pytest.fixture(autouse=True)
def real_cupy():
    reason = cupy_missing_reason()
    if reason:
        pytest.skip(reason)
    backend.unregister_backend("cuda")  # a fake left by another test must not stand in for CuPy
    return backend.backend_for("cuda")


def _pointer(tensor) -> int:
    return tensor._data.data.ptr


def test_tensors_live_in_cupy_arrays(real_cupy):
    x = taugrad.arange(6.0, device="cuda").reshape(2, 3)
    assert type(x._data) is real_cupy.ndarray and x.is_cuda and x.device == taugrad.device("cuda", 0)
    y = (x * 2).sum()
    assert type(y._data) is real_cupy.ndarray and y.item() == 30.0
    assert isinstance(x.cpu()._data, np.ndarray)


def test_dlpack_with_torch_cuda_both_ways():
    torch = pytest.importorskip("torch")
    ours = taugrad.zeros(4, device="cuda")
    theirs = torch.from_dlpack(ours)
    assert theirs.is_cuda and theirs.data_ptr() == _pointer(ours)
    theirs[1] = 5.0
    assert ours.tolist() == [0.0, 5.0, 0.0, 0.0]

    source = torch.arange(3.0, device="cuda")
    back = taugrad.from_dlpack(source)
    assert back.is_cuda and _pointer(back) == source.data_ptr()
    back.add_(1.0)
    assert source.tolist() == [1.0, 2.0, 3.0]


def test_dlpack_with_cupy_both_ways(real_cupy):
    ours = taugrad.ones(3, device="cuda")
    theirs = real_cupy.from_dlpack(ours)
    assert theirs.data.ptr == _pointer(ours)
    theirs[0] = 7.0
    assert ours.tolist() == [7.0, 1.0, 1.0]

    source = real_cupy.zeros(2, dtype=real_cupy.float32)
    back = taugrad.from_dlpack(source)
    assert _pointer(back) == source.data.ptr
    back.fill_(4.0)
    assert source.tolist() == [4.0, 4.0]


def test_dlpack_from_and_to_jax_on_the_gpu():
    jax = pytest.importorskip("jax")
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("JAX sees no GPU")
    source = jax.device_put(jax.numpy.arange(4.0, dtype=jax.numpy.float32), gpus[0])
    ours = taugrad.from_dlpack(source)
    assert ours.is_cuda and ours.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert _pointer(ours) == source.unsafe_buffer_pointer()

    exported = taugrad.arange(4.0, device="cuda")
    theirs = jax.dlpack.from_dlpack(exported)
    assert theirs.unsafe_buffer_pointer() == _pointer(exported)
    assert np.asarray(theirs).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_mixing_devices_names_the_op_and_both_devices():
    with pytest.raises(RuntimeError, match=r"add.*cuda:0.*cpu|add.*cpu.*cuda:0"):
        taugrad.ones(2, device="cuda") + taugrad.ones(2)


def test_module_to_cuda_trains_with_optimizer_state_on_the_gpu(real_cupy):
    taugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3)).to("cuda")
    optimizer = taugrad.optim.Adam(model.parameters(), lr=1e-2)
    x = taugrad.randn(16, 5, device="cuda")
    y = taugrad.randint(0, 3, (16,), device="cuda")
    losses = []
    for _ in range(20):
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    for p in model.parameters():
        assert type(p._data) is real_cupy.ndarray and type(p.grad._data) is real_cupy.ndarray
        state = optimizer.state[p]  # keyed by the parameter, holding tensors, as in torch
        assert type(state["exp_avg"]._data) is real_cupy.ndarray and type(state["exp_avg_sq"]._data) is real_cupy.ndarray


def test_save_writes_host_arrays_and_load_maps_them(tmp_path, real_cupy):
    path = tmp_path / "weights.pt"
    saved = {"w": taugrad.arange(4.0, device="cuda")}
    taugrad.save(saved, path)
    on_cpu = taugrad.load(path, map_location="cpu")
    assert not on_cpu["w"].is_cuda and on_cpu["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    restored = taugrad.load(path)
    assert restored["w"].is_cuda and type(restored["w"]._data) is real_cupy.ndarray


def test_seeded_draws_are_the_cpu_draws():
    taugrad.manual_seed(11)
    want = taugrad.randn(5).numpy()
    taugrad.manual_seed(11)
    got = taugrad.randn(5, device="cuda")
    np.testing.assert_array_equal(got.cpu().numpy(), want)


def test_cuda_module_answers_from_the_gpu():
    assert taugrad.cuda.is_available() and taugrad.cuda.device_count() >= 1
    assert isinstance(taugrad.cuda.get_device_name(), str) and taugrad.cuda.get_device_name()
    taugrad.cuda.synchronize()

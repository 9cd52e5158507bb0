"""The user's side of devices, on the strict fake 'cuda' backend: as torch's CUDA API.

Creation with ``device=``, ``.to``/``.cuda``/``.cpu``, ``Module.to``, mixing
errors, ``taugrad.cuda``, save/load with ``map_location``, DLPack and NumPy
memory sharing, and CuPy staying unimported on the CPU path.
"""
from __future__ import annotations

import contextlib
import copy
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn
from taugrad.tensors.core import backend

from .strict_backend import StrictArray

CUDA0 = taugrad.device("cuda", 0)

CREATION = {
    "tensor": lambda d: taugrad.tensor([1.0, 2.0], device=d),
    "zeros": lambda d: taugrad.zeros(2, 3, device=d),
    "ones": lambda d: taugrad.ones((2,), device=d),
    "empty": lambda d: taugrad.empty(4, device=d).zero_(),
    "full": lambda d: taugrad.full((2, 2), 3.0, device=d),
    "arange": lambda d: taugrad.arange(5, device=d),
    "linspace": lambda d: taugrad.linspace(0, 1, 5, device=d),
    "logspace": lambda d: taugrad.logspace(0, 1, 3, device=d),
    "eye": lambda d: taugrad.eye(3, device=d),
    "as_tensor": lambda d: taugrad.as_tensor(np.ones(2), device=d),
    "rand": lambda d: taugrad.rand(2, device=d),
    "randn": lambda d: taugrad.randn(2, 2, device=d),
    "randint": lambda d: taugrad.randint(0, 5, (3,), device=d),
    "randperm": lambda d: taugrad.randperm(4, device=d),
    "normal": lambda d: taugrad.normal(0.0, 1.0, (3,), device=d),
}
LIKE = ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_on_the_device_equals_the_cpu(fake_cuda, name):
    taugrad.manual_seed(3)
    want = CREATION[name]("cpu")
    taugrad.manual_seed(3)  # seeds the CUDA generators too: the same draws
    got = CREATION[name]("cuda")
    assert got.device == CUDA0 and got.is_cuda and not got.is_cpu and got.get_device() == 0
    assert type(got._data) is StrictArray
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    assert got.dtype == want.dtype


@pytest.mark.parametrize("name", LIKE)
def test_like_functions_follow_the_tensor_device(fake_cuda, name):
    x = taugrad.ones(2, 3, device="cuda")
    assert getattr(taugrad, name)(x).device == CUDA0
    assert getattr(taugrad, name)(x, device="cpu").device == taugrad.device("cpu")


def test_to_cuda_cpu_and_gradients_flow_back(fake_cuda):
    x = taugrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for moved in (x.to("cuda"), x.cuda(), x.to(CUDA0), x.to(0)):
        assert moved.device == CUDA0 and moved.grad_fn.name() == "ToCopyBackward0"
    y = x.to("cuda", taugrad.float64)
    assert y.dtype == taugrad.float64
    (y * y).sum().backward()
    assert x.grad.device == taugrad.device("cpu")
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    z = taugrad.ones(2, device="cuda")
    assert z.to("cuda") is z and z.cuda() is z and z.cpu().device.type == "cpu"
    assert z.to(taugrad.zeros(1)).device.type == "cpu"  # to(other): its device and dtype
    assert "device='cuda:0'" in repr(z)


def test_device_tensors_refuse_numpy_as_torch(fake_cuda):
    z = taugrad.ones(2, device="cuda")
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy; use \.cpu\(\)"):
        z.numpy()
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor"):
        np.asarray(z)
    assert z.tolist() == [1.0, 1.0] and z.sum().item() == 2.0  # Python numbers come back, as torch


@pytest.mark.parametrize("op, call", [
    ("add", lambda a, b: a + b), ("mul", lambda a, b: b * a), ("matmul", lambda a, b: a @ b),
    ("cat", lambda a, b: taugrad.cat([a, b])), ("where", lambda a, b: taugrad.where(a > 0, a, b)),
    ("maximum", lambda a, b: taugrad.maximum(a, b)), ("stack", lambda a, b: taugrad.stack([a, b])),
    ("einsum", lambda a, b: taugrad.einsum("i,i->", a, b)),
    ("linear", lambda a, b: taugrad.nn.functional.linear(b, a.reshape(1, 3))),
    ("conv2d", lambda a, b: taugrad.nn.functional.conv2d(a.reshape(1, 1, 1, 3), b.reshape(1, 1, 1, 3))),
    ("where", lambda a, b: taugrad.where(a > 0, b, b)), ("add_", lambda a, b: b.add_(a)),
])
def test_mixing_devices_is_one_line_naming_op_and_devices(fake_cuda, op, call):
    a, b = taugrad.ones(3), taugrad.ones(3, device="cuda")
    with pytest.raises(RuntimeError) as info:
        call(a, b)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{op}: expected all tensors to be on the same device")
    assert "cuda:0" in message and "cpu" in message


def test_copy_moves_between_devices_as_torch(fake_cuda):
    """``copy_`` is the one op that takes another device's tensor (recorded: the gradient goes back)."""
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    y = taugrad.zeros(2, device="cuda")
    y.copy_(x)
    (y * y).sum().backward()
    assert y.device == CUDA0 and x.grad.device.type == "cpu"
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    z = taugrad.zeros(2)
    z.copy_(y.detach())
    assert z.tolist() == [1.0, 2.0]


def test_module_to_cuda_and_back_keeps_identity(fake_cuda):
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    weight = model[0].weight
    model(taugrad.randn(4, 3)).sum().backward()
    assert model.cuda() is model and model[0].weight is weight
    assert all(t.device == CUDA0 for t in list(model.parameters()) + list(model.buffers()))
    assert weight.grad.device == CUDA0
    out = model(taugrad.randn(4, 3, device="cuda"))
    assert out.device == CUDA0
    model.to("cpu", taugrad.float64)
    assert weight.device.type == "cpu" and weight.dtype == taugrad.float64
    assert model.to(CUDA0).cpu() is model


def test_taugrad_cuda_answers_from_the_backend(fake_cuda):
    assert taugrad.cuda.is_available() and taugrad.cuda.device_count() == 1
    assert taugrad.cuda.current_device() == 0
    taugrad.cuda.synchronize()
    assert taugrad.accelerator.current_accelerator() == taugrad.device("cuda")
    g = taugrad.Generator(device="cuda").manual_seed(5)
    first = taugrad.rand(3, generator=g, device="cuda")
    g.manual_seed(5)
    np.testing.assert_array_equal(taugrad.rand(3, generator=g, device="cuda").cpu().numpy(), first.cpu().numpy())
    taugrad.cuda.manual_seed(7)
    a = taugrad.randn(3, device="cuda")
    taugrad.cuda.manual_seed(7)
    np.testing.assert_array_equal(taugrad.randn(3, device="cuda").cpu().numpy(), a.cpu().numpy())


def test_without_a_backend_cuda_says_what_is_missing(monkeypatch):
    backend.unregister_backend("cuda")
    monkeypatch.setattr(backend, "cupy_or_none", lambda: None)
    assert taugrad.cuda.is_available() is False and taugrad.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match=r"^zeros: CUDA requested, but CuPy is not installed"):
        taugrad.zeros(2, device="cuda")

    class NoGpu:
        class cuda:
            class runtime:
                @staticmethod
                def getDeviceCount():
                    raise RuntimeError("cudaErrorNoDevice")

    monkeypatch.setattr(backend, "cupy_or_none", lambda: NoGpu)
    with pytest.raises(RuntimeError, match=r"^to: CUDA requested, but CuPy found no GPU"):
        taugrad.ones(2).to("cuda")
    assert taugrad.cuda.device_count() == 0


def test_save_writes_host_arrays_and_load_maps_locations(fake_cuda, tmp_path):
    path = tmp_path / "ckpt.pt"
    state = {"w": taugrad.arange(4.0, device="cuda"), "b": taugrad.ones(2)}
    taugrad.save(state, path)
    with np.load(path, allow_pickle=False) as archive:  # plain host arrays in the file
        assert np.array_equal(archive["w"], [0.0, 1.0, 2.0, 3.0])
    back = taugrad.load(path)
    assert back["w"].device == CUDA0 and back["b"].device.type == "cpu"
    assert taugrad.load(path, map_location="cpu")["w"].device.type == "cpu"
    assert taugrad.load(path, map_location=taugrad.device("cuda"))["b"].device == CUDA0
    assert taugrad.load(path, map_location={"cuda:0": "cpu"})["w"].device.type == "cpu"
    seen = []
    loaded = taugrad.load(path, map_location=lambda t, location: seen.append(location))
    # None from the callable: torch's default restore location, where the tensor was saved from
    assert sorted(seen) == ["cpu", "cuda:0"] and loaded["w"].device == CUDA0 and loaded["b"].device.type == "cpu"


def test_from_numpy_and_numpy_share_memory_both_ways():
    a = np.zeros(3)
    t = taugrad.from_numpy(a)
    a[0] = 1.0
    assert t[0].item() == 1.0
    t.numpy()[1] = 2.0
    assert a[1] == 2.0


def test_dlpack_with_numpy_shares_memory_both_ways():
    a = np.arange(4.0)
    t = taugrad.from_dlpack(a)
    a[0] = 9.0
    assert t.tolist()[0] == 9.0
    source = taugrad.zeros(3)
    back = np.from_dlpack(source)
    source.numpy()[2] = 5.0
    assert back[2] == 5.0
    assert source.__dlpack_device__() == (1, 0)


def test_dlpack_with_torch_shares_memory_both_ways():
    their = torch.zeros(3)
    ours = taugrad.from_dlpack(their)
    their[1] = 4.0  # write on torch's side, read on ours
    assert ours.tolist() == [0.0, 4.0, 0.0]
    ours.numpy()[2] = 6.0  # write on ours, read on torch's
    assert their[2].item() == 6.0
    mine = taugrad.ones(2)
    seen_by_torch = torch.from_dlpack(mine)
    seen_by_torch[0] = -1.0
    assert mine.tolist() == [-1.0, 1.0]
    with pytest.raises(BufferError, match="requires grad"):  # torch's own tensors raise BufferError too
        torch.from_dlpack(taugrad.ones(2, requires_grad=True))


def _aligned_zeros(n: int, alignment: int = 64) -> np.ndarray:
    """float32 zeros whose first byte sits on an ``alignment`` boundary (JAX imports such memory without a copy)."""
    raw = np.zeros(n + alignment // 4, dtype=np.float32)
    skip = (-raw.ctypes.data % alignment) // 4
    return raw[skip:skip + n]


def test_dlpack_with_jax_shares_memory_both_ways():
    jax = pytest.importorskip("jax")  # in the test extra: present wherever the suite's install command ran
    theirs = jax.numpy.arange(6.0, dtype=jax.numpy.float32)
    ours = taugrad.from_dlpack(theirs)
    assert ours._data.ctypes.data == theirs.unsafe_buffer_pointer()  # the same memory, no copy
    assert ours.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(ValueError, match="read-only"):  # JAX arrays are immutable: shared read-only
        ours.add_(1.0)
    mine = taugrad.from_numpy(_aligned_zeros(4))
    seen_by_jax = jax.dlpack.from_dlpack(mine)
    assert seen_by_jax.unsafe_buffer_pointer() == mine._data.ctypes.data
    mine.numpy()[1] = 7.0  # written on ours, read on JAX's side
    assert seen_by_jax.tolist() == [0.0, 7.0, 0.0, 0.0]


def test_cupy_is_not_imported_on_the_cpu_path():
    code = "import sys, taugrad; taugrad.ones(3) + 1; taugrad.cuda.is_available; print('cupy' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=str(os.path.dirname(os.path.dirname(taugrad.__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_moves_are_twice_differentiable(fake_cuda):
    """The move's rule runs on Tensors under create_graph (the gradient moves back as a recorded op)."""
    x = taugrad.tensor([0.5, -1.0, 2.0], dtype=taugrad.float64, requires_grad=True)
    y = x.to("cuda")
    (g,) = taugrad.autograd.grad((y ** 3).sum(), x, create_graph=True)
    assert g.device.type == "cpu" and g.grad_fn is not None
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    (h,) = taugrad.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.detach().numpy())


def test_state_dicts_load_across_devices(fake_cuda):
    cpu_model = nn.Linear(3, 2)
    gpu_model = copy.deepcopy(cpu_model).cuda()
    assert gpu_model.weight.device == CUDA0
    cpu_model.weight.data.fill_(0.5)
    weight = gpu_model.weight
    gpu_model.load_state_dict(cpu_model.state_dict())  # host values into device parameters, in place
    assert gpu_model.weight is weight and weight.device == CUDA0
    np.testing.assert_array_equal(weight.detach().cpu().numpy(), np.full((2, 3), 0.5, np.float32))
    back = nn.Linear(3, 2)
    back.load_state_dict(gpu_model.state_dict())  # device values into host parameters
    assert back.weight.device.type == "cpu" and back.weight.tolist() == [[0.5] * 3] * 2


def test_creation_allocates_under_the_devices_context(fake_cuda):
    """CuPy allocates on its current GPU: a factory function for cuda:1 must select that GPU around the call."""
    entered = []

    @contextlib.contextmanager
    def use_device(dev):
        entered.append(dev)
        yield

    record = backend._BY_DEVICE_TYPE["cuda"]
    record.use_device = use_device
    for make in (lambda d: taugrad.zeros(2, device=d), lambda d: taugrad.ones(2, device=d),
                 lambda d: taugrad.empty(2, device=d), lambda d: taugrad.full((2,), 1.0, device=d),
                 lambda d: taugrad.eye(2, device=d), lambda d: taugrad.zeros_like(taugrad.ones(2), device=d)):
        entered.clear()
        make("cuda:1")
        assert entered == [taugrad.device("cuda", 1)]

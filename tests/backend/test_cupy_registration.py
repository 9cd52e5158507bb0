"""The CuPy code path of the backend, run without a GPU: a stand-in ``cupy`` module made of the strict fake.

``backend_for('cuda')`` imports CuPy, counts GPUs, registers CuPy's array
type and ``cupy.add.at``; ``taugrad.cuda`` asks CuPy's runtime.  Here
``sys.modules['cupy']`` and ``['cupyx']`` are stand-ins (the strict fake's
arrays and module, plus the runtime calls taugrad makes), so that path runs on
every machine; the real CuPy runs it in the ``cuda``-marked GPU suite.
"""
from __future__ import annotations

import copy
import sys
import types

import numpy as np
import pytest

import taugrad
from taugrad.tensors.core import backend

from . import strict_backend
from .strict_backend import StrictArray


class _Runtime:
    calls: list = []

    @staticmethod
    def getDeviceCount():
        return 1

    @staticmethod
    def getDevice():
        return 0

    @staticmethod
    def setDevice(index):
        _Runtime.calls.append(("setDevice", index))

    @staticmethod
    def getDeviceProperties(index):
        return {"name": b"Stand-in GPU", "major": 9, "minor": 0}

    @staticmethod
    def runtimeGetVersion():
        return 13000


class _Device:
    def __init__(self, index=0):
        self.index = index

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        _Runtime.calls.append(("synchronize", self.index))


class _Pool:
    def used_bytes(self):
        return 0

    def free_all_blocks(self):
        _Runtime.calls.append(("free_all_blocks",))


def _stand_in_cupy():
    cupy = types.ModuleType("cupy")
    cupy.__getattr__ = lambda name: getattr(strict_backend.xp, name)  # every array function: the strict fake's
    cupy.ndarray = StrictArray
    cupy.asnumpy = lambda a: a._a.copy()
    cupy.cuda = types.SimpleNamespace(runtime=_Runtime, Device=_Device)
    cupy.get_default_memory_pool = _Pool
    cupyx = types.ModuleType("cupyx")
    scatter_calls = []

    def add_at(target, index, values):
        assert target.dtype in (np.float32, np.float64, np.int32), f"cupy.add.at given {target.dtype}"
        scatter_calls.append(target.dtype)
        strict_backend._scatter_add(target, index, values)

    def deprecated_scatter_add(target, index, values):
        raise AssertionError("cupyx.scatter_add called where cupy.add.at exists (CuPy warns it is deprecated)")

    cupy.add = _AddWithAt(add_at)
    cupyx.scatter_add = deprecated_scatter_add
    return cupy, cupyx, scatter_calls


class _AddWithAt:
    """``cupy.add``: the fake's ufunc, with CuPy's ``add.at`` (atomic adds, float and int32 only)."""

    def __init__(self, at):
        self._add = strict_backend.xp.add
        self.at = at

    def __call__(self, *args, **kwargs):
        return self._add(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._add, name)


@pytest.fixture
def stand_in(monkeypatch):
    cupy, cupyx, scatter_calls = _stand_in_cupy()
    backend.unregister_backend("cuda")
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    _Runtime.calls.clear()
    yield scatter_calls
    backend.unregister_backend("cuda")


def test_cuda_is_registered_from_cupy_on_first_use(stand_in):
    assert taugrad.cuda.is_available() and taugrad.cuda.device_count() == 1
    assert backend.backend_for("cuda") is sys.modules["cupy"]
    x = taugrad.arange(6.0, device="cuda").reshape(2, 3)
    assert type(x._data) is StrictArray and x.device == taugrad.device("cuda", 0)
    assert taugrad.cuda.get_device_name() == "Stand-in GPU"
    assert taugrad.cuda.get_device_capability() == (9, 0)
    taugrad.cuda.synchronize()
    taugrad.cuda.set_device(0)
    taugrad.cuda.empty_cache()
    assert ("synchronize", 0) in _Runtime.calls and ("setDevice", 0) in _Runtime.calls
    with pytest.raises(RuntimeError, match=r"CUDA device 3 requested, but there are only 1 CUDA devices"):
        taugrad.zeros(2, device="cuda:3")
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(6.0).reshape(2, 3))


def test_a_cupy_array_made_by_the_user_is_recognised(stand_in):
    array = sys.modules["cupy"].asarray(np.ones(3))  # as if the user made it with CuPy before any CUDA tensor
    t = taugrad.tensor(array)
    assert t.device == taugrad.device("cuda", 0)
    assert t.is_cuda


def test_scatter_add_uses_cupy_add_at_where_it_can_and_the_host_for_other_dtypes(stand_in):
    for dtype in ("float32", "int64"):
        target = taugrad.zeros(4, dtype=dtype, device="cuda")._data
        index = sys.modules["cupy"].asarray(np.array([0, 2, 2]))
        backend.scatter_add(target, index, sys.modules["cupy"].asarray(np.ones(3, dtype=dtype)))
        np.testing.assert_array_equal(target._a, np.array([1, 0, 2, 0], dtype=dtype))
    assert stand_in == [np.dtype("float32")]  # int64 never reached cupy.add.at (no atomic add for it)


def test_a_training_step_through_the_cupy_path_equals_the_cpu(stand_in):
    model = taugrad.nn.Sequential(taugrad.nn.Linear(5, 4), taugrad.nn.ReLU(), taugrad.nn.Linear(4, 3))
    x, y = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32), np.array([0, 1, 2, 0, 1, 2])
    results = []
    for device in ("cpu", "cuda"):
        taugrad.manual_seed(0)
        net = copy.deepcopy(model).to(device)
        opt = taugrad.optim.Adam(net.parameters(), lr=0.1)
        for _ in range(2):
            loss = taugrad.nn.functional.cross_entropy(net(taugrad.tensor(x, device=device)),
                                                       taugrad.tensor(y, device=device))
            opt.zero_grad()
            loss.backward()
            opt.step()
        results.append([p.detach().cpu().numpy() for p in net.parameters()])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("make", [
    lambda: taugrad.nn.Linear(5, 4, device="cuda").weight,
    lambda: taugrad.nn.Linear(5, 4).to("cuda").weight,
    lambda: taugrad.tensor(np.asfortranarray(np.ones((3, 2))), device="cuda"),
], ids=["made-there", "moved", "from-fortran-array"])
def test_parameters_are_row_major_on_the_gpu_so_updates_read_them_in_order(stand_in, make):
    """CuPy's elementwise results are row-major: a column-major weight would be updated strided."""
    assert make()._data.flags.c_contiguous


def test_weight_gradient_on_the_gpu_has_the_weight_layout(stand_in):
    layer = taugrad.nn.Linear(5, 4, device="cuda")
    layer(taugrad.ones(3, 5, device="cuda")).sum().backward()
    assert layer.weight.grad._data.flags.c_contiguous

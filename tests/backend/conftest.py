"""Fixtures of the backend tests: the device backend under test, registered as ``'cuda'``.

``device_backend`` is parametrized over ``"strict-fake"`` (the NumPy-backed
fake that refuses every NumPy call, on every machine) and ``"cupy"`` (real
CuPy on a GPU, marked ``cuda``, skipped with the reason where CuPy or a GPU is
missing).  ``fake_cuda`` is the fake alone, for the user-side tests.
"""
from __future__ import annotations

import pytest

from taugrad.tensors.core import backend

from . import strict_backend

BACKENDS = ["strict-fake", pytest.param("cupy", marks=pytest.mark.cuda)]


def cupy_missing_reason():
    """Why real CuPy cannot run here, or None when it can."""
    cupy = backend.cupy_or_none()
    if cupy is None:
        return "CuPy is not installed (pip install -e '.[cuda]' on a machine with a GPU)"
    if backend.gpu_count(cupy) == 0:
        return "CuPy is installed but finds no GPU"
    return None


@pytest.fixture
def fake_cuda():
    """The strict fake registered as 'cuda' for one test (whatever was registered before comes back after)."""
    before = backend._BY_DEVICE_TYPE.get("cuda")
    strict_backend.install("cuda")
    yield strict_backend
    strict_backend.uninstall("cuda")
    if before is not None:
        backend.register_backend("cuda", before.module, before.array_type, to_host=before.to_host,
                                 from_host=before.from_host, device_of=before.device_of,
                                 scatter_add=before.scatter_add, use_device=before.use_device)


@pytest.fixture(params=BACKENDS)
def device_backend(request):
    """``(name, tolerance)`` with that backend serving 'cuda' for the test."""
    name = request.param
    if name == "strict-fake":
        with_fake = request.getfixturevalue("fake_cuda")
        assert with_fake is strict_backend
        yield name, None  # computes with NumPy: results must be EQUAL
        return
    reason = cupy_missing_reason()
    if reason:
        pytest.skip(reason)
    backend.unregister_backend("cuda")  # a fake left by another test must not stand in for CuPy
    backend.backend_for("cuda")
    yield name, dict(rtol=1e-7, atol=1e-9)

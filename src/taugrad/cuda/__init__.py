"""``taugrad.cuda``: CUDA devices, as ``torch.cuda``, answered by CuPy.

Nothing here imports CuPy at ``import taugrad``: each question imports it on
first use (``is_available()`` is False and ``device_count()`` 0 when CuPy or
a GPU is missing, as PyTorch answers on a machine without CUDA).  Seeding is
accepted everywhere, as PyTorch's is (it seeds the CUDA generators, which
draw on the host).  What needs a device raises a one-line ``RuntimeError``
saying what is missing: CuPy, or a GPU.
"""
from __future__ import annotations

from taugrad.tensors.core import backend as _backend
from taugrad.tensors.core.device_checks import raise_pending
from taugrad.tensors.core.generator import _CUDA_SEED, cuda_generator, manual_seed_cuda

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "current_device", "set_device", "get_device_name", "get_device_capability", "synchronize",
           "empty_cache", "memory_allocated", "default_generators", "get_rng_state", "set_rng_state"]


def _cupy(op: str = "cuda"):
    """The CuPy module serving CUDA (or the registered stand-in); RuntimeError saying what is missing."""
    try:
        return _backend.backend_for("cuda")
    except RuntimeError as error:
        raise RuntimeError(f"{op}: {error}") from None


def _is_cupy(module) -> bool:
    return getattr(module, "__name__", "") == "cupy"


def is_available() -> bool:
    """True when a CUDA device can be used (CuPy installed and at least one GPU)."""
    return device_count() > 0


def device_count() -> int:
    """The number of CUDA devices (0 without CuPy or a GPU)."""
    try:
        module = _cupy()
    except RuntimeError:
        return 0
    return _backend.gpu_count(module) if _is_cupy(module) else 1


def _index(device, op: str) -> int:
    if device is None:
        return current_device()
    dev = _backend.as_device(device)
    if dev.type != "cuda":
        raise ValueError(f"{op}: expected a CUDA device, got {str(dev)!r}")
    return current_device() if dev.index is None else dev.index


def current_device() -> int:
    """The index of the current CUDA device."""
    module = _cupy("cuda.current_device")
    return int(module.cuda.runtime.getDevice()) if _is_cupy(module) else 0


def set_device(device) -> None:
    """Make ``device`` (an index, 'cuda:N' or a device) the current CUDA device."""
    module = _cupy("cuda.set_device")
    index = _index(device, "cuda.set_device")
    if _is_cupy(module):
        module.cuda.runtime.setDevice(index)


def get_device_name(device=None) -> str:
    """The GPU's name ('NVIDIA H200'...)."""
    module = _cupy("cuda.get_device_name")
    index = _index(device, "cuda.get_device_name")
    if not _is_cupy(module):
        return "taugrad test backend"
    name = module.cuda.runtime.getDeviceProperties(index)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None) -> tuple:
    """The compute capability ``(major, minor)``."""
    module = _cupy("cuda.get_device_capability")
    index = _index(device, "cuda.get_device_capability")
    if not _is_cupy(module):
        return (0, 0)
    props = module.cuda.runtime.getDeviceProperties(index)
    return (int(props["major"]), int(props["minor"]))


def synchronize(device=None) -> None:
    """Wait until every kernel queued on the device has finished (for timing).

    Then raises the error of any index check the device failed meanwhile (a
    class target or embedding index out of range), as torch's device-side
    asserts surface at its synchronize.
    """
    module = _cupy("cuda.synchronize")
    if _is_cupy(module):
        if device is None:
            module.cuda.Device().synchronize()
        else:
            module.cuda.Device(_index(device, "cuda.synchronize")).synchronize()
    raise_pending()


def empty_cache() -> None:
    """Give the memory CuPy holds in its pool back to the driver (nothing to do without CuPy)."""
    try:
        module = _cupy()
    except RuntimeError:
        return
    if _is_cupy(module):
        module.get_default_memory_pool().free_all_blocks()


def memory_allocated(device=None) -> int:
    """Bytes held by tensors on the device (CuPy's memory pool, in use)."""
    module = _cupy("cuda.memory_allocated")
    return int(module.get_default_memory_pool().used_bytes()) if _is_cupy(module) else 0


def manual_seed(seed) -> None:
    """Seed the CUDA generators (safe without CUDA, as PyTorch's)."""
    manual_seed_cuda(seed, "cuda.manual_seed")


def manual_seed_all(seed) -> None:
    """Seed every CUDA device's generator."""
    manual_seed_cuda(seed, "cuda.manual_seed_all")


def seed() -> None:
    """Seed the CUDA generator of the current device non-deterministically."""
    cuda_generator(0).seed()


def seed_all() -> None:
    """Seed every CUDA generator non-deterministically."""
    _CUDA_SEED[0] = None
    cuda_generator(0).seed()


def initial_seed() -> int:
    """The seed the current device's CUDA generator started from."""
    return cuda_generator(0).initial_seed()


def get_rng_state(device="cuda"):
    """The state of a CUDA generator (a uint8 tensor)."""
    return cuda_generator(_backend.as_device(device).index or 0).get_state()


def set_rng_state(new_state, device="cuda") -> None:
    """Restore a CUDA generator's state from :func:`get_rng_state`."""
    cuda_generator(_backend.as_device(device).index or 0).set_state(new_state)


class _DefaultGenerators:
    """``taugrad.cuda.default_generators[i]``: device ``i``'s generator."""

    def __getitem__(self, index: int):
        return cuda_generator(int(index))

    def __len__(self) -> int:
        return device_count()


default_generators = _DefaultGenerators()

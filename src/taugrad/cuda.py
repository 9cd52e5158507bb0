"""``taugrad.cuda``: what ``torch.cuda`` answers on a machine without CUDA.

taugrad computes on the CPU, so ``is_available()`` is False and
``device_count()`` is 0; seeding calls are accepted and do nothing (there is
no CUDA generator to seed), so scripts that seed every backend run unchanged.
Anything that needs a CUDA device raises the one-line ``RuntimeError`` of
``.to('cuda')``.
"""
from __future__ import annotations

from taugrad.tensors.device import device as _device
from taugrad.tensors.device import unavailable
from taugrad.tensors.generator import _check_seed

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "current_device", "get_device_name", "synchronize", "empty_cache"]


def is_available() -> bool:
    """False: taugrad has no CUDA backend on this machine."""
    return False


def device_count() -> int:
    """0 CUDA devices."""
    return 0


def manual_seed(seed) -> None:
    """Accepted and ignored (no CUDA generator); the seed is still checked as ``taugrad.manual_seed`` does."""
    _check_seed(seed, "cuda.manual_seed")


def manual_seed_all(seed) -> None:
    """Accepted and ignored, as :func:`manual_seed`."""
    _check_seed(seed, "cuda.manual_seed_all")


def seed() -> None:
    """Nothing to seed."""


def seed_all() -> None:
    """Nothing to seed."""


def empty_cache() -> None:
    """Nothing cached: a no-op (as in PyTorch without CUDA)."""


def current_device() -> int:
    raise unavailable(_device("cuda"), "cuda.current_device")


def get_device_name(device=None) -> str:
    raise unavailable(_device("cuda"), "cuda.get_device_name")


def synchronize(device=None) -> None:
    raise unavailable(_device("cuda"), "cuda.synchronize")

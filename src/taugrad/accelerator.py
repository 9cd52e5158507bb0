"""``taugrad.accelerator``: as ``torch.accelerator``: CUDA when a GPU and CuPy are there, else none."""
from __future__ import annotations

from taugrad import cuda
from taugrad.tensors.core.device import device

__all__ = ["is_available", "current_accelerator", "device_count"]


def is_available() -> bool:
    """True when a CUDA GPU can be used (CuPy and a GPU)."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False):
    """``device(type='cuda')`` when a GPU can be used, else None (``device = acc or 'cpu'`` picks the CPU)."""
    return device("cuda") if cuda.is_available() else None


def device_count() -> int:
    """The number of CUDA devices (0 without CuPy or a GPU)."""
    return cuda.device_count()

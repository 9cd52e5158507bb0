"""``taugrad.accelerator``: as ``torch.accelerator`` on a machine with none (taugrad runs on the CPU)."""
from __future__ import annotations

__all__ = ["is_available", "current_accelerator", "device_count"]


def is_available() -> bool:
    """False: no accelerator."""
    return False


def current_accelerator(check_available: bool = False):
    """None: no accelerator (``device = acc or 'cpu'`` style code picks the CPU)."""
    return None


def device_count() -> int:
    """0 accelerators."""
    return 0

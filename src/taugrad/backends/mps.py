"""``taugrad.backends.mps``: Apple's Metal backend is not available (taugrad runs on the CPU)."""
from __future__ import annotations


def is_available() -> bool:
    """False: no MPS device."""
    return False


def is_built() -> bool:
    """False: taugrad has no MPS backend."""
    return False

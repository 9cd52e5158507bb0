"""Helpers shared by the sub-commands."""
from __future__ import annotations

import math
import os

#: seeds reach NumPy's legacy ``RandomState`` (micrograd's moons data), which takes 0 .. 2**32 - 1
MAX_SEED = 2**32 - 1


class CommandError(Exception):
    """A user mistake on the command line: printed as one line, exit status 2."""


def check_seed(seed: int, option: str = "--seed") -> int:
    """``seed`` if NumPy can seed with it, else a one-line error (not NumPy's traceback)."""
    if not 0 <= seed <= MAX_SEED:
        raise CommandError(f"{option} must be between 0 and {MAX_SEED} (2**32 - 1), got {seed}")
    return seed


def check_eps(eps: float, option: str = "--eps") -> float:
    """A finite-difference step must be positive and finite (inf makes every difference nan)."""
    if not eps > 0:
        raise CommandError(f"{option} must be positive, got {eps}")
    if not math.isfinite(eps):
        raise CommandError(f"{option} must be finite, got {eps}")
    return eps


def check_directory(path: str, option: str = "--plots") -> str:
    """Create ``path`` now, so that a bad folder fails before the run instead of after it."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise CommandError(f"cannot create {option} directory {path!r}: {err.strerror or err}") from None
    if not os.access(path, os.W_OK):
        raise CommandError(f"cannot write to {option} directory {path!r}: permission denied")
    return path

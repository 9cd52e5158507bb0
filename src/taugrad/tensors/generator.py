"""Random numbers: one seedable default generator, as ``torch.manual_seed``.

Every random op (``randn``, ``rand``, ``dropout``, ``normal_``...) takes an
optional ``generator`` (a ``numpy.random.Generator``); without one it uses the
default, which ``taugrad.manual_seed(seed)`` resets for reproducible runs.
"""
from __future__ import annotations

import numpy as np

_default = [np.random.default_rng()]


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed the default generator (returns it); ``seed`` is a non-negative int."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"manual_seed: seed must be a non-negative int, got {seed!r}")
    _default[0] = np.random.default_rng(int(seed))
    return _default[0]


def default_generator() -> np.random.Generator:
    """The generator random ops use when none is passed."""
    return _default[0]


def get_generator(generator=None) -> np.random.Generator:
    if generator is None:
        return _default[0]
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a numpy.random.Generator, got {type(generator).__name__}")

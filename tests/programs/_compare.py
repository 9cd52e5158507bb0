"""Shared by the program tests: run one program with taugrad and with torch, compare the numbers."""
from __future__ import annotations

import numpy as np

import taugrad

# float64 runs must agree to 1e-10 (relative); float32 runs to 1e-5 relative with an absolute floor,
# since NumPy and torch sum float32 in different orders
TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6)}


def assert_close_steps(ours, theirs, dtype: str = "float32") -> None:
    """Two lists of per-step numbers (losses) agree step by step."""
    rtol, atol = TOLERANCE[dtype]
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    bad = ~np.isclose(ours, theirs, rtol=rtol, atol=atol)
    assert not bad.any(), f"first difference at step {int(np.argmax(bad))}: {ours[bad][:3]} vs {theirs[bad][:3]}"


def to_taugrad_state(torch_state) -> dict:
    """A torch state dict as the dict of taugrad tensors that ``load_state_dict`` takes."""
    return {name: taugrad.tensor(value.detach().numpy().copy()) for name, value in torch_state.items()}


def numpy_of(t) -> np.ndarray:
    """The values of a taugrad or torch tensor as a NumPy array."""
    return t.detach().numpy().copy()

"""``torch.nn.functional.pad`` (PyTorch files it under vision functions, with ``interpolate``)."""
from __future__ import annotations

from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops import shape as _shape
from taugrad.tensors.ops.conv import pad_mode
from taugrad.tensors.ops.norm import interpolate

__all__ = ["pad", "interpolate"]


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """``torch.nn.functional.pad``: widths ``(left, right, top, bottom, ...)``, last dimension first.

    ``'constant'`` surrounds the tensor with ``value`` (0 by default).
    ``'reflect'`` mirrors it without repeating the edge, ``'replicate'`` repeats the
    edge, ``'circular'`` wraps around; these pad 1 to 3 last dims of a tensor with
    channels (and a batch dim or not), as PyTorch's.
    """
    if mode == "constant":
        return _shape.pad(input, pad, "constant", 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
    if value is not None and value != 0:
        raise ValueError(f"pad: mode {mode!r} takes no value (got {value!r})")
    return pad_mode(input, pad, mode, "pad")

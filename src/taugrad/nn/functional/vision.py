"""``torch.nn.functional.pad`` (PyTorch files it under vision functions, with ``interpolate``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops import shape as _shape
from taugrad.tensors.ops.conv import pad_mode
from taugrad.tensors.ops.norm import interpolate

__all__ = ["pad", "interpolate", "pixel_shuffle", "pixel_unshuffle"]


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """``torch.nn.functional.pad``: widths ``(left, right, top, bottom, ...)``, last dimension first.

    ``'constant'`` surrounds the tensor with ``value`` (0 by default).
    ``'reflect'`` mirrors it without repeating the edge, ``'replicate'`` repeats the
    edge, ``'circular'`` wraps around; these pad 1 to 3 last dims of a tensor with
    channels (and a batch dim or not), as PyTorch's.
    """
    if mode == "constant":
        input, pad = _crop_negative(input, pad)
        return _shape.pad(input, pad, "constant", 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
    if value is not None and value != 0:
        raise ValueError(f"pad: mode {mode!r} takes no value (got {value!r})")
    return pad_mode(input, pad, mode, "pad")


def _crop_negative(input: Any, pad) -> tuple:
    """A negative width removes that many elements from its side (PyTorch's ``constant_pad_nd``): the input is
    sliced first (a view in the graph), and the widths that remain are those >= 0."""
    if not all(isinstance(w, (int, np.integer)) and not isinstance(w, bool) for w in pad):
        return input, pad  # not PyTorch's flat widths: the op says what is wrong
    widths = tuple(int(w) for w in pad)
    if not any(w < 0 for w in widths):
        return input, pad
    x = input if isinstance(input, Tensor) else Tensor(input)
    if len(widths) % 2 or len(widths) // 2 > x.ndim:
        raise ValueError(f"pad: {len(widths)} widths do not fit a tensor of shape {tuple(x.shape)}")
    index = [slice(None)] * x.ndim
    for i in range(len(widths) // 2):
        d = x.ndim - 1 - i
        lo, hi = widths[2 * i], widths[2 * i + 1]
        size = x.shape[d]
        start, stop = max(-lo, 0), size + min(hi, 0)
        if stop - start + max(lo, 0) + max(hi, 0) < 0:
            raise ValueError(f"pad: the widths ({lo}, {hi}) of dim {d} would give it a negative size, "
                             f"from {size}")
        index[d] = slice(start, max(stop, start))
    return x[tuple(index)], tuple(max(w, 0) for w in widths)


def _pixel_input(input: Any, factor: int, op: str, name: str) -> Tensor:
    x = input if isinstance(input, Tensor) else Tensor(input)
    if x.ndim < 3:
        raise ValueError(f"{op}: expected an input of at least 3 dimensions (*, C, H, W), got shape {tuple(x.shape)}")
    if isinstance(factor, bool) or not isinstance(factor, int) or factor <= 0:
        raise ValueError(f"{op}: {name} must be a positive integer, got {factor!r}")
    return x


def pixel_shuffle(input: Any, upscale_factor: int) -> Tensor:
    r"""(*, C r^2, H, W) -> (*, C, H r, W r): :math:`y_{c,\, h r + i,\, w r + j} = x_{c r^2 + i r + j,\, h,\, w}`
    (Shi et al., 2016); a reshape and a permutation, so the gradient is their inverse."""
    r = upscale_factor
    x = _pixel_input(input, r, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle: the channel dim of size {c} must be divisible by the square of "
                         f"upscale_factor, which is {r * r}")
    n = len(lead)
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    y = y.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Any, downscale_factor: int) -> Tensor:
    r"""(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of :func:`pixel_shuffle`."""
    r = downscale_factor
    x = _pixel_input(input, r, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = x.shape
    if h % r or w % r:
        raise ValueError(f"pixel_unshuffle: the height {h} and width {w} must be divisible by downscale_factor {r}")
    n = len(lead)
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    y = y.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)

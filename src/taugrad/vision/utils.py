"""``torchvision.utils``: ``make_grid`` tiles a batch of images into one, ``save_image`` writes it as a PNG."""
from __future__ import annotations

import math
import os
from typing import Any, BinaryIO, List, Optional, Tuple, Union

import numpy as np

from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.creation import from_numpy
from taugrad.vision.png import write_png

__all__ = ["make_grid", "save_image"]


def _values(tensor: Any) -> np.ndarray:
    if isinstance(tensor, (list, tuple)):
        if not tensor or not all(isinstance(t, Tensor) for t in tensor):
            raise TypeError("make_grid: a list must hold tensors of one shape")
        return np.stack([t.detach().cpu().numpy() for t in tensor])
    if not isinstance(tensor, Tensor):
        raise TypeError(f"make_grid: tensor should be a Tensor or a list of tensors, got {type(tensor).__name__}")
    return tensor.detach().cpu().numpy()


def _grid_array(tensor: Any, nrow: int = 8, padding: int = 2, normalize: bool = False,
                value_range: Optional[Tuple[float, float]] = None, scale_each: bool = False,
                pad_value: float = 0.0) -> np.ndarray:
    images = _values(tensor)
    if images.ndim == 2:  # one gray image
        images = images[None]
    if images.ndim == 3:  # one image (C, H, W)
        if images.shape[0] == 1:
            images = np.concatenate([images] * 3, 0)
        images = images[None]
    if images.ndim != 4:
        raise ValueError(f"make_grid: expected a (B, C, H, W) batch, got shape {images.shape}")
    if images.shape[1] == 1:  # gray batches are shown as RGB
        images = np.concatenate([images] * 3, 1)
    if normalize:
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("make_grid: value_range has to be a tuple (min, max) if specified. min and max are numbers")
        images = images.copy()
        parts = list(images) if scale_each else [images]
        for part in parts:  # views: scaled in place
            low, high = value_range if value_range is not None else (part.min(), part.max())
            np.clip(part, low, high, out=part)
            part -= low
            part /= max(high - low, 1e-5)
    if images.shape[0] == 1:
        return images[0]
    count = images.shape[0]
    cols = min(nrow, count)
    rows = int(math.ceil(count / cols))
    height, width = images.shape[2] + padding, images.shape[3] + padding
    grid = np.full((images.shape[1], height * rows + padding, width * cols + padding), pad_value, dtype=images.dtype)
    for k in range(count):
        y, x = divmod(k, cols)
        grid[:, y * height + padding:(y + 1) * height, x * width + padding:(x + 1) * width] = images[k]
    return grid


def make_grid(tensor: Union[Tensor, List[Tensor]], nrow: int = 8, padding: int = 2, normalize: bool = False,
              value_range: Optional[Tuple[float, float]] = None, scale_each: bool = False,
              pad_value: float = 0.0) -> Tensor:
    """Tile a ``(B, C, H, W)`` batch (or a list of ``(C, H, W)`` images) into one ``(C, H', W')`` image.

    ``nrow`` images per row; each image sits in a ``padding``-pixel frame of
    ``pad_value``, so with ``R = ceil(B / nrow)`` rows and ``K = min(nrow, B)``
    columns ``H' = R (H + padding) + padding`` and ``W' = K (W + padding) +
    padding``.  One-channel images become three identical channels.  With
    ``normalize=True`` the values are clamped to ``value_range`` (default: the
    batch's min and max, or each image's with ``scale_each``) and mapped
    linearly onto [0, 1]: ``(x - low) / max(high - low, 1e-5)``.  A batch of
    one image is returned without the frame.
    """
    grid = _grid_array(tensor, nrow, padding, normalize, value_range, scale_each, pad_value)
    like = tensor[0] if isinstance(tensor, (list, tuple)) else tensor
    return from_numpy(np.ascontiguousarray(grid)).to(device=like.device)


def save_image(tensor: Union[Tensor, List[Tensor]], fp: Union[str, os.PathLike, BinaryIO], format: Optional[str] = None,
               **kwargs: Any) -> None:
    """Write :func:`make_grid` ``(tensor, **kwargs)`` as a PNG: values in [0, 1] become bytes ``clamp(255 x + 0.5)``.

    Only PNG is written (``format`` may be ``None`` or ``"png"``; a file name
    must end in ``.png``), with the standard library: Pillow is not needed.
    """
    name = fp if isinstance(fp, str) else os.fspath(fp) if isinstance(fp, os.PathLike) else None
    kind = (format or (os.path.splitext(name)[1][1:] if name else "png")).lower()
    if kind != "png":
        raise ValueError(f"save_image: taugrad writes PNG files only, got format {kind!r}")
    grid = _grid_array(tensor, **kwargs).astype(np.float64)
    pixels = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    write_png(name if name is not None else fp, np.ascontiguousarray(pixels))

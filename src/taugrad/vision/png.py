"""Writing a PNG file with the standard library (``zlib`` and ``struct``), so saving images needs no Pillow.

A PNG is an 8-byte signature and chunks ``length, type, data, CRC-32``:
``IHDR`` (width, height, bit depth 8, colour type), one ``IDAT`` holding the
zlib-compressed scanlines (each row prefixed by filter byte 0, "none"), and
an empty ``IEND``.
"""
from __future__ import annotations

import struct
import zlib
from typing import BinaryIO, Union

import numpy as np

__all__ = ["encode_png", "write_png"]

SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: PNG colour types by channel count: gray, gray + alpha, RGB, RGBA
COLOUR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(pixels: np.ndarray) -> bytes:
    """The bytes of a PNG of a ``uint8`` image, height x width or height x width x (1 to 4) channels."""
    if pixels.dtype != np.uint8:
        raise TypeError(f"encode_png: pixels must be uint8, got {pixels.dtype}")
    image = pixels[:, :, None] if pixels.ndim == 2 else pixels
    if image.ndim != 3 or image.shape[2] not in COLOUR_TYPES or 0 in image.shape[:2]:
        raise ValueError(f"encode_png: expected a non-empty height x width x 1..4 image, got shape {pixels.shape}")
    height, width, channels = image.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), image.reshape(height, width * channels)], axis=1)
    header = struct.pack(">IIBBBBB", width, height, 8, COLOUR_TYPES[channels], 0, 0, 0)
    body = zlib.compress(rows.tobytes(), 6)
    return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", body) + _chunk(b"IEND", b"")


def write_png(fp: Union[str, BinaryIO], pixels: np.ndarray) -> None:
    """Write :func:`encode_png`'s bytes to a path or an open binary file."""
    data = encode_png(pixels)
    if hasattr(fp, "write"):
        fp.write(data)
    else:
        with open(fp, "wb") as f:
            f.write(data)

"""The idx file format MNIST ships in, read with every header field checked.

An idx file is a 4-byte magic number ``0x00 0x00 TYPE NDIM``, then NDIM
big-endian unsigned 32-bit sizes, then the values row-major.  MNIST's files
hold unsigned bytes (TYPE ``0x08``): images with NDIM 3 (magic 2051), labels
with NDIM 1 (magic 2049).  The reader refuses, with one line naming the file,
anything that is not exactly that: another type or rank, a header cut short,
or data longer or shorter than the sizes say, so it never reads past the end.
"""
from __future__ import annotations

import gzip
import struct
from typing import Tuple

import numpy as np

__all__ = ["parse_idx", "read_idx"]

UBYTE = 0x08


def parse_idx(blob: bytes, ndim: int, what: str) -> np.ndarray:
    """The ``uint8`` array an idx file of rank ``ndim`` holds (``what`` names the file in errors)."""
    if len(blob) < 4:
        raise ValueError(f"{what}: {len(blob)} bytes is too short for an idx header")
    zero, type_code, rank = struct.unpack(">HBB", blob[:4])
    magic = int.from_bytes(blob[:4], "big")
    if zero != 0 or type_code != UBYTE or rank != ndim:
        expected = (UBYTE << 8) | ndim
        raise ValueError(f"{what}: magic number {magic} is not that of an idx file of {ndim}-d unsigned bytes "
                         f"({expected})")
    header = 4 + 4 * ndim
    if len(blob) < header:
        raise ValueError(f"{what}: the idx header is cut short ({len(blob)} of {header} bytes)")
    sizes: Tuple[int, ...] = struct.unpack(">" + "I" * ndim, blob[4:header])
    count = int(np.prod(sizes, dtype=object))
    if len(blob) - header != count:
        raise ValueError(f"{what}: the header says {'x'.join(map(str, sizes))} = {count} bytes of data, "
                         f"the file has {len(blob) - header}")
    return np.frombuffer(blob, dtype=np.uint8, offset=header).reshape(sizes)


def read_idx(path: str, ndim: int) -> np.ndarray:
    """Read the idx file at ``path`` (gzip-compressed when it ends in ``.gz``) as :func:`parse_idx` does."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            blob = f.read()
    except (OSError, EOFError) as err:  # a damaged .gz stream
        raise ValueError(f"{path}: cannot be read ({err})") from None
    return parse_idx(blob, ndim, path)

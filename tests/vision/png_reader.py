"""A minimal PNG reader for the tests: 8-bit, non-interlaced, every filter type (what a writer may use)."""
from __future__ import annotations

import struct
import zlib

import numpy as np

CHANNELS = {0: 1, 4: 2, 2: 3, 6: 4}


def read_png(data: bytes) -> np.ndarray:
    """The pixels of a PNG as a height x width x channels ``uint8`` array; checks signature and every CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, f"bad CRC in {kind!r}"
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and interlace == 0
    ch = CHANNELS[colour]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * ch)
    out = np.zeros((height, width * ch), np.int64)
    for y in range(height):
        kind, row = raw[y, 0], raw[y, 1:].astype(np.int64)
        prev = out[y - 1] if y else np.zeros(width * ch, np.int64)
        for x in range(width * ch):
            left = out[y, x - ch] if x >= ch else 0
            up, corner = prev[x], (prev[x - ch] if x >= ch else 0)
            if kind == 0:
                pred = 0
            elif kind == 1:
                pred = left
            elif kind == 2:
                pred = up
            elif kind == 3:
                pred = (left + up) // 2
            else:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            out[y, x] = (row[x] + pred) % 256
    return out.astype(np.uint8).reshape(height, width, ch)

"""Evenly spaced values computed exactly as PyTorch computes them (``linspace``, histogram edges).

PyTorch fills ``linspace(lo, hi, n)`` from both ends, so both ends are exact:
with ``step = (hi - lo) / (n - 1)`` rounded to the dtype,

    x_i = lo + step * i              for i <  n // 2
    x_i = hi - step * (n - 1 - i)    for i >= n // 2

each with a single rounding (its CPU kernel uses fused multiply-adds).  The
single rounding is reproduced here with exact rational arithmetic, so the
values match PyTorch's bit for bit instead of to within an ulp.  That costs
a Python loop, so above :data:`EXACT_UP_TO` values the same formula is
evaluated with two roundings (within an ulp of PyTorch's).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np


#: the longest range computed with a single rounding per value
EXACT_UP_TO = 4096


def linspace_array(lo, hi, steps: int, dtype, xp=np):
    """``steps`` values from ``lo`` to ``hi`` inclusive, in ``dtype`` (a floating dtype), as an array of module ``xp``.

    The exact values are worked out on the host and then moved to ``xp``'s device.
    """
    dtype = np.dtype(dtype)
    if steps == 0:
        return xp.zeros(0, dtype=dtype)
    if steps == 1:
        return xp.full(1, lo, dtype=dtype)
    cast = dtype.type
    lo, hi = cast(lo), cast(hi)
    step = (hi - lo) / cast(steps - 1)
    half = steps // 2
    if steps > EXACT_UP_TO:
        i = xp.arange(steps).astype(dtype)
        return xp.where(i < half, lo + step * i, hi - step * (cast(steps - 1) - i)).astype(dtype)
    exact_lo, exact_hi, exact_step = Fraction(float(lo)), Fraction(float(hi)), Fraction(float(step))
    values = [exact_lo + exact_step * i if i < half else exact_hi - exact_step * (steps - 1 - i)
              for i in range(steps)]
    return xp.asarray(np.array([float(v) for v in values]).astype(dtype))

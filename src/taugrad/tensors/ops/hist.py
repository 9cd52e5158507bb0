"""Counting: ``bincount``, ``histc``, ``histogram`` (no gradients: counts are piecewise constant).

Bins follow PyTorch's rules, which are not NumPy's in every detail:

* ``histc(x, bins, min, max)``: element ``v`` in ``[min, max]`` goes to bin
  ``floor((v - min) * bins / (max - min))`` computed in ``x``'s dtype, and
  ``v == max`` to the last bin; ``min == max`` (both 0 by default) takes the
  data's range, widened by 1 on each side if that is a single point;
* ``histogram(x, bins, range=None)``: edges are ``linspace(min, max, bins + 1)``
  (or the given edges) and ``v`` goes to the last edge at or below it, the
  last bin being closed; a single-point range is widened by 0.5 on each side.
"""
from __future__ import annotations

import math
import operator
from collections import namedtuple

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.backend import is_array
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import Tensor, array_module, constant
from taugrad.tensors.core.rule import register
from taugrad.tensors.core.spacing import linspace_array

#: what ``histogram`` returns, like ``torch.return_types.histogram``
HistogramResult = namedtuple("HistogramResult", "hist bin_edges")


def _positive_int(value, name: str, op: str) -> int:
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int, got {value!r}") from None
    if n <= 0:
        raise ValueError(f"{op}: {name} must be positive, got {n}")
    return n


def _floating(x: Tensor, op: str):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if x._data.dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating tensor, got dtype {x._data.dtype}")
    return x._data.reshape(-1)


@register("bincount", methods=("bincount",))
def bincount(x: Tensor, weights=None, minlength: int = 0) -> Tensor:
    """How often each value ``0, 1, ..., max(x)`` occurs in the 1-D int tensor ``x``.

    With ``weights``: the sum of the weights of each value's occurrences
    (float64 for float64 weights, else float32, as PyTorch).  The result has at
    least ``minlength`` bins.
    """
    data = x._data if isinstance(x, Tensor) else x if is_array(x) else np.asarray(x)
    if data.ndim != 1 or data.dtype.kind not in "iub":
        raise ValueError(f"bincount: needs a 1-D tensor of non-negative ints, got shape {tuple(data.shape)} and "
                         f"dtype {data.dtype}")
    if data.size and data.min() < 0:
        raise ValueError(f"bincount: values must be non-negative, got {int(data.min())}")
    try:
        minlength = operator.index(minlength)
    except TypeError:
        raise TypeError(f"bincount: minlength must be an int, got {minlength!r}") from None
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    xp = array_module(data)
    if weights is None:
        return constant(xp.bincount(data, minlength=minlength).astype(np.int64, copy=False))
    w = A.array_like(weights, data, np.asarray)
    if w.shape != data.shape:
        raise ValueError(f"bincount: weights of shape {tuple(w.shape)} for an input of shape {tuple(data.shape)}")
    dtype = np.float64 if w.dtype == np.float64 else np.float32
    return constant(xp.bincount(data, weights=w, minlength=minlength).astype(dtype))


@register("histc", methods=("histc",))
def histc(x: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts of the elements of ``x`` in ``bins`` equal bins over ``[min, max]`` (see the module notes).

    Elements outside the range (and NaN) are not counted; the counts have ``x``'s dtype.
    """
    data = _floating(x, "histc")
    bins = _positive_int(bins, "bins", "histc")
    xp = array_module(data)
    dtype = data.dtype.type
    lo, hi = dtype(min), dtype(max)
    if lo == hi and data.size:  # the data's range, read on the host
        lo, hi = dtype(data.min().item()), dtype(data.max().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"histc: range [{lo}, {hi}] is not finite")
    if lo > hi:
        raise ValueError(f"histc: max ({hi}) must be larger than min ({lo})")
    inside = data[(data >= lo) & (data <= hi)]
    with quiet():
        position = ((inside - lo) * dtype(bins) / (hi - lo)).astype(np.int64)
    position = xp.minimum(position, bins - 1)  # v == max: the last bin
    return constant(xp.bincount(position, minlength=bins).astype(data.dtype))


@register("histogram", methods=("histogram",))
def histogram(x: Tensor, bins=100, *, range=None, weight=None, density: bool = False) -> HistogramResult:
    """``(hist, bin_edges)`` of the elements of ``x`` (see the module notes for the bins).

    ``bins``: the number of equal bins over ``range`` (the data's range by
    default), or a 1-D tensor of increasing edges.  ``weight``: each element
    counts its weight instead of 1.  ``density``: counts divided by
    ``total * bin width``, so the histogram integrates to 1.
    """
    data = _floating(x, "histogram")
    xp = array_module(data)
    dtype = data.dtype.type
    if isinstance(bins, (Tensor, list, tuple)) or is_array(bins):
        edges = A.array_like(bins, data, np.asarray).astype(data.dtype, copy=False)
        if edges.ndim != 1 or edges.size < 2 or (xp.diff(edges) < 0).any():
            raise ValueError(f"histogram: bin edges must be a 1-D increasing sequence of at least 2, got {edges}")
    else:
        n = _positive_int(bins, "bins", "histogram")
        if range is not None:
            lo, hi = dtype(range[0]), dtype(range[1])
        elif data.size:  # the data's range, read on the host
            lo, hi = dtype(data.min().item()), dtype(data.max().item())
        else:
            lo, hi = dtype(0), dtype(0)
        if lo == hi:
            lo, hi = lo - dtype(0.5), hi + dtype(0.5)
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            raise ValueError(f"histogram: range [{lo}, {hi}] must be finite with min <= max")
        edges = linspace_array(lo, hi, n + 1, data.dtype, xp)
    w = None
    if weight is not None:
        w = A.array_like(weight, data, np.asarray).reshape(-1)
        if w.size != data.size:
            raise ValueError(f"histogram: weight has {w.size} elements, the input {data.size}")
    inside = (data >= edges[0]) & (data <= edges[-1])
    position = xp.searchsorted(edges, data[inside], side="right") - 1
    position = xp.minimum(position, edges.size - 2)  # v == last edge: the last bin
    hist = xp.bincount(position, weights=None if w is None else w[inside], minlength=edges.size - 1)
    hist = hist.astype(data.dtype)
    if density:
        with quiet():
            hist = hist / hist.sum() / xp.diff(edges)  # PyTorch's order of the two divisions
    return HistogramResult(constant(hist), constant(edges))

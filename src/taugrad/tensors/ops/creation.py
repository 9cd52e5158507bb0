"""Making tensors: ``tensor``, ``zeros``, ``ones``, ``full``, ``arange``, ``eye``,
``randn``, ``rand``... (PyTorch names and defaults: float32 unless told).

Sizes are given as ``zeros(2, 3)`` or ``zeros((2, 3))``.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from taugrad.tensors.generator import get_generator
from taugrad.tensors.node import Tensor, _dtype_of, to_array

float32 = np.float32
float64 = np.float64


def _size(size, op: str) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    try:
        size = tuple(operator.index(n) for n in size)
    except TypeError:
        raise TypeError(f"{op}: sizes must be ints, got {size!r}") from None
    if any(n < 0 for n in size):
        raise ValueError(f"{op}: negative size in {size}")
    return size


def _sizes(sizes: tuple, size, op: str) -> tuple:
    """The shape from ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``, as torch takes it."""
    if size is not None:
        if sizes:
            raise TypeError(f"{op}: give the sizes either as arguments or as size=, not both")
        sizes = (size,) if isinstance(size, (tuple, list)) else (size,)
    return _size(sizes, op)


def _random_floats(draw, shape: tuple, dtype, op: str):
    """``draw(shape, dtype=...)`` for any floating dtype (NumPy draws float32 and float64 only)."""
    if dtype.kind != "f":
        raise TypeError(f"{op}: dtype must be floating, got {dtype}")
    if dtype in (np.float32, np.float64):
        return draw(shape, dtype=dtype)
    return draw(shape, dtype=np.float32).astype(dtype)  # float16: drawn in float32, then rounded


def _dtype(dtype, default=np.float32):
    return np.dtype(default) if dtype is None else _dtype_of(dtype)


def _result(data, requires_grad: bool) -> Tensor:
    return Tensor(data, requires_grad=requires_grad)


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a *copy* of ``data`` (floats -> float32, as ``torch.tensor``)."""
    array = to_array(data, dtype)
    if isinstance(data, (np.ndarray, Tensor)) and (array is data or array is getattr(data, "data", None)):
        array = array.copy()
    return Tensor(array, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing ``array``'s memory (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    return Tensor(array)


def zeros(*sizes, size=None, dtype=None, requires_grad: bool = False) -> Tensor:
    """Tensor of zeros."""
    return _result(np.zeros(_sizes(sizes, size, "zeros"), dtype=_dtype(dtype)), requires_grad)


def ones(*sizes, size=None, dtype=None, requires_grad: bool = False) -> Tensor:
    """Tensor of ones."""
    return _result(np.ones(_sizes(sizes, size, "ones"), dtype=_dtype(dtype)), requires_grad)


def empty(*sizes, size=None, dtype=None, requires_grad: bool = False) -> Tensor:
    """Tensor with unspecified contents."""
    return _result(np.empty(_sizes(sizes, size, "empty"), dtype=_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    """Tensor filled with ``fill_value`` (dtype inferred from it as ``torch.full``)."""
    if dtype is None:
        dtype = to_array(fill_value).dtype
    size = _size((size,) if isinstance(size, (tuple, list)) else (size,), "full")
    return _result(np.full(size, fill_value, dtype=_dtype_of(dtype)), requires_grad)


def _like(t, dtype):
    data = t._data if isinstance(t, Tensor) else np.asarray(t)
    return data.shape, (data.dtype if dtype is None else _dtype_of(dtype))


def zeros_like(t, dtype=None, requires_grad: bool = False) -> Tensor:
    shape, dtype = _like(t, dtype)
    return _result(np.zeros(shape, dtype=dtype), requires_grad)


def ones_like(t, dtype=None, requires_grad: bool = False) -> Tensor:
    shape, dtype = _like(t, dtype)
    return _result(np.ones(shape, dtype=dtype), requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    shape, dtype = _like(t, dtype)
    return _result(np.full(shape, fill_value, dtype=dtype), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad: bool = False) -> Tensor:
    """``start, start + step, ...`` below ``end`` (ints -> int64, floats -> float32)."""
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise ValueError(f"arange: unsupported range {start} -> {end} with step {step} (bounds must be finite)")
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = np.int64 if is_int else np.float32
    return _result(np.arange(start, end, step).astype(_dtype_of(dtype)), requires_grad)


def linspace(start, end, steps: int, dtype=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    try:  # checked here: NumPy's own errors name no argument
        steps = operator.index(steps)
    except TypeError:
        raise TypeError(f"linspace: steps must be an int, got {steps!r}") from None
    if steps < 0:
        raise ValueError(f"linspace: steps must be non-negative, got {steps}")
    return _result(np.linspace(start, end, steps, dtype=_dtype(dtype)), requires_grad)


def eye(n: int, m=None, dtype=None, requires_grad: bool = False) -> Tensor:
    """Identity matrix (``n x m``)."""
    n, m = _size((n, n if m is None else m), "eye")
    return _result(np.eye(n, m, dtype=_dtype(dtype)), requires_grad)


def randn(*sizes, size=None, dtype=None, requires_grad: bool = False, generator=None) -> Tensor:
    """Samples of the standard normal distribution."""
    shape = _sizes(sizes, size, "randn")
    data = _random_floats(get_generator(generator).standard_normal, shape, _dtype(dtype), "randn")
    return _result(data, requires_grad)


def rand(*sizes, size=None, dtype=None, requires_grad: bool = False, generator=None) -> Tensor:
    """Samples of the uniform distribution on [0, 1)."""
    shape = _sizes(sizes, size, "rand")
    data = _random_floats(get_generator(generator).random, shape, _dtype(dtype), "rand")
    return _result(data, requires_grad)


def randint(low, high=None, size=(), dtype=None, generator=None) -> Tensor:
    """Random integers in ``[low, high)`` (int64).

    As ``torch.randint``: ``randint(high, size)``, ``randint(low, high, size)``,
    or the sizes by keyword.
    """
    if isinstance(high, (tuple, list)):  # randint(high, size): PyTorch's two-argument form
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if not low < high:
        raise ValueError(f"randint: low ({low}) must be below high ({high})")
    size = _size((size,) if isinstance(size, (tuple, list)) else (size,), "randint")
    return Tensor(get_generator(generator).integers(low, high, size=size).astype(_dtype(dtype, np.int64)))


def randperm(n: int, generator=None) -> Tensor:
    """A random permutation of ``0..n-1`` (int64)."""
    return Tensor(get_generator(generator).permutation(n).astype(np.int64))

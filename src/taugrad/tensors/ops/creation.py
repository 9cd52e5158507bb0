"""Making tensors: ``tensor``, ``zeros``, ``ones``, ``full``, ``arange``, ``eye``,
``randn``, ``rand``... (PyTorch names and defaults: float32 unless told).

Sizes are given as ``zeros(2, 3)`` or ``zeros((2, 3))``.  ``device=`` puts
the result on a device: constant fills are made there by its array module;
values computed on the host (ranges, random draws, which come from the host
generators so a seeded run draws the same numbers on every device) are moved.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from taugrad.tensors.core import sampling
from taugrad.tensors.core.backend import CPU, DEFAULT_DEVICES, device_of, make_on, to_device
from taugrad.tensors.core.device import check_device, factory_device
from taugrad.tensors.core.generator import get_generator
from taugrad.tensors.core.dtypes import DEFAULT_FLOAT
from taugrad.tensors.core.spacing import linspace_array
from taugrad.tensors.core.node import Tensor, _dtype_of, array_module, to_array
from taugrad.tensors.core.rule import register


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


def _dtype(dtype, default=None):
    """The NumPy dtype asked for; ``default`` (the default float dtype unless given) if none."""
    if dtype is not None:
        return _dtype_of(dtype)
    return DEFAULT_FLOAT[0] if default is None else np.dtype(default)


def _result(data, requires_grad: bool, dev=CPU) -> Tensor:
    """A leaf holding ``data`` (a host array) moved to ``dev``."""
    if dev is not CPU and dev.type != "cpu":
        data = to_device(data, dev)
    return Tensor(data, requires_grad=requires_grad)


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a *copy* of ``data`` (floats -> float32, as ``torch.tensor``)."""
    array = to_array(data, dtype)
    shared = array is data or array is getattr(data, "_data", None)
    dev = _data_device(data, array, device, "tensor")
    if dev is not None:
        moved = to_device(array, dev)
        shared, array = shared and moved is array, moved
    if shared:  # through the array module's function, not .copy(): taugrad.compile records it as a kernel
        array = array_module(array).array(array, order="C")  # C order, as .copy() gave
    return Tensor(array, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing ``array``'s memory (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    return Tensor(array)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Tensor of zeros."""
    dev = factory_device(device, "zeros")
    return _result(make_on(dev, "zeros", _sizes(sizes, size, "zeros"), dtype=_dtype(dtype)), requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Tensor of ones."""
    dev = factory_device(device, "ones")
    return _result(make_on(dev, "ones", _sizes(sizes, size, "ones"), dtype=_dtype(dtype)), requires_grad)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Tensor with unspecified contents."""
    dev = factory_device(device, "empty")
    return _result(make_on(dev, "empty", _sizes(sizes, size, "empty"), dtype=_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Tensor filled with ``fill_value`` (dtype inferred from it as ``torch.full``)."""
    dev = factory_device(device, "full")
    if dtype is None:
        dtype = to_array(fill_value).dtype
    size = _size((size,) if isinstance(size, (tuple, list)) else (size,), "full")
    return _result(make_on(dev, "full", size, fill_value, dtype=_dtype_of(dtype)), requires_grad)


def _like(t, dtype):
    data = t._data if isinstance(t, Tensor) else np.asarray(t)
    return data.shape, (data.dtype if dtype is None else _dtype_of(dtype))


def _default_device_set() -> bool:
    """True when ``set_default_device`` or a ``with taugrad.device(...)`` block chose the default device.

    PyTorch's default device passes ``device=`` to ``torch.tensor`` and
    ``torch.as_tensor``, so then even a tensor argument goes there; without
    one a tensor stays where it is.
    """
    return len(DEFAULT_DEVICES) > 1 or DEFAULT_DEVICES[0] != CPU


def _data_device(data, array, device, op: str):
    """Where ``tensor``/``as_tensor`` put ``data`` (as ``array``): ``device=``; else, for a Tensor or an array
    already on a device (a CuPy array) and no default device set, where it is (None: leave it); else the
    default device (as PyTorch)."""
    if device is None and not _default_device_set() and (isinstance(data, Tensor) or device_of(array) != CPU):
        return None
    return factory_device(device, op)


def _like_device(t, device, op: str):
    """``device=`` if given, else ``t``'s device (as torch's ``*_like``).

    The ``*_like`` functions also take torch's ``layout``, ``pin_memory`` and
    ``memory_format`` keywords: every result is a dense host or device array
    in NumPy's default order, which changes no value.
    """
    if device is not None:
        return check_device(device, op)
    return device_of(t._data) if isinstance(t, Tensor) else CPU


def zeros_like(t, dtype=None, device=None, requires_grad: bool = False, *, layout=None, pin_memory=False,
              memory_format=None) -> Tensor:
    dev = _like_device(t, device, "zeros_like")
    shape, dtype = _like(t, dtype)
    return _result(make_on(dev, "zeros", shape, dtype=dtype), requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad: bool = False, *, layout=None, pin_memory=False,
              memory_format=None) -> Tensor:
    dev = _like_device(t, device, "ones_like")
    shape, dtype = _like(t, dtype)
    return _result(make_on(dev, "ones", shape, dtype=dtype), requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad: bool = False, *, layout=None,
              pin_memory=False, memory_format=None) -> Tensor:
    dev = _like_device(t, device, "full_like")
    shape, dtype = _like(t, dtype)
    return _result(make_on(dev, "full", shape, fill_value, dtype=dtype), requires_grad)


def empty_like(t, dtype=None, device=None, requires_grad: bool = False, *, layout=None, pin_memory=False,
              memory_format=None) -> Tensor:
    """A tensor of ``t``'s shape and dtype with unspecified contents."""
    dev = _like_device(t, device, "empty_like")
    shape, dtype = _like(t, dtype)
    return _result(make_on(dev, "empty", shape, dtype=dtype), requires_grad)


def _new_like(x: Tensor, dtype, device, op: str):
    """The dtype and device of a ``x.new_*`` result: ``x``'s unless given (as torch's ``Tensor.new_*``)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    dt = x._data.dtype if dtype is None else _dtype_of(dtype)
    return dt, _like_device(x, device, op)


@register("new_zeros", methods=("new_zeros",))
def new_zeros(x: Tensor, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False,
              layout=None, pin_memory: bool = False) -> Tensor:
    """Zeros of the given size with ``x``'s dtype and device (a leaf, no grad unless asked)."""
    dt, dev = _new_like(x, dtype, device, "new_zeros")
    return _result(make_on(dev, "zeros", _sizes(sizes, size, "new_zeros"), dtype=dt), requires_grad)


@register("new_ones", methods=("new_ones",))
def new_ones(x: Tensor, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False,
             layout=None, pin_memory: bool = False) -> Tensor:
    """Ones of the given size with ``x``'s dtype and device."""
    dt, dev = _new_like(x, dtype, device, "new_ones")
    return _result(make_on(dev, "ones", _sizes(sizes, size, "new_ones"), dtype=dt), requires_grad)


@register("new_empty", methods=("new_empty",))
def new_empty(x: Tensor, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False,
              layout=None, pin_memory: bool = False) -> Tensor:
    """A tensor of the given size with ``x``'s dtype and device, contents unspecified."""
    dt, dev = _new_like(x, dtype, device, "new_empty")
    return _result(make_on(dev, "empty", _sizes(sizes, size, "new_empty"), dtype=dt), requires_grad)


@register("new_full", methods=("new_full",))
def new_full(x: Tensor, size, fill_value, dtype=None, device=None, requires_grad: bool = False,
             layout=None, pin_memory: bool = False) -> Tensor:
    """``fill_value`` everywhere, with ``x``'s dtype (not the fill value's, unlike ``full``) and device."""
    dt, dev = _new_like(x, dtype, device, "new_full")
    size = _size((size,) if isinstance(size, (tuple, list)) else (size,), "new_full")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _result(make_on(dev, "full", size, fill_value, dtype=dt), requires_grad)


@register("new_tensor", methods=("new_tensor",))
def new_tensor(x: Tensor, data, dtype=None, device=None, requires_grad: bool = False,
               layout=None, pin_memory: bool = False) -> Tensor:
    """A copy of ``data`` with ``x``'s dtype and device unless given (floats into an integer ``x``
    are truncated, as torch)."""
    dt, dev = _new_like(x, dtype, device, "new_tensor")
    if isinstance(data, Tensor):
        data = data.detach()
    return tensor(data, dtype=dt, device=dev, requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, sharing memory where it can (as ``torch.as_tensor``).

    A Tensor of the asked dtype is returned as it is, a NumPy array is
    wrapped without a copy (writes through either are seen by the other);
    anything else, or another dtype, is converted (a copy).  With a default
    device set (``set_default_device``, ``with taugrad.device(...)``), data
    elsewhere, a Tensor included, is moved there (differentiably), as in PyTorch.
    """
    if isinstance(data, Tensor):
        out = data if dtype is None or data._data.dtype == _dtype_of(dtype) else data.to(_dtype_of(dtype))
        if device is None and _default_device_set():
            return out.to(factory_device(None, "as_tensor"))
        return out if device is None else out.to(check_device(device, "as_tensor"))
    array = to_array(data, dtype)
    dev = _data_device(data, array, device, "as_tensor")
    return Tensor(array if dev is None else to_device(array, dev))


def numel(t) -> int:
    """The number of elements of ``t``."""
    if not isinstance(t, Tensor):
        raise TypeError(f"numel: expected a Tensor, got {type(t).__name__}")
    return t._data.size


def logspace(start, end, steps: int, base: float = 10.0, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``: ``steps`` values spaced evenly on a log scale."""
    dev = factory_device(device, "logspace")
    exponents = linspace(start, end, steps, dtype=np.float64)._data
    return _result((float(base) ** exponents).astype(_dtype(dtype)), requires_grad, dev)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``start, start + step, ...`` below ``end`` (ints -> int64, floats -> float32)."""
    dev = factory_device(device, "arange")
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise ValueError(f"arange: unsupported range {start} -> {end} with step {step} (bounds must be finite)")
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = np.int64 if is_int else DEFAULT_FLOAT[0]
    return _result(np.arange(start, end, step).astype(_dtype_of(dtype)), requires_grad, dev)


def linspace(start, end, steps: int, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    dev = factory_device(device, "linspace")
    try:  # checked here: NumPy's own errors name no argument
        steps = operator.index(steps)
    except TypeError:
        raise TypeError(f"linspace: steps must be an int, got {steps!r}") from None
    if steps < 0:
        raise ValueError(f"linspace: steps must be non-negative, got {steps}")
    dtype = _dtype(dtype)
    if dtype.kind != "f":  # integer ranges: NumPy's values, truncated
        return _result(np.linspace(start, end, steps).astype(dtype), requires_grad, dev)
    return _result(linspace_array(start, end, steps, dtype), requires_grad, dev)


def eye(n: int, m=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Identity matrix (``n x m``)."""
    dev = factory_device(device, "eye")
    n, m = _size((n, n if m is None else m), "eye")
    return _result(make_on(dev, "eye", n, m, dtype=_dtype(dtype)), requires_grad)


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Samples of the standard normal distribution N(0, 1) (float32 unless ``dtype``)."""
    dev = factory_device(device, "randn")
    shape = _sizes(sizes, size, "randn")
    data = sampling.standard_normal(get_generator(generator, dev), shape, _dtype(dtype), "randn")
    return _result(data, requires_grad, dev)


def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Samples of the uniform distribution on [0, 1) (float32 unless ``dtype``)."""
    dev = factory_device(device, "rand")
    shape = _sizes(sizes, size, "rand")
    return _result(sampling.uniform01(get_generator(generator, dev), shape, _dtype(dtype), "rand"), requires_grad, dev)


def randint(low, high=None, size=(), generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Random integers in ``[low, high)`` (int64 unless ``dtype``).

    As ``torch.randint``: ``randint(high, size)``, ``randint(low, high, size)``,
    or the sizes by keyword.
    """
    dev = factory_device(device, "randint")
    if isinstance(high, (tuple, list)):  # randint(high, size): PyTorch's two-argument form
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if not low < high:
        raise ValueError(f"randint: low ({low}) must be below high ({high})")
    size = _size((size,) if isinstance(size, (tuple, list)) else (size,), "randint")
    data = sampling.integers(get_generator(generator, dev), low, high, size, _dtype(dtype, np.int64), "randint")
    return _result(data, requires_grad, dev)


def randperm(n: int, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0..n-1`` (int64 unless ``dtype``)."""
    dev = factory_device(device, "randperm")
    (n,) = _size((n,), "randperm")
    data = get_generator(generator, dev).permutation(n).astype(_dtype(dtype, np.int64))
    return _result(data, requires_grad, dev)


def rand_like(t, generator=None, dtype=None, device=None, requires_grad: bool = False, *, layout=None,
              pin_memory=False, memory_format=None) -> Tensor:
    """``rand`` with ``t``'s shape and (unless ``dtype``) dtype."""
    dev = _like_device(t, device, "rand_like")
    shape, dtype = _like(t, dtype)
    return _result(sampling.uniform01(get_generator(generator, dev), shape, dtype, "rand_like"), requires_grad, dev)


def randn_like(t, generator=None, dtype=None, device=None, requires_grad: bool = False, *, layout=None,
              pin_memory=False, memory_format=None) -> Tensor:
    """``randn`` with ``t``'s shape and (unless ``dtype``) dtype."""
    dev = _like_device(t, device, "randn_like")
    shape, dtype = _like(t, dtype)
    data = sampling.standard_normal(get_generator(generator, dev), shape, dtype, "randn_like")
    return _result(data, requires_grad, dev)


def randint_like(t, low, high=None, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``randint`` with ``t``'s shape and (unless ``dtype``) dtype: ``randint_like(t, high)`` or
    ``randint_like(t, low, high)``."""
    dev = _like_device(t, device, "randint_like")
    if high is None:
        low, high = 0, low
    shape, dtype = _like(t, dtype)
    data = sampling.integers(get_generator(generator, dev), low, high, shape, dtype, "randint_like")
    return _result(data, requires_grad, dev)


def scalar_tensor(s, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype`` is given
    (``torch.scalar_tensor(3)`` is ``tensor(3.)``)."""
    if isinstance(s, Tensor) or not isinstance(s, (bool, int, float, np.number, np.bool_)):
        raise TypeError(f"scalar_tensor: expects a number, got {type(s).__name__}")
    dev = factory_device(device, "scalar_tensor")
    d = _dtype_of(dtype) if dtype is not None else DEFAULT_FLOAT[0]
    return _result(make_on(dev, "asarray", s, dtype=d), requires_grad, dev)


def _triangle_indices(op: str, row, col, offset, dtype, device, lower: bool) -> Tensor:
    """The (2, n) row and column indices of a row x col matrix's lower or upper triangle, row by row."""
    try:
        row, col, offset = operator.index(row), operator.index(col), operator.index(offset)
    except TypeError:
        raise TypeError(f"{op}: row, col and offset must be ints") from None
    if row < 0 or col < 0:
        raise ValueError(f"{op}: row and col must be >= 0, got {row} and {col}")
    dev = factory_device(device, op)
    rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    data = np.stack([rows, cols]).astype(_dtype_of(dtype) if dtype is not None else np.int64)
    return _result(data, False, dev)


def tril_indices(row, col, offset: int = 0, dtype=None, device=None) -> Tensor:
    """Indices of the lower triangle (on and below diagonal ``offset``) of a ``row x col`` matrix, as a (2, n) tensor."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row, col, offset: int = 0, dtype=None, device=None) -> Tensor:
    """Indices of the upper triangle (on and above diagonal ``offset``) of a ``row x col`` matrix, as a (2, n) tensor."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, False)

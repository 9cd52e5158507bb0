"""Tests on values: ``isnan``, ``isinf``, ``isfinite``, ``isclose``, ``allclose``, ``equal``.

No gradients (the results are bools).  ``isclose`` is PyTorch's and NumPy's
``|a - b| <= atol + rtol |b|`` (not symmetric in a and b); infinities are
close only to themselves, NaN to nothing unless ``equal_nan``.
"""
from __future__ import annotations

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.node import Tensor, array_module, constant, to_array
from taugrad.tensors.core.rule import register


def _array(x, op: str, like=None):
    """``x``'s array; numbers and lists made one (on the device of the array ``like``, if given)."""
    if isinstance(x, Tensor):
        return x._data
    try:
        return to_array(x) if like is None else A.array_like(x, like)
    except TypeError:
        raise TypeError(f"{op}: expected a Tensor or numbers, got {type(x).__name__}") from None


@register("isnan", methods=("isnan",))
def isnan(x: Tensor) -> Tensor:
    """True where ``x`` is NaN (never for integer tensors)."""
    data = _array(x, "isnan")
    return constant(array_module(data).isnan(data))


@register("isinf", methods=("isinf",))
def isinf(x: Tensor) -> Tensor:
    """True where ``x`` is ``inf`` or ``-inf``."""
    data = _array(x, "isinf")
    return constant(array_module(data).isinf(data))


@register("isfinite", methods=("isfinite",))
def isfinite(x: Tensor) -> Tensor:
    """True where ``x`` is neither infinite nor NaN."""
    data = _array(x, "isfinite")
    return constant(array_module(data).isfinite(data))


@register("signbit", methods=("signbit",))
def signbit(x: Tensor) -> Tensor:
    """True where the sign bit of ``x`` is set: negative numbers, ``-0.0`` and ``-nan``."""
    data = _array(x, "signbit")
    return constant(array_module(data).signbit(data))


@register("isposinf", methods=("isposinf",))
def isposinf(x: Tensor) -> Tensor:
    """True where ``x`` is ``inf``."""
    data = _array(x, "isposinf")
    return constant(array_module(data).isposinf(data))


@register("isneginf", methods=("isneginf",))
def isneginf(x: Tensor) -> Tensor:
    """True where ``x`` is ``-inf``."""
    data = _array(x, "isneginf")
    return constant(array_module(data).isneginf(data))


def _isclose_arrays(a, b, rtol: float, atol: float, equal_nan: bool, op: str):
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot broadcast") from None
    return array_module(a).isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


@register("isclose", methods=("isclose",))
def isclose(a: Tensor, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (equal infinities are close) as a bool tensor."""
    a_data = _array(a, "isclose")
    return constant(_isclose_arrays(a_data, _array(b, "isclose", a_data), rtol, atol, equal_nan, "isclose"))


@register("allclose", methods=("allclose",))
def allclose(a: Tensor, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """``isclose(a, b, ...).all()`` as a Python bool."""
    a_data = _array(a, "allclose")
    close = _isclose_arrays(a_data, _array(b, "allclose", a_data), rtol, atol, equal_nan, "allclose")
    return bool(close.all())


@register("equal", methods=("equal",))
def equal(a: Tensor, b) -> bool:
    """True if ``a`` and ``b`` have the same shape and the same elements (NaN is never equal)."""
    a_data = _array(a, "equal")
    b_data = _array(b, "equal", a_data)
    return a_data.shape == b_data.shape and bool((a_data == b_data).all())


@register("isin")
def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` is among ``test_elements`` (either may be a number), as ``torch.isin``."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin: expects at least one tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    xp = array_module(like._data)
    a = elements._data if isinstance(elements, Tensor) else xp.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    return constant(xp.isin(a, b, assume_unique=assume_unique, invert=invert))

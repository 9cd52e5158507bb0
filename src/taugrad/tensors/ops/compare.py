"""Tests on values: ``isnan``, ``isinf``, ``isfinite``, ``isclose``, ``allclose``, ``equal``.

No gradients (the results are bools).  ``isclose`` is PyTorch's and NumPy's
``|a - b| <= atol + rtol |b|`` (not symmetric in a and b); infinities are
close only to themselves, NaN to nothing unless ``equal_nan``.
"""
from __future__ import annotations

import numpy as np

from taugrad.tensors.node import Tensor, array_module, constant, to_array
from taugrad.tensors.rule import register


def _array(x, op: str):
    if isinstance(x, Tensor):
        return x._data
    try:
        return to_array(x)
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
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} cannot broadcast") from None
    return array_module(a).isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


@register("isclose", methods=("isclose",))
def isclose(a: Tensor, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (equal infinities are close) as a bool tensor."""
    return constant(_isclose_arrays(_array(a, "isclose"), _array(b, "isclose"), rtol, atol, equal_nan, "isclose"))


@register("allclose", methods=("allclose",))
def allclose(a: Tensor, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """``isclose(a, b, ...).all()`` as a Python bool."""
    close = _isclose_arrays(_array(a, "allclose"), _array(b, "allclose"), rtol, atol, equal_nan, "allclose")
    return bool(close.all())


@register("equal", methods=("equal",))
def equal(a: Tensor, b) -> bool:
    """True if ``a`` and ``b`` have the same shape and the same elements (NaN is never equal)."""
    a_data, b_data = _array(a, "equal"), _array(b, "equal")
    return a_data.shape == b_data.shape and bool((a_data == b_data).all())

"""Float arithmetic that follows IEEE-754 like PyTorch float64, never raising.

Python's ``float`` raises where IEEE-754 returns a special value:
``1.0 / 0.0`` raises ``ZeroDivisionError`` (IEEE: ``inf``), ``math.exp(1000)``
raises ``OverflowError`` (IEEE: ``inf``), ``math.log(0)`` raises ``ValueError``
(IEEE: ``-inf``) and ``(-8.0) ** 0.5`` returns a *complex* number (IEEE: ``nan``).
The helpers below take the fast Python path and only fall back to NumPy's
float64 (which implements IEEE-754) on the rare exceptional inputs.
"""
from __future__ import annotations

import math

import numpy as np

INF = math.inf
NAN = math.nan


def _numpy_float(ufunc, *args: float) -> float:
    """Evaluate ``ufunc`` in NumPy float64, silencing its IEEE warnings."""
    with np.errstate(all="ignore"):
        return float(ufunc(*(np.float64(a) for a in args)))


def pow(base: float, exponent: float) -> float:  # noqa: A001 - mirrors math.pow
    """``base ** exponent`` as IEEE-754 ``pow``: ``0 ** -1 = inf``, ``(-8) ** 0.5 = nan``."""
    try:
        result = base**exponent
        if result.__class__ is float:
            return result
    except (ZeroDivisionError, OverflowError):
        pass
    return _numpy_float(np.power, base, exponent)


def pow_const(base: float, exponent: float) -> float:
    """``base ** exponent`` for a constant exponent, evaluated as PyTorch does.

    PyTorch computes ``x ** 0.5`` as ``sqrt(x)`` and ``x ** -0.5`` as
    ``1 / sqrt(x)``.  They differ from IEEE ``pow`` at the signed edges:
    ``sqrt(-0) = -0`` (``pow``: +0), ``1 / sqrt(-0) = -inf`` (``pow``: +inf),
    ``sqrt(-inf) = nan`` (``pow``: +inf), and ``1 / sqrt`` rounds twice.
    ``math.sqrt`` is correctly rounded, as IEEE-754 requires.
    """
    if exponent == 0.5 or exponent == -0.5:
        root = math.sqrt(base) if base >= 0.0 else NAN  # -0.0 >= 0.0: sqrt(-0) = -0
        return root if exponent == 0.5 else div(1.0, root)
    return pow(base, exponent)


def div(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as IEEE-754: ``1/0 = inf``, ``0/0 = nan``, ``1/-0. = -inf``."""
    try:
        return numerator / denominator
    except ZeroDivisionError:
        return _numpy_float(np.divide, numerator, denominator)


def exp(x: float) -> float:
    """``e ** x``; overflow gives ``inf`` instead of ``OverflowError``."""
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def log(x: float) -> float:
    """Natural log: ``log(0) = -inf``, ``log(x < 0) = nan``, ``log(nan) = nan``."""
    if x > 0.0:
        return math.log(x)
    if x == 0.0:
        return -INF
    return NAN


def sigmoid(x: float) -> float:
    """``1 / (1 + e^-x)``, evaluated so that no exponential can overflow.

    For ``x >= 0`` use ``1 / (1 + e^-x)``; for ``x < 0`` the equal form
    ``e^x / (1 + e^x)``.  Both only ever exponentiate a non-positive number.
    """
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    if x < 0.0:
        e = math.exp(x)
        return e / (1.0 + e)
    return NAN  # x is nan

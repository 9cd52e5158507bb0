"""Constraints: the sets parameters and values must lie in (``torch.distributions.constraints``).

``constraint.check(value)`` returns a bool Tensor over the batch (event
dimensions reduced), used by ``validate_args`` to refuse, in one line, a
parameter or value outside its set.  ``event_dim`` is how many rightmost
dimensions one element of the set occupies.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from taugrad.tensors.core.node import Tensor

__all__ = [
    "Constraint", "real", "real_vector", "positive", "nonnegative", "unit_interval", "boolean", "simplex",
    "one_hot", "lower_cholesky", "positive_definite", "interval", "half_open_interval", "integer_interval",
    "nonnegative_integer", "greater_than", "less_than", "independent", "dependent", "dependent_property",
]


def _array(value: Any) -> np.ndarray:
    """The values as a host array: validation reads them back once, on the CPU."""
    return value.detach().cpu().numpy() if isinstance(value, Tensor) else np.asarray(value)


class Constraint:
    """A set of values; ``check(value)`` is True where ``value`` lies in it (a bool Tensor)."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A constraint that depends on other parameters (``Uniform.low``): not checked on its own."""

    def __init__(self, is_discrete: bool = False, event_dim: int = 0) -> None:
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def check(self, value: Any) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")

    def __repr__(self) -> str:
        return "Dependent()"


def is_dependent(constraint: Any) -> bool:
    return isinstance(constraint, _Dependent)


class dependent_property(property):
    """A property whose value is a constraint computed from the instance (``Uniform.support``)."""


class _Real(Constraint):
    def check(self, value: Any) -> Tensor:
        a = _array(value)
        return Tensor(a == a)  # False at nan only


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Any) -> Tensor:
        a = _array(value)
        return Tensor((a == 0) | (a == 1))


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: float) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Tensor:
        return Tensor(_array(value) > _array(self.lower_bound))

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound: float) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Any) -> Tensor:
        return Tensor(_array(value) < _array(self.upper_bound))

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Any) -> Tensor:
        return Tensor(_array(value) >= self.lower_bound)

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> Tensor:
        a = _array(value)
        return Tensor((_array(self.lower_bound) <= a) & (a <= _array(self.upper_bound)))

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value: Any) -> Tensor:
        a = _array(value)
        return Tensor((_array(self.lower_bound) <= a) & (a < _array(self.upper_bound)))

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value: Any) -> Tensor:
        a = _array(value)
        return Tensor((a % 1 == 0) & (_array(self.lower_bound) <= a) & (a <= _array(self.upper_bound)))

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: int) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Tensor:
        a = _array(value)
        return Tensor((a % 1 == 0) & (a >= self.lower_bound))

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _IndependentConstraint(Constraint):
    """``base`` on every element, with the ``reinterpreted_batch_ndims`` rightmost dimensions taken as one event."""

    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint, self.reinterpreted_batch_ndims = base, reinterpreted_batch_ndims
        self.is_discrete = base.is_discrete
        self.event_dim = base.event_dim + reinterpreted_batch_ndims

    def check(self, value: Any) -> Tensor:
        ok = self.base_constraint.check(value)._data
        if self.reinterpreted_batch_ndims:
            ok = ok.reshape(ok.shape[:ok.ndim - self.reinterpreted_batch_ndims] + (-1,)).all(-1)
        return Tensor(ok)

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Any) -> Tensor:
        a = _array(value)
        return Tensor((a >= 0).all(-1) & (abs(a.sum(-1) - 1) < 1e-6))


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Any) -> Tensor:
        a = _array(value)
        return Tensor(((a == 0) | (a == 1)).all(-1) & (a.sum(-1) == 1))


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        a = _array(value)
        lower = (np.triu(a, 1) == 0).reshape(a.shape[:-2] + (-1,)).min(-1)
        positive = (np.diagonal(a, axis1=-2, axis2=-1) > 0).min(-1)
        return Tensor(lower & positive)


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Tensor:
        a = _array(value)
        symmetric = np.isclose(a, np.swapaxes(a, -1, -2), atol=1e-6).reshape(a.shape[:-2] + (-1,)).all(-1)
        try:
            eigen = np.linalg.eigvalsh(a)
        except np.linalg.LinAlgError:
            return Tensor(np.zeros(a.shape[:-2], dtype=bool))
        return Tensor(symmetric & (eigen > 0).all(-1))


dependent = _Dependent()
real = _Real()
real_vector = _IndependentConstraint(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
one_hot = _OneHot()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
nonnegative_integer = _IntegerGreaterThan(0)
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
greater_than = _GreaterThan
less_than = _LessThan
independent = _IndependentConstraint

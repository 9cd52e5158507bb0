"""``Value``: one scalar that remembers how it was made.

This is the engine of the chapter "Build a Tiny Autograd Engine".  Each Value
stores its ``data``, its ``grad`` (d final output / d this value), its parents
``_prev`` and the local rule that passes gradient back to them.  ``backward()``
orders the graph topologically and runs the rules in reverse, accumulating with
``+=`` because a value may reach the output along several paths.

It runs code written for micrograd unchanged, with four differences a user can
only notice as improvements:

* Local rules are module-level functions ``rule(out)`` stored in ``out._rule``
  instead of a fresh closure per node, and ``Value`` uses ``__slots__``.  A node
  therefore costs about a third of micrograd's memory and is quicker to build.
  ``out._backward()`` still works for code that calls it by hand.  Each rule is
  generated from the op's one definition in :mod:`taugrad.scalar.derivatives`.
* ``backward()`` is iterative (no recursion limit) and recomputes interior
  gradients on every call, so a second ``backward()`` accumulates into the
  leaves exactly as PyTorch does with ``retain_graph=True``.
* Arithmetic follows IEEE-754 like PyTorch float64: ``exp(1000)`` is ``inf``,
  ``log(0)`` is ``-inf``, ``(-8) ** 0.5`` is ``nan``, never an exception.
* ``a / b`` is one node and one IEEE division, not micrograd's ``a * b**-1``
  (see ``Value.__truediv__``); ``_op`` is ``'/'`` and ``_prev`` is ``(a, b)``.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Iterable, Tuple, Union

from taugrad.graph import topological_order
from taugrad.scalar import derivatives, ieee

Number = Union[int, float]
Rule = Callable[["Value"], None]


class Value:
    """A scalar node of the computation graph.

    ``Value(data, _children=(), _op='', label='')``: the micrograd signature, plus
    the ``label`` used in lecture code and graph drawings.
    """

    __slots__ = ("data", "grad", "_prev", "_op", "_rule", "_aux", "label")

    def __init__(self, data: Any, _children: Iterable["Value"] = (), _op: str = "", label: str = ""):
        if data.__class__ is not float:
            data = _real_to_float(data)
        self.data: float = data
        self.grad: float = 0.0
        self._prev: Tuple[Value, ...] = tuple(_children)
        self._op: str = _op
        self._rule: Rule = no_rule
        self._aux: Any = None
        self.label: str = label

    # -- micrograd compatibility: ``out._backward = fn`` and ``out._backward()`` --
    @property
    def _backward(self) -> Callable[[], None]:
        """Run this node's local rule once (micrograd's ``_backward``)."""
        rule = self._rule
        return lambda: rule(self)

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        self._rule = lambda out: fn()

    # -- ops with their own local derivative (each defined in derivatives.py) --
    def __add__(self, other: Any) -> "Value":
        if other.__class__ is not Value:
            other = _coerce(other)
            if other is NotImplemented:
                return NotImplemented
        return _node(self.data + other.data, (self, other), "+", add_rule)

    def __mul__(self, other: Any) -> "Value":
        if other.__class__ is not Value:
            other = _coerce(other)
            if other is NotImplemented:
                return NotImplemented
        return _node(self.data * other.data, (self, other), "*", mul_rule)

    def __pow__(self, other: Any) -> "Value":
        # a ** k for a number k keeps k in ``_aux`` (its rule reads it); a ** b is a two-parent node
        if isinstance(other, Value):
            return _node(ieee.pow(self.data, other.data), (self, other), "**", pow_rule)
        if not _is_real(other):
            return NotImplemented
        k = float(other)
        out = _node(ieee.pow_const(self.data, k), (self,), _power_label(k), pow_const_rule)
        out._aux = k
        return out

    def __rpow__(self, other: Any) -> "Value":
        # k ** b for a number k: one parent, k in ``_aux``
        if not _is_real(other):
            return NotImplemented
        k = float(other)
        out = _node(ieee.pow(k, self.data), (self,), _base_label(k), rpow_const_rule)
        out._aux = k
        return out

    def relu(self) -> "Value":
        x = self.data
        return _node(0.0 if x < 0.0 else x, (self,), "ReLU", relu_rule)

    def tanh(self) -> "Value":
        # math.tanh is exact even for |a| = 1e4
        return _node(math.tanh(self.data), (self,), "tanh", tanh_rule)

    def exp(self) -> "Value":
        return _node(ieee.exp(self.data), (self,), "exp", exp_rule)

    def log(self) -> "Value":
        return _node(ieee.log(self.data), (self,), "log", log_rule)

    def sigmoid(self) -> "Value":
        # 1 / (1 + e^-a), evaluated so that no exponential overflows
        return _node(ieee.sigmoid(self.data), (self,), "sigmoid", sigmoid_rule)

    def __truediv__(self, other: Any) -> "Value":
        """c = a / b in one IEEE division (derivatives: ``derivatives.DIV``).

        micrograd builds ``a * b**-1``: two nodes and two roundings, so
        ``49 / 49`` is 0.9999999999999999, and ``b**-1`` leaves the float range
        long before ``a / b`` does (``1e-310 / 1e-310`` was inf).  Its gradient
        ``-a * b**-2`` squares ``b``: nan, inf or 0 for ``|b|`` beyond about
        1e+-154 where PyTorch's ``-(a / b) / b`` is finite.  One ``'/'`` node
        with parents ``(a, b)`` gives PyTorch float64's value and gradients.
        """
        if other.__class__ is not Value:
            other = _coerce(other)
            if other is NotImplemented:
                return NotImplemented
        return _node(ieee.div(self.data, other.data), (self, other), "/", div_rule)

    def __rtruediv__(self, other: Any) -> "Value":
        """c = k / a for a number k: the same ``'/'`` node, k a constant leaf."""
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        return other / self

    # -- derived ops: built from the ones above, so they need no rule --------
    def __neg__(self) -> "Value":  # -a = a * -1
        return self * -1.0

    def __sub__(self, other: Any) -> "Value":  # a - b = a + (-b)
        if not isinstance(other, Value):
            other = _coerce(other)
            if other is NotImplemented:
                return NotImplemented
        return self + (-other)

    def __radd__(self, other: Any) -> "Value":  # k + a
        return self + other

    def __rmul__(self, other: Any) -> "Value":  # k * a
        return self * other

    def __rsub__(self, other: Any) -> "Value":  # k - a = k + (-a)
        other = _coerce(other)
        if other is NotImplemented:
            return NotImplemented
        return other + (-self)

    # -- reverse accumulation ------------------------------------------------
    def backward(self, create_graph: bool = False) -> None:
        """Fill ``.grad`` of every value this one depends on with d self / d value.

        Interior gradients are recomputed from zero on every call; leaves
        accumulate across calls (``+=``), as in PyTorch with ``retain_graph=True``.
        Call ``zero_grad()`` (or set ``p.grad = 0``) between training steps.

        ``create_graph=True`` makes each ``.grad`` a ``Value`` that can itself be
        differentiated (higher-order gradients, see :mod:`taugrad.scalar.higher`).
        """
        if create_graph:
            from taugrad.scalar.higher import backward_create_graph  # higher builds on Value: importing it at the top would be a cycle

            return backward_create_graph(self)
        order = topological_order((self,))
        if not order:  # a leaf: d self / d self = 1, accumulated like any leaf
            self.grad += 1.0
            return
        for node in order:
            node.grad = 0.0
        self.grad = 1.0
        for node in reversed(order):
            node._rule(node)

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"


# ---------------------------------------------------------------------------
# construction helpers
# ---------------------------------------------------------------------------

_new_value = object.__new__


def _node(data: float, parents: Tuple[Value, ...], op: str, rule: Rule) -> Value:
    """Build an interior node without re-validating ``data`` (already a float)."""
    out = _new_value(Value)
    out.data = data
    out.grad = 0.0
    out._prev = parents
    out._op = op
    out._rule = rule
    out._aux = None
    out.label = ""
    return out


def _is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real)


def _real_to_float(data: Any) -> float:
    """Convert a real number to float, or raise a TypeError naming the bad value."""
    if isinstance(data, Value):
        raise TypeError(f"Value() needs a real number for data, got a Value ({data!r}); use it directly or pass its .data")
    if not _is_real(data):
        raise TypeError(f"Value() needs a real number for data, got {data!r} ({type(data).__name__})")
    return float(data)


def _coerce(other: Any) -> Any:
    """Turn a number into a leaf Value; anything else is ``NotImplemented``."""
    if isinstance(other, Value):
        return other
    if _is_real(other):
        return Value(float(other))
    return NotImplemented


_POWER_LABELS: dict = {}
_BASE_LABELS: dict = {}


def _power_label(k: float) -> str:
    """Op label for ``a ** k``, e.g. ``'**2'``; cached so nodes share one string."""
    label = _POWER_LABELS.get(k)
    if label is None:
        label = _POWER_LABELS[k] = f"**{k:g}"
    return label


def _base_label(k: float) -> str:
    """Op label for ``k ** a``, e.g. ``'2**'``."""
    label = _BASE_LABELS.get(k)
    if label is None:
        label = _BASE_LABELS[k] = f"{k:g}**"
    return label


# ---------------------------------------------------------------------------
# local rules: rule(out) adds d out / d parent * out.grad into each parent.
# Each is generated from its one definition in taugrad.scalar.derivatives (which
# also gives create_graph=True and the trace their rules); the ops above look
# these names up when they run, so a rule replaced here (a test's broken rule)
# is the one new nodes get.
# ---------------------------------------------------------------------------


def no_rule(out: Value) -> None:
    """A leaf, or a node built by hand without a rule: nothing to pass back."""


add_rule = derivatives.ADD.rule
mul_rule = derivatives.MUL.rule
div_rule = derivatives.DIV.rule
pow_const_rule = derivatives.POW_CONST.rule
pow_rule = derivatives.POW.rule
rpow_const_rule = derivatives.RPOW_CONST.rule
relu_rule = derivatives.RELU.rule
tanh_rule = derivatives.TANH.rule
exp_rule = derivatives.EXP.rule
log_rule = derivatives.LOG.rule
sigmoid_rule = derivatives.SIGMOID.rule

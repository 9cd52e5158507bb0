"""Random expressions for gradient checking (the chapter's "Investigate" exercise).

:func:`random_expression` grows a random expression in the safe language of
:mod:`taugrad.learn.expr`, together with values for its variables.  It is built to be
a *fair* test of an autodiff engine:

* **Reused subexpressions.**  With probability ``reuse`` an operand is a copy of
  an earlier subexpression; the parser turns identical text into one node, so
  gradient must be accumulated (``+=``) in interior nodes, not only at leaves.
  Every expression of depth 2 or more reuses at least one subexpression.
* **Well-conditioned points.**  Every candidate node is evaluated as it is
  grown, and an operation is only kept where it is smooth and tame at that
  point: ``relu`` away from its kink (``|x| >= 0.1``), ``log`` and ``x ** 0.5``
  on ``x >= 0.1``, divisors and negative powers on ``|x| >= 0.2``, ``exp`` of
  ``x <= 5`` and every intermediate within ``1e4``.  A central finite
  difference then has an error far below the comparison tolerance, so a
  mismatch means a wrong rule, not an unlucky point.

The same ``seed`` always gives the same expressions.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Tuple, Union

from taugrad.graph import topological_order
from taugrad.learn.expr import format_number, parse
from taugrad.learn.trace import finite_difference

VARIABLES = ("a", "b", "c", "d", "w", "x", "y", "z")
MAX_DEPTH = 8  # text roughly doubles per level with reuse; 8 keeps it well under expr.MAX_LENGTH
LIMIT = 1e4  # largest magnitude an intermediate value may have

_CONSTANTS = (0.5, 1.5, 2.0, 3.0, -1.5, -0.5)
_POWERS = (2.0, 3.0, -1.0, 0.5, -0.5)


@dataclass
class RandomExpression:
    """An expression string and the variable values to evaluate it at."""

    text: str
    values: Dict[str, float]
    reused: int = 0  # how many operands were copies of earlier subexpressions
    seed: Optional[int] = None


@dataclass
class _Sub:
    """A grown subexpression: its text (parenthesised when composite) and value."""

    text: str
    value: float
    composite: bool
    names: Tuple[str, ...] = field(default=())

    def operand(self) -> str:
        return f"({self.text})" if self.composite or self.text.startswith("-") else self.text


def _ok(x: float) -> bool:
    return math.isfinite(x) and abs(x) <= LIMIT


class _Grower:
    def __init__(self, rng: random.Random, names: Tuple[str, ...], values: Dict[str, float], reuse: float):
        self.rng = rng
        self.names = names
        self.values = values
        self.reuse = reuse
        self.pool: List[_Sub] = []  # composite subexpressions grown so far
        self.reused = 0

    def leaf(self) -> _Sub:
        if self.rng.random() < 0.85:
            name = self.rng.choice(self.names)
            return _Sub(name, self.values[name], False, (name,))
        k = self.rng.choice(_CONSTANTS)
        return _Sub(format_number(k), k, False)

    def grow(self, depth: int) -> _Sub:
        if depth <= 0:
            return self.leaf()
        if self.pool and self.rng.random() < self.reuse:
            self.reused += 1
            return self.rng.choice(self.pool)
        left = self.grow(depth - 1)
        for _ in range(12):  # try operations until one is tame at this point
            made = self._combine(left, depth)
            if made is not None:
                self.pool.append(made)
                return made
        made = self._join(left, self.leaf(), "+")  # always tame: both operands are
        if made is None:
            return left
        self.pool.append(made)
        return made

    def _combine(self, x: _Sub, depth: int) -> Optional[_Sub]:
        kind = self.rng.choice(("binary", "binary", "binary", "function", "power"))
        if kind == "function":
            return self._function(x)
        if kind == "power":
            return self._power(x, depth)
        right = self.grow(depth - 1)
        op = self.rng.choice(("+", "-", "*", "/"))
        return self._join(x, right, op)

    def _join(self, x: _Sub, y: _Sub, op: str) -> Optional[_Sub]:
        if op == "+":
            value = x.value + y.value
        elif op == "-":
            value = x.value - y.value
        elif op == "*":
            value = x.value * y.value
        else:
            if abs(y.value) < 0.2:
                return None
            value = x.value / y.value
        if not _ok(value):
            return None
        return _Sub(f"{x.operand()} {op} {y.operand()}", value, True, x.names + y.names)

    def _function(self, x: _Sub) -> Optional[_Sub]:
        func = self.rng.choice(("relu", "tanh", "exp", "log", "sigmoid", "neg"))
        v = x.value
        if func == "relu":
            if abs(v) < 0.1:
                return None
            value = max(v, 0.0)
        elif func == "tanh":
            value = math.tanh(v)
        elif func == "exp":
            if v > 5.0:
                return None
            value = math.exp(v)
        elif func == "log":
            if v < 0.1:
                return None
            value = math.log(v)
        elif func == "sigmoid":
            value = 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0
        else:
            return _Sub(f"-{x.operand()}", -v, True, x.names)
        if not _ok(value):
            return None
        return _Sub(f"{func}({x.text})", value, False, x.names)

    def _power(self, x: _Sub, depth: int) -> Optional[_Sub]:
        v = x.value
        form = self.rng.choice(("const", "const", "base", "both"))
        if form == "const":
            k = self.rng.choice(_POWERS)
            if k < 0 and abs(v) < 0.2:
                return None
            if k != int(k) and v < 0.1:
                return None
            value = v**k
            text = f"{x.operand()} ** {_number_operand(k)}"
        elif form == "base":  # 2 ** x
            if v > 8.0:
                return None
            value = 2.0**v
            text = f"2 ** {x.operand()}"
        else:  # x ** y with a variable exponent: needs a positive base
            y = self.grow(max(depth - 2, 0))
            if v < 0.1 or abs(y.value) > 3.0:
                return None
            value = v**y.value
            text = f"{x.operand()} ** {y.operand()}"
            if not _ok(value):
                return None
            return _Sub(text, value, True, x.names + y.names)
        if not _ok(value):
            return None
        return _Sub(text, value, True, x.names)


def _number_operand(k: float) -> str:
    text = format_number(k)
    return f"({text})" if k < 0 else text


def random_expression(
    seed: Union[int, random.Random, None] = None,
    depth: int = 3,
    variables: int = 3,
    reuse: float = 0.3,
) -> RandomExpression:
    """One random expression of nesting ``depth`` over up to ``variables`` names.

    Variable values are drawn from ``[-2, -0.2] U [0.2, 2]`` (two decimals).
    ``seed`` is an int (reproducible), a ``random.Random`` or None.
    """
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be between 1 and {MAX_DEPTH}, got {depth}")
    if not 1 <= variables <= len(VARIABLES):
        raise ValueError(f"variables must be between 1 and {len(VARIABLES)}, got {variables}")
    if not 0.0 <= reuse < 1.0:
        raise ValueError(f"reuse must be in [0, 1), got {reuse}")
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    names = VARIABLES[:variables]
    values = {}
    for name in names:
        magnitude = rng.uniform(0.2, 2.0)
        values[name] = round(magnitude if rng.random() < 0.5 else -magnitude, 2)
    grower = _Grower(rng, names, values, reuse)
    expr = grower.grow(depth)
    if depth >= 2 and grower.reused == 0 and grower.pool:
        # make sure some interior node feeds two consumers
        again = rng.choice(grower.pool)
        for op in ("*", "+"):
            joined = grower._join(expr, again, op)
            if joined is not None:
                expr, grower.reused = joined, 1
                break
    used = [n for n in names if n in set(expr.names)]
    return RandomExpression(expr.text, {n: values[n] for n in used}, grower.reused,
                            seed if isinstance(seed, int) else None)


def random_expressions(count: int, seed: int = 0, depth: int = 3, variables: int = 3,
                       reuse: float = 0.3) -> Iterator[RandomExpression]:
    """``count`` expressions; the i-th uses seed ``seed * 1_000_003 + i`` so any
    one of them can be regenerated on its own."""
    for i in range(count):
        yield random_expression(seed * 1_000_003 + i, depth=depth, variables=variables, reuse=reuse)


# ---------------------------------------------------------------------------
# checking them
# ---------------------------------------------------------------------------


@dataclass
class Disagreement:
    """Analytic vs finite-difference gradient of one input of one expression."""

    expression: str
    values: Dict[str, float]
    name: str
    analytic: float
    numeric: float

    @property
    def error(self) -> float:
        """``|analytic - numeric|``; nan counts as infinitely wrong."""
        diff = abs(self.analytic - self.numeric)
        return math.inf if math.isnan(diff) else diff

    @property
    def scaled_error(self) -> float:
        """``|analytic - numeric| / max(1, |numeric|)``: relative for large
        gradients, absolute for small ones (where a relative error means nothing)."""
        return self.error / max(abs(self.numeric), 1.0)


@dataclass
class CheckResult:
    """One expression's check: every input's comparison and whether all agree."""

    index: int
    expression: RandomExpression
    comparisons: List[Disagreement]
    passed: bool
    nodes: int

    @property
    def worst(self) -> Optional[Disagreement]:
        return max(self.comparisons, key=lambda d: d.error, default=None)


def check_expression(
    expression: RandomExpression,
    index: int = 0,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> CheckResult:
    """Compare ``Value.backward()`` with central finite differences for every
    input: they agree when ``|analytic - numeric| <= atol + rtol * |numeric|``
    (the rule of :func:`taugrad.gradcheck`)."""
    parsed = parse(expression.text)
    graph = parsed.build(expression.values)
    graph.root.backward()
    comparisons = []
    passed = True
    for name, leaf in graph.inputs.items():
        numeric = finite_difference(parsed, expression.values, name, eps)
        d = Disagreement(expression.text, expression.values, name, leaf.grad, numeric)
        comparisons.append(d)
        if not d.error <= atol + rtol * abs(numeric):
            passed = False
    nodes = len(topological_order([graph.root])) + len(graph.inputs)
    return CheckResult(index, expression, comparisons, passed, nodes)


def check_random_expressions(
    count: int,
    seed: int = 0,
    depth: int = 3,
    variables: int = 3,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> List[CheckResult]:
    """:func:`check_expression` on each of ``random_expressions(count, seed, depth, variables)``."""
    expressions = random_expressions(count, seed=seed, depth=depth, variables=variables)
    return [check_expression(e, i, eps=eps, atol=atol, rtol=rtol) for i, e in enumerate(expressions)]


__all__ = [
    "CheckResult",
    "Disagreement",
    "MAX_DEPTH",
    "RandomExpression",
    "VARIABLES",
    "check_expression",
    "check_random_expressions",
    "random_expression",
    "random_expressions",
]

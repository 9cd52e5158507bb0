"""Expression trees for the checks: text, terms for the engines, tame values, random growth.

A tree is a nested tuple: ``("var", name)``, ``("num", k)``, ``("neg", x)``,
``("call", f, x)``, ``("op", symbol, left, right)`` or ``("sum", (x, ...))``.
Its text is in the language of :mod:`taugrad.learn.expr` (except ``sum``), so a
failing expression can be pasted into ``taugrad trace``; identical subtrees
become one term, so a repeated subexpression is one reused node.

Random trees use only the operations the learner's class has, and only at
*tame* points (kinks, poles, overflow kept away, as in
:mod:`taugrad.learn.randexpr`), so a disagreement with finite differences is a
wrong rule, never an unlucky point.
"""
from __future__ import annotations

import math
import random
from typing import Dict, List, Optional, Tuple

LIMIT = 1e4  # largest magnitude an intermediate value may have
SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
FUNCTIONS = ("relu", "tanh", "exp", "log", "sigmoid")
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 4}
_CONSTANTS = (0.5, 1.5, 2.0, 3.0, -1.5, -0.5)
_POWERS = (2.0, 3.0, -1.0, 0.5, -0.5)
NAMES = ("a", "b", "c")


def number_text(k: float) -> str:
    return str(int(k)) if float(k).is_integer() and abs(k) < 1e15 else repr(float(k))


def _prec(node) -> int:
    if node[0] == "op":
        return _PREC[node[1]]
    if node[0] == "neg" or (node[0] == "num" and node[1] < 0):
        return 3
    return 99


def _wrap(node, level: int, strict: bool) -> str:
    inner = _prec(node)
    text = render(node)
    return f"({text})" if inner < level or (strict and inner == level) else text


def render(node) -> str:
    """The tree as expression text, with only the parentheses Python needs."""
    kind = node[0]
    if kind == "var":
        return node[1]
    if kind == "num":
        return number_text(node[1])
    if kind == "neg":
        return "-" + _wrap(node[1], 3, True)
    if kind == "call":
        return f"{node[1]}({render(node[2])})"
    if kind == "sum":
        return "sum([" + ", ".join(render(x) for x in node[1]) + "])"
    symbol = node[1]
    level = _PREC[symbol]
    return f"{_wrap(node[2], level, symbol == '**')} {symbol} {_wrap(node[3], level, symbol != '**')}"


def to_terms(tree) -> list:
    """Terms ``[kind, payload, args]``, children first, one term per distinct subtree."""
    terms: list = []
    index: Dict[tuple, int] = {}

    def visit(node) -> int:
        kind = node[0]
        if kind in ("var", "num"):
            key = (kind, node[1], ())
        elif kind == "neg":
            key = (kind, None, (visit(node[1]),))
        elif kind == "call":
            key = (kind, node[1], (visit(node[2]),))
        elif kind == "sum":
            key = (kind, None, tuple(visit(x) for x in node[1]))
        else:
            key = (kind, node[1], (visit(node[2]), visit(node[3])))
        if key not in index:
            index[key] = len(terms)
            terms.append([key[0], key[1], list(key[2])])
        return index[key]

    visit(tree)
    return terms


def names_in(tree) -> List[str]:
    found: List[str] = []
    for node in subtrees(tree):
        if node[0] == "var" and node[1] not in found:
            found.append(node[1])
    return found


def subtrees(tree) -> List[tuple]:
    """Every subtree, the tree itself first."""
    out = [tree]
    kind = tree[0]
    if kind in ("neg",):
        out += subtrees(tree[1])
    elif kind == "call":
        out += subtrees(tree[2])
    elif kind == "op":
        out += subtrees(tree[2]) + subtrees(tree[3])
    elif kind == "sum":
        for x in tree[1]:
            out += subtrees(x)
    return out


def size(tree) -> int:
    return len(subtrees(tree))


def tame_value(tree, inputs: Dict[str, float]) -> Optional[float]:
    """The tree's value, or None if some node sits at a kink, pole or overflow."""
    kind = tree[0]
    if kind == "var":
        return inputs[tree[1]]
    if kind == "num":
        return float(tree[1])
    if kind == "sum":
        parts = [tame_value(x, inputs) for x in tree[1]]
        return None if None in parts else _ok(math.fsum(parts))
    if kind in ("neg", "call"):
        x = tame_value(tree[-1], inputs)
        return None if x is None else apply(tree[1] if kind == "call" else "neg", x)
    x, y = tame_value(tree[2], inputs), tame_value(tree[3], inputs)
    if x is None or y is None:
        return None
    return apply(tree[1], x, y, value_exponent=tree[1] == "**" and tree[3][0] != "num")


def apply(op: str, x: float, y: float = 0.0, value_exponent: bool = False) -> Optional[float]:
    """One operation on tame operands, or None where a finite difference could be misleading.

    A power whose exponent is a Value (``value_exponent``) needs a base of at
    least 0.1: its exponent's gradient is ``out * log(base)``, which is NaN for
    a negative base even where the exponent happens to be an integer and the
    value itself is fine (``c ** (a / a)`` at ``c < 0``).
    """
    if op == "+":
        return _ok(x + y)
    if op == "-":
        return _ok(x - y)
    if op == "*":
        return _ok(x * y)
    if op == "/":
        return None if abs(y) < 0.2 else _ok(x / y)
    if op == "**":
        if (value_exponent or y != int(y)) and x < 0.1:
            return None
        if y < 0 and abs(x) < 0.2:
            return None
        if abs(y) > 3.0 or (x == 2.0 and y > 8.0):
            return None
        return _ok(x**y)
    if op == "neg":
        return -x
    if op == "relu":
        return None if abs(x) < 0.1 else max(x, 0.0)
    if op == "tanh":
        return math.tanh(x)
    if op == "exp":
        return None if x > 5.0 else math.exp(x)
    if op == "log":
        return None if x < 0.1 else math.log(x)
    if op == "sigmoid":
        return None if abs(x) > 30.0 else 1.0 / (1.0 + math.exp(-x))
    raise ValueError(f"unknown operation {op!r}")


def _ok(x: float) -> Optional[float]:
    return x if math.isfinite(x) and abs(x) <= LIMIT else None


def allowed_left_numbers(info: dict) -> set:
    """Symbols a plain number may stand left of: those whose reflected method (``__radd__``...) the class has."""
    return {SYMBOLS.get(op, "**") for op in info["reflected"] if op in SYMBOLS or op == "pow"}


def buildable(tree, info: dict) -> bool:
    """Whether the class can build ``tree``: a number on the left only with the reflected method, a Value exponent only where offered."""
    left_numbers = allowed_left_numbers(info)
    for node in subtrees(tree):
        if node[0] != "op":
            continue
        left, right = node[2][0] == "num", node[3][0] == "num"
        if left and not right and node[1] not in left_numbers:
            return False
        if node[1] == "**" and not right and not left and not info.get("value_exponent"):
            return False
    return True


class _Grower:
    """Grows one random tree over the learner's operations (see the module docstring)."""

    def __init__(self, rng: random.Random, info: dict, inputs: Dict[str, float], reuse: float = 0.3):
        self.rng, self.inputs, self.reuse = rng, inputs, reuse
        ops = info["ops"]
        self.binary = [SYMBOLS[op] for op in ("add", "sub", "mul", "div") if op in ops]
        self.left_numbers = allowed_left_numbers(info)
        self.functions = [f for f in FUNCTIONS + ("neg",) if f in ops]
        self.powers = ["const"] * ("pow" in ops) + ["base"] * ("pow" in info["reflected"]) \
            + ["both"] * bool(info["value_exponent"])
        self.kinds = ["binary"] * 3 * bool(self.binary) + ["function"] * bool(self.functions) \
            + ["power"] * bool(self.powers)
        self.pool: List[Tuple[tuple, float]] = []
        self.reused = 0

    def leaf(self) -> Tuple[tuple, float]:
        if self.rng.random() < 0.85:
            name = self.rng.choice(tuple(self.inputs))
            return ("var", name), self.inputs[name]
        k = self.rng.choice(_CONSTANTS)
        return ("num", k), k

    def grow(self, depth: int) -> Tuple[tuple, float]:
        if depth <= 0 or not self.kinds:
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
        return left

    def _combine(self, x, depth: int):
        kind = self.rng.choice(self.kinds)
        if kind == "function":
            f = self.rng.choice(self.functions)
            tree = ("neg", x[0]) if f == "neg" else ("call", f, x[0])
            value = apply(f, x[1])
        elif kind == "power":
            form = self.rng.choice(self.powers)
            if form == "const":
                k = self.rng.choice(_POWERS)
                tree, value = ("op", "**", x[0], ("num", k)), apply("**", x[1], k)
            elif form == "base":
                tree, value = ("op", "**", ("num", 2.0), x[0]), apply("**", 2.0, x[1])
            else:
                y = self.grow(max(depth - 2, 0))
                if y[0][0] == "num":
                    return None  # a number exponent is the "const" form, with its own list of exponents
                if x[0][0] == "num" and "**" not in self.left_numbers:
                    return None  # a number base needs __rpow__
                tree, value = ("op", "**", x[0], y[0]), apply("**", x[1], y[1], value_exponent=True)
        else:
            return self.join(x, self.grow(depth - 1), self.rng.choice(self.binary))
        return None if value is None else (tree, value)

    def join(self, x, y, symbol: str):
        if x[0][0] == "num" and y[0][0] == "num":
            return None
        if x[0][0] == "num" and symbol not in self.left_numbers:
            x, y = y, x
        value = apply(symbol, x[1], y[1])
        return None if value is None else (("op", symbol, x[0], y[0]), value)


def random_tree(rng: random.Random, info: dict, depth: int = 3) -> Tuple[tuple, Dict[str, float]]:
    """One random tree over the class's operations, with values for its variables."""
    inputs = {}
    for name in NAMES:
        magnitude = rng.uniform(0.2, 2.0)
        inputs[name] = round(magnitude if rng.random() < 0.5 else -magnitude, 2)
    grower = _Grower(rng, info, inputs)
    tree, _ = grower.grow(depth)
    if depth >= 2 and grower.reused == 0 and grower.pool:
        # make sure some interior node feeds two consumers
        again = rng.choice(grower.pool)
        for symbol in ("*", "+"):
            if symbol in grower.binary:
                joined = grower.join((tree, tame_value(tree, inputs)), again, symbol)
                if joined is not None:
                    tree = joined[0]
                    break
    return tree, {n: inputs[n] for n in names_in(tree)}

"""One written-out derivative, turned into every use the scalar engine has for it.

A local derivative is written once, as a small formula over the op's operands
(``a``, ``b``), its output ``out``, the upstream gradient ``g`` and, for
``a ** k`` and ``k ** b``, the op's constant ``k``; e.g. ``"b * g"`` for the
``a`` of ``a * b``.  From that one formula this module makes:

* the first-order rule ``rule(out)`` that ``Value.backward()`` runs: Python
  source generated from the formula and compiled once at import, so it is the
  same straight-line code a hand-written rule would be (no per-node
  interpretation: the scalar engine's speed is its per-node cost);
* the ``create_graph=True`` rule ``graph(out, g)``: the same formula evaluated
  with ``Value`` operations, so the gradient is itself differentiable;
* the trace's text: the formula with names (``b.data * g``) and with numbers
  (``3 * 1``), and the number the engine adds (:meth:`Derivative.explain`).

The formulas use ``+ - * / **``, unary ``-`` and ``log(x)``.  Floats follow
IEEE-754 as PyTorch float64 (``/`` and ``log`` never raise; ``x ** c`` with a
constant exponent is evaluated as the forward pass does, ``sqrt`` at 0.5), and
``x ** 2`` is computed as ``x * x``: one correctly rounded product.

Masks (:class:`Term`) are conditions on the data, never differentiated:

* ``none_where=cond``: where ``cond`` holds the parent gets nothing at all, not
  even ``0 * g`` (PyTorch's relu below 0, the base of ``x ** 0``);
* ``zero_where=cond``: where ``cond`` holds the local derivative is its limit 0,
  still multiplied by ``g``, so an inf or nan upstream gives nan, as PyTorch's
  ``g * where(cond, 0, ...)`` (the exponent of ``0 ** b``).
"""
from __future__ import annotations

import ast
import copy
import linecache
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from taugrad.scalar import ieee

# the float helpers the generated first-order code calls
_NAMESPACE = {"_div": ieee.div, "_pow": ieee.pow, "_pow_const": ieee.pow_const, "_log": ieee.log}

_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.Pow: 4}
_UNARY, _ATOM = 3, 5
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_NEGATED = {ast.Eq: "!=", ast.NotEq: "==", ast.Lt: ">=", ast.LtE: ">", ast.Gt: "<=", ast.GtE: "<"}


_ALLOWED = (ast.BinOp, ast.UnaryOp, ast.USub, ast.Constant, ast.Name, ast.Call, ast.Load, *_SYMBOL)
_ALLOWED_IN_CONDITIONS = (ast.Compare, ast.BoolOp, ast.And, *_COMPARE)


def parse(text: str, names: Sequence[str], condition: bool = False) -> ast.expr:
    """Parse and check a formula (or, with ``condition``, a mask); raise ValueError on anything else."""
    tree = ast.parse(text, mode="eval").body
    allowed = _ALLOWED + (_ALLOWED_IN_CONDITIONS if condition else ())
    calls = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        ok = isinstance(node, allowed)
        if isinstance(node, ast.Name):
            ok = node.id in names or (id(node) in calls and node.id == "log")
        elif isinstance(node, ast.Call):
            ok = isinstance(node.func, ast.Name) and len(node.args) == 1 and not node.keywords
        elif isinstance(node, ast.Compare):
            ok = len(node.ops) == 1
        elif isinstance(node, ast.Constant):
            ok = type(node.value) in (int, float)
        if not ok:
            raise ValueError(f"formula {text!r}: {ast.dump(node)} is not allowed here")
    return tree


def rename(tree: ast.expr, names: Mapping[str, str]) -> ast.expr:
    """A copy of ``tree`` with its names replaced (``a -> w``), for reusing a formula."""
    tree = copy.deepcopy(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
    return tree


def substitute(tree: ast.expr, name: str, by: ast.expr) -> ast.expr:
    """A copy of ``tree`` with every ``name`` replaced by the formula ``by`` (a chain rule)."""

    class _Sub(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return copy.deepcopy(by) if node.id == name else node

    return _Sub().visit(copy.deepcopy(tree))


_ZERO = parse("0 * g", ["g"])  # the term a mask leaves: shown where zero_where holds


def _is_square(node: ast.BinOp) -> bool:
    return isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) and node.right.value == 2


# ---------------------------------------------------------------------------
# Python source: floats for the first-order rule, Values for create_graph
# ---------------------------------------------------------------------------


def source(node: ast.expr, names: Mapping[str, Tuple[str, bool]], graph: bool) -> Tuple[str, bool]:
    """Python source for ``node`` and whether it is a constant (only ``k`` and numbers).

    ``names`` maps each formula name to ``(source, is_constant)``.  With
    ``graph=False`` every name is a float and ``/ ** log`` call the IEEE helpers;
    with ``graph=True`` the non-constant names are Values and the operators build
    graph nodes (whose forward values are those same IEEE helpers).
    """
    if isinstance(node, ast.Constant):
        return repr(float(node.value)), True
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.UnaryOp):
        x, const = source(node.operand, names, graph)
        return f"(-{x})", const
    if isinstance(node, ast.Call):
        x, const = source(node.args[0], names, graph)
        return (f"_log({x})" if const or not graph else f"{x}.log()"), const
    if isinstance(node, ast.Compare):
        left, _ = source(node.left, names, graph)
        right, _ = source(node.comparators[0], names, graph)
        return f"({left} {_COMPARE[type(node.ops[0])]} {right})", False
    if isinstance(node, ast.BoolOp):
        return "(" + " and ".join(source(v, names, graph)[0] for v in node.values) + ")", False
    assert isinstance(node, ast.BinOp)
    left, left_const = source(node.left, names, graph)
    if _is_square(node):
        return f"({left} * {left})", left_const
    right, right_const = source(node.right, names, graph)
    const = left_const and right_const
    if isinstance(node.op, ast.Div) and (const or not graph):
        return f"_div({left}, {right})", const
    if isinstance(node.op, ast.Pow) and (const or not graph):
        return (f"_pow_const({left}, {right})" if right_const else f"_pow({left}, {right})"), const
    return f"({left} {_SYMBOL[type(node.op)]} {right})", const


def compile_function(name: str, lines: List[str], tag: str) -> Callable:
    """Compile generated source; it is registered with linecache so tracebacks show it."""
    text = "\n".join(lines) + "\n"
    filename = f"<derivative {tag}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope: Dict[str, Any] = {}
    exec(compile(text, filename, "exec"), dict(_NAMESPACE), scope)  # noqa: S102 - our own formulas, checked by parse()
    function = scope[name]
    function.__source__ = text
    return function


# ---------------------------------------------------------------------------
# text for the trace
# ---------------------------------------------------------------------------


@dataclass
class Shown:
    """A formula rendered twice, with names and with numbers, plus its float value."""

    formula: str
    numbers: str
    precedence: int
    value: float
    constant: bool


def _wrap(shown: Shown, below: int, text: str) -> str:
    return f"({text})" if shown.precedence < below else text


def show(node: ast.expr, env: Mapping[str, Tuple[str, float, bool]], number: Callable[[float], str]) -> Shown:
    """Render ``node``: ``env`` maps a name to (its text, its value, is_constant).

    The numbers line shows each operator with its operands, except that an
    exponent and a ``log`` are shown evaluated; arithmetic on constants only
    (``k - 1``) is shown evaluated in both lines.
    """
    if isinstance(node, ast.Constant):
        x = float(node.value)
        return Shown(number(x), number(x), _ATOM, x, True)
    if isinstance(node, ast.Name):
        text, x, const = env[node.id]
        return Shown(text, number(x), _ATOM, x, const)
    if isinstance(node, ast.UnaryOp):
        a = show(node.operand, env, number)
        return Shown(f"-{_wrap(a, _UNARY, a.formula)}", f"-{_wrap(a, _UNARY, a.numbers)}", _UNARY, -a.value, a.constant)
    if isinstance(node, ast.Call):
        a = show(node.args[0], env, number)
        x = ieee.log(a.value)
        return Shown(f"log({a.formula})", number(x), _ATOM, x, a.constant)
    assert isinstance(node, ast.BinOp)
    op = type(node.op)
    a, b = show(node.left, env, number), show(node.right, env, number)
    x = _evaluate(op, a, b, _is_square(node))
    if a.constant and b.constant:  # constant arithmetic is shown as its value
        return Shown(number(x), number(x), _ATOM, x, True)
    p = _PRECEDENCE[op]
    if op is ast.Pow:
        base_f, base_n = _wrap(a, p + 1, a.formula), _wrap(a, p + 1, a.numbers)
        if isinstance(node.right, ast.Constant):  # a literal power is written tight: out**2
            return Shown(f"{base_f}**{b.formula}", f"{base_n}**{b.numbers}", p, x, False)
        return Shown(f"{base_f} ** {_wrap(b, p, b.formula)}", f"{base_n} ** {number(b.value)}", p, x, False)
    symbol = _SYMBOL[op]
    return Shown(f"{_wrap(a, p, a.formula)} {symbol} {_wrap(b, p + 1, b.formula)}",
                 f"{_wrap(a, p, a.numbers)} {symbol} {_wrap(b, p + 1, b.numbers)}", p, x, False)


def _evaluate(op: type, a: Shown, b: Shown, square: bool) -> float:
    """The float value, as the generated first-order code computes it."""
    x, y = a.value, b.value
    if op is ast.Add:
        return x + y
    if op is ast.Sub:
        return x - y
    if op is ast.Mult:
        return x * y
    if op is ast.Div:
        return ieee.div(x, y)
    if square:
        return x * x
    return ieee.pow_const(x, y) if b.constant else ieee.pow(x, y)


def holds(node: ast.expr, env: Mapping[str, Tuple[str, float, bool]]) -> Tuple[bool, bool]:
    """Evaluate a mask on the data: (does it hold, does it depend only on constants)."""
    if isinstance(node, ast.BoolOp):
        parts = [holds(v, env) for v in node.values]
        return all(h for h, _ in parts), all(c for _, c in parts)
    left = show(node.left, env, str)
    right = show(node.comparators[0], env, str)
    x, y = left.value, right.value
    op = type(node.ops[0])
    result = {ast.Eq: x == y, ast.NotEq: x != y, ast.Lt: x < y, ast.LtE: x <= y, ast.Gt: x > y, ast.GtE: x >= y}[op]
    return result, left.constant and right.constant


def passes_text(node: ast.expr, env: Mapping[str, Tuple[str, float, bool]], number: Callable[[float], str]) -> str:
    """The condition under which a ``none_where`` mask lets gradient through, as text."""
    if isinstance(node, ast.Compare):
        left, right = show(node.left, env, number), show(node.comparators[0], env, number)
        return f"{left.formula} {_NEGATED[type(node.ops[0])]} {right.formula}"
    return f"not ({ast.unparse(node)})"


@dataclass(frozen=True)
class Term:
    """The gradient one parent receives: a formula in ``g``, with its masks (see the module doc)."""

    formula: str
    none_where: Optional[str] = None
    zero_where: Optional[str] = None


Line = Tuple[Any, str, str, float]  # (parent, formula, numbers, contribution) for the trace


def explain_term(parent: Any, term: ast.expr, none_where: Optional[ast.expr], zero_where: Optional[ast.expr],
                 contribution: Optional[float], env: Mapping[str, Tuple[str, float, bool]],
                 number: Callable[[float], str]) -> Line:
    """One trace line for one parent; ``contribution`` is what the engine's code computed (None: nothing)."""
    zero = _ZERO
    if zero_where is not None and holds(zero_where, env)[0]:
        term = zero
    if none_where is not None:
        blocked, const = holds(none_where, env)
        if const:  # a constant mask: the line is the term or nothing passing
            term = zero if blocked else term
        else:  # a data mask is part of the derivative: show it as a 0/1 factor
            shown = show(term, env, number)
            gate = passes_text(none_where, env, number)
            return (parent, f"({gate}) * {_wrap(shown, 2, shown.formula)}",
                    f"{number(0.0 if blocked else 1.0)} * {_wrap(shown, 2, shown.numbers)}",
                    0.0 if contribution is None else contribution)
    shown = show(term, env, number)
    return parent, shown.formula, shown.numbers, 0.0 if contribution is None else contribution

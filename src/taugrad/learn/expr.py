"""A tiny, safe expression language that builds a ``Value`` graph.

Learner tools (``taugrad trace``, ``taugrad graph``, ``taugrad gradcheck``) take
expressions such as ``"tanh(a*b + c) / 2"`` from the command line.  They are
read with :func:`ast.parse` (which only *parses*: nothing is compiled to code or
run) and then checked against an allow-list:

* numbers (``2``, ``0.5``, ``1e-3``) and names (``a``, ``x1``),
* the binary operators ``+ - * / **`` and unary ``-`` (unary ``+`` is accepted
  and does nothing),
* parentheses,
* calls of ``relu tanh exp log sigmoid`` with exactly one argument.

Everything else (attribute access, subscripts, strings, lambdas, keyword
arguments, ...) is an :class:`ExpressionError` whose one-line message names the
problem and the column where it starts.  Input length and nesting depth are
bounded so that hostile input is a clean error, not a crash.

Identical subexpressions become *one* node of the graph: ``(a*b) + tanh(a*b)``
computes ``a*b`` once and uses it twice, exactly as if it had been assigned to a
variable.  That is what makes gradients accumulate (``+=``) in interior nodes.
"""
from __future__ import annotations

import ast
import keyword
import re
import unicodedata
import warnings
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from taugrad.grad_mode import no_grad
from taugrad.scalar.value import Value

MAX_LENGTH = 10_000
"""Longest expression accepted, in characters."""

MAX_DEPTH = 200
"""Deepest nesting accepted, counted in syntax-tree levels.

Every operator, call or unary minus adds a level; so does each ``+`` of a long
chain like ``a+b+c+...`` (Python parses it as ``((a+b)+c)+...``).
"""

FUNCTIONS: Tuple[str, ...] = ("relu", "tanh", "exp", "log", "sigmoid")
"""Functions an expression may call; each is a ``Value`` method of that name."""

_BINARY_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}

# Friendly names for the syntax we refuse, so the message says what was written.
_REFUSED = {
    ast.Attribute: "attribute access",
    ast.Subscript: "subscripts",
    ast.Slice: "slices",
    ast.Lambda: "lambdas",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.JoinedStr: "f-strings",
    ast.FormattedValue: "f-strings",
    ast.NamedExpr: "assignment expressions (:=)",
    ast.Starred: "starred arguments",
    ast.List: "lists",
    ast.Tuple: "tuples",
    ast.Set: "sets",
    ast.Dict: "dictionaries",
    ast.Compare: "comparisons",
    ast.BoolOp: "'and'/'or' expressions",
    ast.IfExp: "conditional expressions",
    ast.Await: "'await' expressions",
    ast.Yield: "'yield' expressions",
    ast.YieldFrom: "'yield' expressions",
}


class ExpressionError(ValueError):
    """A mistake in an expression or in its variable values, as one line.

    ``column`` (1-based, counted in characters) and ``line`` locate the problem
    when it has a place in the text; ``reason`` is the message without it.
    """

    def __init__(self, reason: str, column: Optional[int] = None, line: Optional[int] = None):
        self.reason = _one_line(reason)
        self.column = column
        self.line = line
        if column is None:
            message = self.reason
        elif line is not None and line > 1:
            message = f"line {line}, column {column}: {self.reason}"
        else:
            message = f"column {column}: {self.reason}"
        super().__init__(message)


def _one_line(text: str, limit: int = 200) -> str:
    """Collapse whitespace and control characters; cut very long messages."""
    text = re.sub(r"[\x00-\x1f\x7f]+", " ", str(text)).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _quote(text: str, limit: int = 30) -> str:
    """A short, printable, quoted rendering of user text for an error message."""
    shown = text if len(text) <= limit else text[:limit] + "..."
    return repr(shown)  # repr escapes only what cannot be printed: "α" stays readable


# ---------------------------------------------------------------------------
# the checked tree
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """One node of a checked expression.

    ``kind`` is ``'num'`` (``payload`` is the float), ``'var'`` (the name),
    ``'op'`` (one of ``+ - * / **``), ``'neg'`` or ``'call'`` (the function
    name).  ``args`` are indices of earlier terms in :attr:`Expression.terms`:
    terms are stored children first, so building them in order always finds a
    term's operands ready.
    """

    kind: str
    payload: Union[float, str, None]
    args: Tuple[int, ...]
    column: int


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "**": 4}


class Expression:
    """A parsed, checked expression; build it into a graph with :meth:`build`."""

    def __init__(self, text: str, terms: List[Term]):
        self.text = text
        self.terms = terms
        seen: Dict[str, None] = {}
        for term in terms:
            if term.kind == "var":
                seen.setdefault(term.payload, None)  # type: ignore[arg-type]
        self.names: Tuple[str, ...] = tuple(seen)
        """Variable names, in order of first appearance in the text."""
        self._texts: Optional[List[str]] = None

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"

    # -- rendering ------------------------------------------------------------

    def term_text(self, index: int) -> str:
        """Canonical text of term ``index`` (with only the parentheses needed)."""
        if self._texts is None:
            self._texts = self._render_all()
        return self._texts[index]

    def _render_all(self) -> List[str]:
        texts: List[str] = []
        for term in self.terms:
            if term.kind == "num":
                texts.append(format_number(term.payload))  # type: ignore[arg-type]
            elif term.kind == "var":
                texts.append(term.payload)  # type: ignore[arg-type]
            elif term.kind == "call":
                texts.append(f"{term.payload}({texts[term.args[0]]})")
            elif term.kind == "neg":
                texts.append("-" + self._operand(texts, term.args[0], _PRECEDENCE["neg"], False))
            else:
                op = term.payload
                level = _PRECEDENCE[op]  # type: ignore[index]
                right_assoc = op == "**"
                left = self._operand(texts, term.args[0], level, right_assoc)
                right = self._operand(texts, term.args[1], level, not right_assoc)
                texts.append(f"{left} {op} {right}")
        return texts

    def _operand(self, texts: List[str], index: int, level: int, strict: bool) -> str:
        term = self.terms[index]
        if term.kind == "op":
            inner = _PRECEDENCE[term.payload]  # type: ignore[index]
        elif term.kind == "neg" or (term.kind == "num" and term.payload < 0):  # type: ignore[operator]
            inner = _PRECEDENCE["neg"]
        else:
            inner = 99
        needs = inner < level or (strict and inner == level)
        return f"({texts[index]})" if needs else texts[index]

    # -- building ---------------------------------------------------------------

    def build(self, values: Mapping[str, object]) -> "Graph":
        """Build the ``Value`` graph for these variable values.

        ``values`` maps each name to a number or to a ``Value`` (used as is, so
        a notebook can pass its own leaves).  Missing names are one error that
        lists them all.
        """
        missing = [name for name in self.names if name not in values]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            raise ExpressionError(
                f"no value given for the name{plural} {', '.join(missing)} "
                f"(give {'them' if plural else 'it'} as NAME=VALUE)"
            )
        inputs: Dict[str, Value] = {}
        for name in self.names:
            given = values[name]
            inputs[name] = given if isinstance(given, Value) else Value(_to_float(name, given), label=name)

        built: List[object] = []  # a float for constant terms, else a Value
        top_values: Dict[int, int] = {}  # id(Value) -> index of the term it computes
        for index, term in enumerate(self.terms):
            result = self._build_term(term, built, inputs, Value)
            built.append(result)
            if isinstance(result, Value) and term.kind != "var":
                top_values.setdefault(id(result), index)
        root = built[-1]
        if not isinstance(root, Value):  # a constant expression, e.g. "2*3"
            root = Value(root)
        return Graph(self, root, inputs, top_values)

    @staticmethod
    def _build_term(term: Term, built: List[object], inputs, Value):
        kind = term.kind
        if kind == "num":
            return term.payload
        if kind == "var":
            return inputs[term.payload]
        args = [built[i] for i in term.args]
        if kind == "neg":
            return -_as_value(args[0], Value)
        if kind == "call":
            return getattr(_as_value(args[0], Value), term.payload)()
        left, right = args
        if not isinstance(left, Value) and not isinstance(right, Value):
            left = Value(left)  # keep constant sub-expressions in the engine (IEEE results)
        op = term.payload
        if op == "+":
            return left + right
        if op == "-":
            return left - right
        if op == "*":
            return left * right
        if op == "/":
            return left / right
        return left ** right

    def evaluate(self, values: Mapping[str, float]) -> float:
        """The expression's value as a float (a forward pass without a graph)."""
        with no_grad():
            return float(self.build(values).root.data)


def _as_value(x, Value):
    return x if isinstance(x, Value) else Value(x)


def _to_float(name: str, given: object) -> float:
    try:
        return float(given)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise ExpressionError(f"the value of {name} must be a number, got {_quote(str(given))}") from None


@dataclass
class Graph:
    """A built expression: the root ``Value``, the named inputs, and which
    expression term each interior ``Value`` computes (``terms``, keyed by
    ``id(value)``; values made inside derived operations such as the ``-1``
    multiply of a subtraction have no entry)."""

    expression: Expression
    root: object
    inputs: Dict[str, object]
    terms: Dict[int, int] = field(default_factory=dict)

    def source_of(self, value) -> Optional[str]:
        """The sub-expression text a node computes, or None."""
        index = self.terms.get(id(value))
        return None if index is None else self.expression.term_text(index)


def format_number(x: float) -> str:
    """Short readable form of a float: ``3``, ``0.5``, ``-0.761594``, ``inf``."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


# ---------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------


def parse(text: str) -> Expression:
    """Parse and check ``text``; raise :class:`ExpressionError` on anything
    outside the allow-list.  Nothing in ``text`` is ever executed."""
    if not isinstance(text, str):
        raise ExpressionError(f"an expression must be a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is too long ({len(text):,} characters; the limit is {MAX_LENGTH:,})")
    if not text.strip():
        raise ExpressionError("expression is empty")
    if "\x00" in text:
        raise ExpressionError("null character in the expression", column=text.index("\x00") + 1)
    lines = text.splitlines() or [text]
    try:
        with warnings.catch_warnings():  # e.g. "invalid decimal literal" for "1if": the error below says it
            warnings.simplefilter("ignore")
            tree = ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise _syntax_error(err, lines) from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"expression is nested too deeply (the limit is {MAX_DEPTH} levels)") from None
    except UnicodeEncodeError as err:  # a lone surrogate cannot be read as source text
        bad = text[err.start] if 0 <= err.start < len(text) else "?"
        raise ExpressionError(f"character {ascii(bad)} is not valid text", column=err.start + 1) from None
    except ValueError as err:  # e.g. characters the tokenizer refuses
        raise ExpressionError(f"cannot read the expression: {err}") from None
    return Expression(text, _check(tree.body, lines))


def _syntax_error(err: SyntaxError, lines: Sequence[str]) -> ExpressionError:
    message = err.msg or "invalid syntax"
    if message.startswith("Exceeds the limit"):
        message = "number has too many digits"
    line = err.lineno if isinstance(err.lineno, int) and err.lineno >= 1 else None
    column = err.offset if isinstance(err.offset, int) and err.offset >= 1 else None
    if column is None and err.offset == 0 and line is not None and line <= len(lines):
        column = len(lines[line - 1]) + 1  # the tokenizer ran out of input: point past the end
        message += " (the expression ends too early)"
    if column is not None and line is not None and line <= len(lines):
        # SyntaxError.offset counts characters (1-based) in Python 3.10+.
        column = min(column, len(lines[line - 1]) + 1)
    if column is None:
        return ExpressionError(f"syntax error: {message}")
    return ExpressionError(f"syntax error: {message}", column=column, line=line)


class _OperatorPosition:
    """Where a binary operator's symbol is, for errors that should point at it
    rather than at the start of the left operand."""

    def __init__(self, node: ast.BinOp, symbol: str):
        left = node.left
        self.lineno = getattr(left, "end_lineno", node.lineno) or node.lineno
        self.col_offset = getattr(left, "end_col_offset", node.col_offset) or node.col_offset
        self.symbol = symbol


def _column(node: ast.AST, lines: Sequence[str]) -> Tuple[int, int]:
    """1-based (column in characters, line) of an AST node.

    ``col_offset`` counts UTF-8 bytes; convert so that a non-ASCII name before
    the problem does not shift the reported column.
    """
    line = getattr(node, "lineno", 1)
    offset = getattr(node, "col_offset", 0)
    if 1 <= line <= len(lines):
        encoded = lines[line - 1].encode("utf-8")
        if isinstance(node, _OperatorPosition):  # skip ")" and spaces after the left operand
            found = encoded.find(node.symbol.encode("ascii"), offset)
            offset = found if found >= 0 else offset
        offset = len(encoded[:offset].decode("utf-8", errors="replace"))
    return offset + 1, line


def _check(body: ast.AST, lines: Sequence[str]) -> List[Term]:
    """Check every node against the allow-list and turn the tree into terms.

    Iterative post-order walk (an explicit stack, no recursion), so deep input
    can never exhaust Python's stack.  Identical sub-trees map to one term.
    """
    terms: List[Term] = []
    index_of: Dict[Tuple, int] = {}  # structural key -> term index (sharing)
    results: Dict[int, int] = {}  # id(ast node) -> term index
    stack: List[Tuple[ast.AST, int, bool]] = [(body, 1, False)]

    def refuse(node: ast.AST, what: str) -> ExpressionError:
        column, line = _column(node, lines)
        return ExpressionError(what, column=column, line=line)

    while stack:
        node, depth, children_done = stack.pop()
        if depth > MAX_DEPTH:
            raise refuse(node, f"expression is nested too deeply (the limit is {MAX_DEPTH} levels)")
        if not children_done:
            children = _allowed_children(node, refuse)
            stack.append((node, depth, True))
            for child in reversed(children):  # left operand first: errors in reading order
                stack.append((child, depth + 1, False))
            continue
        term = _make_term(node, results, terms, refuse, lines)
        key = (term.kind, term.payload, term.args)
        if key not in index_of:
            index_of[key] = len(terms)
            terms.append(term)
        results[id(node)] = index_of[key]
    return terms


def _allowed_children(node: ast.AST, refuse) -> List[ast.AST]:
    """The operand nodes of ``node``, or an error if ``node`` is not allowed."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or value is None or value is Ellipsis:
            raise refuse(node, f"{value!r} is not a number")
        if isinstance(value, (str, bytes)):
            raise refuse(node, "strings are not allowed")
        if isinstance(value, complex):
            raise refuse(node, "complex numbers are not allowed")
        if not isinstance(value, (int, float)):
            raise refuse(node, f"{type(value).__name__} constants are not allowed")
        return []
    if isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise refuse(node, f"{node.id} is a function: call it, as in {node.id}(x)")
        return []
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY_OPS:
            symbol = {ast.MatMult: "@", ast.Mod: "%", ast.FloorDiv: "//", ast.LShift: "<<", ast.RShift: ">>",
                      ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^"}.get(type(node.op), type(node.op).__name__)
            raise refuse(_OperatorPosition(node, symbol), f"operator {symbol} is not allowed (use + - * / **)")
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            symbol = {ast.Not: "'not'", ast.Invert: "~"}.get(type(node.op), type(node.op).__name__)
            raise refuse(node, f"unary {symbol} is not allowed (only unary minus)")
        return [node.operand]
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute):
            raise refuse(node, "method calls are not allowed (write relu(x), not x.relu())")
        if not isinstance(node.func, ast.Name):
            raise refuse(node, f"only calls of {', '.join(FUNCTIONS)} are allowed")
        name = node.func.id
        if name not in FUNCTIONS:
            raise refuse(node, f"call of {_quote(name)} is not allowed; functions: {', '.join(FUNCTIONS)}")
        if node.keywords:
            raise refuse(node.keywords[0] if hasattr(node.keywords[0], "col_offset") else node,
                         "keyword arguments are not allowed")
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise refuse(arg, "starred arguments are not allowed")
        if len(node.args) != 1:
            raise refuse(node, f"{name}() takes exactly one argument, got {len(node.args)}")
        return [node.args[0]]
    what = _REFUSED.get(type(node), f"{type(node).__name__} expressions")
    raise refuse(node, f"{what} {'is' if what == 'attribute access' else 'are'} not allowed")


def _make_term(node: ast.AST, results, terms: List[Term], refuse, lines) -> Term:
    column, _ = _column(node, lines)
    if isinstance(node, ast.Constant):
        try:
            number = float(node.value)
        except OverflowError:
            raise refuse(node, "number is too large for a float") from None
        return Term("num", number, (), column)
    if isinstance(node, ast.Name):
        return Term("var", node.id, (), column)
    if isinstance(node, ast.UnaryOp):
        operand = results[id(node.operand)]
        if isinstance(node.op, ast.UAdd):
            return terms[operand]
        if terms[operand].kind == "num":  # fold "-2" into the constant -2
            return Term("num", -terms[operand].payload, (), column)  # type: ignore[operator]
        return Term("neg", None, (operand,), column)
    if isinstance(node, ast.Call):
        return Term("call", node.func.id, (results[id(node.args[0])],), column)  # type: ignore[attr-defined]
    assert isinstance(node, ast.BinOp)
    op = _BINARY_OPS[type(node.op)]
    return Term("op", op, (results[id(node.left)], results[id(node.right)]), column)


# ---------------------------------------------------------------------------
# NAME=VALUE arguments
# ---------------------------------------------------------------------------


def _variable_name(name: str) -> Optional[str]:
    """``name`` as the expression parser would read it, or None if it cannot be a variable.

    Python's parser accepts any identifier (``α``, ``θ2``), then NFKC-normalises it
    (``ﬁ`` is read as ``fi``), so NAME=VALUE must do the same to agree with it.
    """
    if not name.isidentifier() or keyword.iskeyword(name):
        return None
    return unicodedata.normalize("NFKC", name)


def parse_bindings(items: Iterable[str]) -> Dict[str, float]:
    """Read command-line ``NAME=VALUE`` items into a dict of floats.

    VALUE is anything :class:`float` reads, including ``inf`` and ``nan`` (the
    engine gives IEEE results for them).
    """
    values: Dict[str, float] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep:
            raise ExpressionError(f"expected NAME=VALUE, got {_quote(item)}")
        variable = _variable_name(name)
        if variable is None:
            raise ExpressionError(f"{_quote(name)} is not a valid variable name (in {_quote(item)})")
        name = variable
        if name in FUNCTIONS:
            raise ExpressionError(f"{name} is a function name and cannot be a variable")
        if name in values:
            raise ExpressionError(f"{name} is given twice")
        try:
            values[name] = float(text.strip())
        except ValueError:
            raise ExpressionError(f"the value of {name} must be a number, got {_quote(text)}") from None
    return values


def build(text: str, values: Mapping[str, object]) -> Graph:
    """Parse ``text`` and build its graph with ``values``: ``parse(text).build(values)``."""
    return parse(text).build(values)


__all__ = [
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "Expression",
    "ExpressionError",
    "Graph",
    "Term",
    "build",
    "format_number",
    "parse",
    "parse_bindings",
]

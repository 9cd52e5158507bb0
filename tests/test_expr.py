"""The safe expression language: what it accepts, what it builds, and that
hostile input is a one-line error without anything being executed."""
from __future__ import annotations

import ast
import builtins
import math
import sys
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taugrad import Value
from taugrad.learn.expr import MAX_DEPTH, MAX_LENGTH, ExpressionError, build, parse, parse_bindings

# ---------------------------------------------------------------------------
# what it accepts and builds
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, values, expected",
    [
        ("(a*b)+c", dict(a=2, b=3, c=4), 10.0),
        ("a*b+c", dict(a=2, b=3, c=4), 10.0),
        ("a - b - c", dict(a=10, b=3, c=4), 3.0),  # left-associative
        ("a / b / c", dict(a=24, b=3, c=4), 2.0),
        ("2 ** 3 ** 2", {}, 512.0),  # right-associative
        ("-2 ** 2", {}, -4.0),  # unary minus binds looser than **
        ("2 ** -1", {}, 0.5),
        ("-a * -2", dict(a=3), 6.0),
        ("+a", dict(a=3), 3.0),
        ("--a", dict(a=3), 3.0),
        ("a ** b", dict(a=2, b=10), 1024.0),
        ("2 ** a", dict(a=5), 32.0),
        ("relu(a) + relu(-a)", dict(a=-1.5), 1.5),
        ("tanh(0)", {}, 0.0),
        ("exp(0) + log(1)", {}, 1.0),
        ("sigmoid(0)", {}, 0.5),
        ("1e3 + 0.5 + 2", {}, 1002.5),
        ("(\n a +\n b )", dict(a=1, b=2), 3.0),  # newlines inside parentheses are fine
    ],
)
def test_values(text, values, expected):
    assert build(text, values).root.data == expected


def test_names_in_order_of_first_use():
    assert parse("c * a + b * a + c").names == ("c", "a", "b")


def test_identical_subexpressions_become_one_node():
    graph = build("tanh(a*b) + tanh(a*b)", dict(a=1.0, b=2.0))
    left, right = graph.root._prev
    assert left is right  # one tanh node used twice
    assert graph.inputs["a"] is left._prev[0]._prev[0]


def test_graph_gradients_are_the_engines():
    # d/da (a*b + c) = b, d/db = a, d/dc = 1 at a=2, b=3, c=4
    graph = build("(a*b)+c", dict(a=2, b=3, c=4))
    graph.root.backward()
    assert [graph.inputs[n].grad for n in "abc"] == [3.0, 2.0, 1.0]


def test_values_may_be_given_as_value_leaves():
    a = Value(2.0, label="a")
    graph = build("a * a", {"a": a})
    graph.root.backward()
    assert graph.inputs["a"] is a and a.grad == 4.0


def test_source_of_nodes():
    graph = build("a - b", dict(a=1, b=2))
    assert graph.source_of(graph.root) == "a - b"


def test_constant_expression_gives_a_value():
    root = build("2*3", {}).root
    assert isinstance(root, Value) and root.data == 6.0


def test_ieee_results_not_exceptions():
    assert build("1/0", {}).root.data == math.inf
    assert build("log(a)", dict(a=0)).root.data == -math.inf
    assert math.isnan(build("a ** 0.5", dict(a=-8)).root.data)
    assert build("9.0 ** 9 ** 9", {}).root.data == math.inf  # floats: no giant Python integers


def test_missing_names_are_listed_together():
    with pytest.raises(ExpressionError) as info:
        build("a*b + c*d", dict(a=1, c=2))
    assert str(info.value) == "no value given for the names b, d (give them as NAME=VALUE)"


def test_non_number_value():
    with pytest.raises(ExpressionError, match="the value of a must be a number"):
        build("a", {"a": "two"})


@pytest.mark.parametrize(
    "text, column, phrase",
    [
        ("a + b.c", 5, "attribute access is not allowed"),
        ("é + a.x", 5, "attribute access is not allowed"),  # columns count characters, not bytes
        ("a % b", 3, "operator % is not allowed"),
        ("(a+b)  // c", 8, "operator // is not allowed"),
        ("tanh(a, b)", 1, "tanh() takes exactly one argument, got 2"),
        ("relu", 1, "relu is a function"),
        ("a +", 4, "syntax error"),
    ],
)
def test_error_positions(text, column, phrase):
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert info.value.column == column
    assert str(info.value).startswith(f"column {column}: ")
    assert phrase in str(info.value)


def test_error_on_second_line_names_the_line():
    with pytest.raises(ExpressionError) as info:
        parse("(a +\n b.c)")
    assert str(info.value) == "line 2, column 2: attribute access is not allowed"


# ---------------------------------------------------------------------------
# hostile input
# ---------------------------------------------------------------------------

SENTINEL_MODULE = "taugrad_test_sentinel"

HOSTILE = [
    ("attribute access", "a.__class__"),
    ("__import__", f"__import__('{SENTINEL_MODULE}').fire()"),
    ("__import__ bare", "__import__"),
    ("dunder name call", "__builtins__['eval']('1')"),
    ("lambda", f"(lambda: __import__('{SENTINEL_MODULE}').fire())()"),
    ("string", "'hello'"),
    ("bytes", "b'x'"),
    ("list comprehension", f"[__import__('{SENTINEL_MODULE}').fire() for _ in 'ab']"),
    ("generator", "sum(x for x in (1, 2))"),
    ("dict comprehension", "{k: 1 for k in 'a'}"),
    ("subscript", "a[0]"),
    ("slice", "a[1:2]"),
    ("keyword argument", "tanh(x=1)"),
    ("starred argument", "tanh(*a)"),
    ("double starred", "tanh(**a)"),
    ("walrus", "(y := 1)"),
    ("f-string", f"f'{{__import__(\"{SENTINEL_MODULE}\").fire()}}'"),
    ("comparison", "a < b"),
    ("boolean", "a and b"),
    ("conditional", "a if b else c"),
    ("tuple", "a, b"),
    ("list", "[a]"),
    ("set", "{a}"),
    ("dict", "{a: b}"),
    ("unknown function", "print(a)"),
    ("method call", "a.relu()"),
    ("call of a call", "tanh(a)(b)"),
    ("matrix multiply", "a @ b"),
    ("bitwise", "a ^ b"),
    ("not", "not a"),
    ("invert", "~a"),
    ("complex literal", "1j"),
    ("True", "True"),
    ("None", "None"),
    ("Ellipsis", "..."),
    ("await", "await a"),
    ("yield", "(yield a)"),
    ("statement", "import os"),
    ("assignment", "a = 1"),
    ("two statements", "a; b"),
    ("exec", "exec('x')"),
    ("eval", "eval('1')"),
    ("open", "open('/etc/passwd')"),
    ("deep parentheses", "(" * 100_000),
    ("deep but short parentheses", "(" * 5_000 + "a" + ")" * 5_000),
    ("long chain", "+".join(["a"] * 4_000)),
    ("deep unary minus", "-" * 9_000 + "a"),
    ("deep calls", "tanh(" * 1_000 + "a" + ")" * 1_000),
    ("1 MB expression", "a+" * 500_000 + "a"),
    ("huge integer literal", "9" * 5_000),
    ("empty", ""),
    ("blank", "   \n  "),
    ("null byte", "a\x00b"),
    ("non-ASCII garbage", "é☃\u202e\U0001F600 + \u00a0"),
    ("lone surrogate", "a + \udcff"),
    ("control characters", "a\x1b[31m + b\x07"),
    ("newline outside parentheses", "a +\nb"),
]


@pytest.fixture
def sentinel(monkeypatch):
    """A module whose fire() records a call, and guards on eval/exec/compile.

    ``ast.parse`` itself calls ``compile`` with ``PyCF_ONLY_AST`` (a syntax tree,
    never a code object); any other ``compile`` or any ``eval``/``exec`` fails the test.
    """
    fired = []
    module = types.ModuleType(SENTINEL_MODULE)
    module.fire = lambda: fired.append(True)
    monkeypatch.setitem(sys.modules, SENTINEL_MODULE, module)
    real_compile = builtins.compile
    code_calls = []

    def guarded_compile(source, filename, mode, flags=0, *args, **kwargs):
        if not flags & ast.PyCF_ONLY_AST:
            code_calls.append(("compile", source))
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    def forbidden(name):
        def call(*args, **kwargs):
            code_calls.append((name, args))
            raise AssertionError(f"{name} was called")

        return call

    monkeypatch.setattr(builtins, "compile", guarded_compile)
    monkeypatch.setattr(builtins, "eval", forbidden("eval"))
    monkeypatch.setattr(builtins, "exec", forbidden("exec"))
    yield fired, code_calls
    assert not fired, "an expression was executed"
    assert not code_calls, f"code was compiled or evaluated: {code_calls[:1]}"


def _assert_clean_error(text, values=None):
    with pytest.raises(ExpressionError) as info:
        build(text, values if values is not None else {n: 1.0 for n in "abcxy"})
    message = str(info.value)
    assert message and "\n" not in message and "\r" not in message
    assert message.isprintable()
    assert len(message) <= 200 + len("line 99999, column 99999: ")
    return info.value


@pytest.mark.parametrize("label, text", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_input_is_a_one_line_error(label, text, sentinel):
    _assert_clean_error(text)


def test_specific_messages(sentinel):
    assert str(_assert_clean_error("a.b")) == "column 1: attribute access is not allowed"
    assert "call of '__import__' is not allowed" in str(_assert_clean_error("__import__('os')"))
    assert "no value given for the name __import__" in str(_assert_clean_error("__import__", {}))
    assert str(_assert_clean_error("lambda: 1")) == "column 1: lambdas are not allowed"
    assert str(_assert_clean_error("'x'")) == "column 1: strings are not allowed"
    assert "comprehensions are not allowed" in str(_assert_clean_error("[x for x in a]"))
    assert str(_assert_clean_error("a[0]")) == "column 1: subscripts are not allowed"
    assert str(_assert_clean_error("tanh(x=1)")) == "column 6: keyword arguments are not allowed"
    assert str(_assert_clean_error("tanh(*a)")) == "column 6: starred arguments are not allowed"
    assert "assignment expressions (:=) are not allowed" in str(_assert_clean_error("(y:=1)"))
    assert str(_assert_clean_error("f'{a}'")) == "column 1: f-strings are not allowed"
    assert "too long" in str(_assert_clean_error("a+" * 500_000 + "a"))
    assert "nested too deeply" in str(_assert_clean_error("+".join(["a"] * 4_000)))
    assert "nested too deeply" in str(_assert_clean_error("-" * 9_000 + "a"))
    assert "null character" in str(_assert_clean_error("a\x00b"))


def test_nesting_limit_is_exact():
    ok = "tanh(" * (MAX_DEPTH - 1) + "a" + ")" * (MAX_DEPTH - 1)
    assert build(ok, {"a": 0.5}).root.data == pytest.approx(_nested_tanh(0.5, MAX_DEPTH - 1))
    too_deep = "tanh(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH
    with pytest.raises(ExpressionError, match=f"the limit is {MAX_DEPTH} levels"):
        parse(too_deep)


def _nested_tanh(x, times):
    for _ in range(times):
        x = math.tanh(x)
    return x


def test_length_limit_is_exact():
    ok = "a" + "+0" * ((MAX_LENGTH - 1) // 2)
    assert len(ok) <= MAX_LENGTH
    with pytest.raises(ExpressionError, match="nested too deeply"):  # long, but a chain this long is too deep
        parse(ok)
    with pytest.raises(ExpressionError, match="too long"):
        parse("a" * (MAX_LENGTH + 1))
    assert parse("a" * MAX_LENGTH).names == ("a" * MAX_LENGTH,)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.text(max_size=300))
def test_hypothesis_arbitrary_text(text):
    _check_total(text)


PIECES = st.sampled_from(
    ["a", "b", "x", "1", "2.5", "+", "-", "*", "/", "**", "(", ")", "tanh(", "relu(", "log(", "exp(",
     "sigmoid(", ",", ".", "[", "]", "'", "\"", "lambda", ":", "=", ":=", "__import__", "os", " ", "\n",
     "f'", "{", "}", "for", "in", "if", "else", "*args", "**kw", "é", "\x00", "1e999", "9" * 50]
)


@SETTINGS
@given(st.lists(PIECES, max_size=40).map("".join))
def test_hypothesis_python_like_garbage(text):
    _check_total(text)


def _check_total(text):
    """Either a graph or a one-line ExpressionError; nothing else, nothing executed."""
    fired = []
    module = types.ModuleType(SENTINEL_MODULE)
    module.fire = lambda: fired.append(True)
    sys.modules[SENTINEL_MODULE] = module
    try:
        try:
            graph = build(text, {n: 0.75 for n in ("a", "b", "x", "os", "kw", "args", "é")})
        except ExpressionError as err:
            assert "\n" not in str(err) and str(err).isprintable()
        else:
            assert isinstance(graph.root, Value)
    finally:
        del sys.modules[SENTINEL_MODULE]
    assert not fired


# ---------------------------------------------------------------------------
# NAME=VALUE
# ---------------------------------------------------------------------------


def test_bindings():
    assert parse_bindings(["a=2", "b = -3.5", "c=1e-3", "d=inf"]) == {"a": 2.0, "b": -3.5, "c": 1e-3, "d": math.inf}


@pytest.mark.parametrize(
    "items, phrase",
    [
        (["a"], "expected NAME=VALUE"),
        (["1a=2"], "is not a valid variable name"),
        (["a.b=2"], "is not a valid variable name"),
        (["tanh=2"], "tanh is a function name"),
        (["a=1", "a=2"], "a is given twice"),
        (["a=two"], "the value of a must be a number, got 'two'"),
        (["a=__import__('os')"], "the value of a must be a number"),
    ],
)
def test_bad_bindings(items, phrase):
    with pytest.raises(ExpressionError) as info:
        parse_bindings(items)
    assert phrase in str(info.value) and "\n" not in str(info.value)


def test_bindings_accept_the_names_the_parser_accepts():
    values = parse_bindings(["α=2", "θ_1=3", "ﬁ=4", "match=5"])  # "ﬁ" reads as "fi", as ast.parse does
    assert values == {"α": 2.0, "θ_1": 3.0, "fi": 4.0, "match": 5.0}  # soft keywords are names
    assert build("α * θ_1 + ﬁ * match", values).root.data == 26.0


@pytest.mark.parametrize("name", ["if", "None", "x₁", "a b"])
def test_bindings_refuse_what_the_parser_refuses(name):
    with pytest.raises(ExpressionError) as info:
        parse_bindings([f"{name}=1"])
    assert str(info.value) == f"{name!r} is not a valid variable name (in {name + '=1'!r})"


def test_messages_show_unicode_as_typed():
    with pytest.raises(ExpressionError) as info:
        parse_bindings(["β.x=1"])
    assert str(info.value) == "'β.x' is not a valid variable name (in 'β.x=1')"
    with pytest.raises(ExpressionError) as info:
        parse_bindings(["a=π"])
    assert str(info.value) == "the value of a must be a number, got 'π'"


def test_no_python_warnings_leak_out():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a SyntaxWarning printed to stderr would break the one-line error
        for text in ("1if a else b", "0x1for", "a is 1"):
            with pytest.raises(ExpressionError):
                parse(text)

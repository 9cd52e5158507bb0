"""Known-wrong local rules and forward passes, to name the bug behind a wrong number.

Each entry is a formula a learner plausibly wrote instead of the right one.
A learner's gradient that equals an entry at *every* sampled point is
explained by it: "mul gives a.grad = a.data * g; expected b.data * g".

Formulas take ``(x, y, out)``: the first operand's data, the second operand's
data (the exponent ``k`` of ``a ** k``), and the node's own data.  The
gradient is the local derivative times the upstream gradient ``g``.
"""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Sequence, Tuple

Formula = Callable[[float, float, float], float]
Entry = Tuple[str, Formula]


def _log(x: float) -> float:
    return math.log(x) if x > 0 else math.nan


def _pow(x: float, y: float) -> float:
    try:
        value = x**y
    except (ZeroDivisionError, OverflowError):
        return math.nan
    return value if isinstance(value, float) else math.nan


#: (op, operand) -> (right local derivative, [plausible wrong ones])
LOCAL: Dict[Tuple[str, str], Tuple[Entry, List[Entry]]] = {
    ("add", "a"): (("1", lambda x, y, o: 1.0), [("b.data", lambda x, y, o: y), ("out.data", lambda x, y, o: o)]),
    ("add", "b"): (("1", lambda x, y, o: 1.0), [("a.data", lambda x, y, o: x), ("out.data", lambda x, y, o: o)]),
    ("mul", "a"): (("b.data", lambda x, y, o: y),
                   [("a.data", lambda x, y, o: x), ("1", lambda x, y, o: 1.0), ("out.data", lambda x, y, o: o)]),
    ("mul", "b"): (("a.data", lambda x, y, o: x),
                   [("b.data", lambda x, y, o: y), ("1", lambda x, y, o: 1.0), ("out.data", lambda x, y, o: o)]),
    ("sub", "a"): (("1", lambda x, y, o: 1.0), []),
    ("sub", "b"): (("-1", lambda x, y, o: -1.0), []),
    ("div", "a"): (("1 / b.data", lambda x, y, o: 1.0 / y),
                   [("b.data", lambda x, y, o: y), ("1 / a.data", lambda x, y, o: 1.0 / x)]),
    ("div", "b"): (("-a.data / b.data**2", lambda x, y, o: -x / (y * y)),
                   [("-1 / b.data**2", lambda x, y, o: -1.0 / (y * y)), ("-a.data / b.data", lambda x, y, o: -x / y),
                    ("1 / b.data", lambda x, y, o: 1.0 / y), ("a.data", lambda x, y, o: x),
                    ("-1 / b.data", lambda x, y, o: -1.0 / y)]),
    ("pow", "a"): (("k * a**(k - 1)", lambda x, k, o: k * _pow(x, k - 1)),
                   [("k * a**k", lambda x, k, o: k * _pow(x, k)), ("a**(k - 1)", lambda x, k, o: _pow(x, k - 1)),
                    ("(k - 1) * a**(k - 1)", lambda x, k, o: (k - 1) * _pow(x, k - 1)),
                    ("k * a**(k + 1)", lambda x, k, o: k * _pow(x, k + 1)),
                    ("(k - 1) * a**(k - 2)", lambda x, k, o: (k - 1) * _pow(x, k - 2)),
                    ("a**k * log(a)", lambda x, k, o: _pow(x, k) * _log(x)), ("k * a", lambda x, k, o: k * x),
                    ("k", lambda x, k, o: k)]),
    ("pow", "b"): (("out.data * log(a)", lambda x, y, o: o * _log(x)),
                   [("log(a)", lambda x, y, o: _log(x)), ("out.data", lambda x, y, o: o),
                    ("b * a**(b - 1)", lambda x, y, o: y * _pow(x, y - 1))]),
    ("neg", "a"): (("-1", lambda x, y, o: -1.0), []),
    ("relu", "a"): (("(a > 0)", lambda x, y, o: float(x > 0)),
                    [("(a < 0)", lambda x, y, o: float(x < 0)), ("1", lambda x, y, o: 1.0),
                     ("out.data", lambda x, y, o: o), ("a.data", lambda x, y, o: x)]),
    ("tanh", "a"): (("1 - t**2", lambda x, y, o: 1 - o * o),
                    [("1 - t", lambda x, y, o: 1 - o), ("t**2", lambda x, y, o: o * o), ("1 + t**2", lambda x, y, o: 1 + o * o),
                     ("1 - a**2", lambda x, y, o: 1 - x * x), ("(1 - t)**2", lambda x, y, o: (1 - o) ** 2),
                     ("t", lambda x, y, o: o), ("1", lambda x, y, o: 1.0)]),
    ("exp", "a"): (("e", lambda x, y, o: o),
                   [("a", lambda x, y, o: x), ("1", lambda x, y, o: 1.0), ("a * e", lambda x, y, o: x * o),
                    ("exp(a - 1)", lambda x, y, o: math.exp(x - 1)), ("a * exp(a - 1)", lambda x, y, o: x * math.exp(x - 1))]),
    ("log", "a"): (("1 / a", lambda x, y, o: 1.0 / x),
                   [("a", lambda x, y, o: x), ("log(a)", lambda x, y, o: o), ("1 / a**2", lambda x, y, o: 1.0 / (x * x)),
                    ("1 / log(a)", lambda x, y, o: 1.0 / o if o else math.nan), ("1", lambda x, y, o: 1.0),
                    ("exp(a)", lambda x, y, o: math.exp(x))]),
    ("sigmoid", "a"): (("s * (1 - s)", lambda x, y, o: o * (1 - o)),
                       [("s", lambda x, y, o: o), ("1 - s", lambda x, y, o: 1 - o), ("a * (1 - a)", lambda x, y, o: x * (1 - x)),
                        ("s * (1 + s)", lambda x, y, o: o * (1 + o)), ("s**2", lambda x, y, o: o * o),
                        ("1 - s**2", lambda x, y, o: 1 - o * o)]),
}

#: what the one-letter names in a unary rule stand for
LEGEND = {"tanh": "t = out.data", "exp": "e = out.data", "sigmoid": "s = out.data", "relu": "", "log": "", "neg": ""}
UNARY = ("neg", "relu", "tanh", "exp", "log", "sigmoid")

#: op -> [(what the learner computed, why it is wrong, formula of (x, y))]
FORWARD: Dict[str, List[Tuple[str, str, Callable[[float, float], float]]]] = {
    "sub": [("a + b", "the negation of b is missing", lambda x, y: x + y), ("b - a", "the operands are swapped", lambda x, y: y - x)],
    "div": [("a * b", "it multiplies", lambda x, y: x * y), ("b / a", "the operands are swapped", lambda x, y: y / x)],
    "mul": [("a + b", "it adds", lambda x, y: x + y)],
    "add": [("a * b", "it multiplies", lambda x, y: x * y), ("a - b", "it subtracts", lambda x, y: x - y)],
    "pow": [("a * k", "it multiplies by the exponent", lambda x, k: x * k), ("k ** a", "base and exponent are swapped",
                                                                             lambda x, k: _pow(k, x))],
    "neg": [("a", "the sign is not flipped", lambda x, y: x)],
    "relu": [("|a|", "negative inputs must give 0, not |a|", lambda x, y: abs(x)), ("a", "negative inputs are not clipped", lambda x, y: x),
             ("min(a, 0)", "it keeps the negative part", lambda x, y: min(x, 0.0))],
    "tanh": [("sinh(a)", "it is not divided by cosh(a)", lambda x, y: math.sinh(x))],
    "sigmoid": [("1 / (1 + exp(a))", "the sign inside exp is missing", lambda x, y: 1.0 / (1.0 + math.exp(x)))],
    "log": [("log10(a)", "it is the base-10 logarithm", lambda x, y: math.log10(x)),
            ("log2(a)", "it is the base-2 logarithm", lambda x, y: math.log2(x))],
    "exp": [],
}


def times_g(local: str) -> str:
    if local.startswith("1 ") or local.startswith("-("):
        local = f"({local})"  # 1 - t**2 times g is (1 - t**2) * g
    return {"1": "g", "-1": "-g", "0": "0"}.get(local, f"{local} * g")


def _close(a: float, b: float) -> bool:
    return math.isfinite(a) and math.isfinite(b) and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def explain_rule(op: str, operand: str, samples: Sequence[Tuple[float, float, float, float, float]]) -> Optional[str]:
    """The wrong rule that gives every sampled gradient, as one sentence; None if none does.

    ``samples`` are ``(x, y, out, g, learner's gradient)``.
    """
    (right_text, right), wrong = LOCAL[(op, operand)]
    candidates = [(text, f, True) for text, f in wrong]
    candidates += [("0", lambda x, y, o: 0.0, True), (_negated(right_text), lambda x, y, o: -right(x, y, o), True),
                   (right_text, right, False)]
    for text, formula, with_g in candidates:
        predicted = [formula(x, y, o) * (g if with_g else 1.0) for x, y, o, g, _ in samples]
        right_values = [right(x, y, o) * g for x, y, o, g, _ in samples]
        if all(_close(p, r) for p, r in zip(predicted, right_values)):
            continue  # indistinguishable from the right rule at these points
        if all(_close(p, got) for p, (*_, got) in zip(predicted, samples)):
            return _sentence(op, operand, text, right_text, with_g)
    return None


def _negated(text: str) -> str:
    if text.startswith("-") and " " not in text:
        return text[1:]
    return f"-({text})" if " " in text else f"-{text}"


def _sentence(op: str, operand: str, text: str, right_text: str, with_g: bool) -> str:
    if not with_g:
        return (f"{op}'s rule ignores the upstream gradient: {operand}.grad gets {text}, expected {times_g(right_text)} "
                f"(multiply by out.grad)")
    if op in UNARY:
        legend = f" ({LEGEND[op]})" if LEGEND.get(op) else ""
        return f"{op}'s derivative looks like {text}, expected {right_text}{legend}"
    return f"{op} gives {operand}.grad = {times_g(text)}; expected {times_g(right_text)}"


def explain_forward(op: str, samples: Sequence[Tuple[float, float, float]]) -> Optional[str]:
    """What the learner's forward pass computed instead, from ``(x, y, learner's value)`` samples."""
    for text, why, formula in FORWARD.get(op, []):
        try:
            if all(_close(formula(x, y), got) for x, y, got in samples):
                return f"it computes {text}: {why}"
        except (ValueError, OverflowError, ZeroDivisionError):
            continue
    return None

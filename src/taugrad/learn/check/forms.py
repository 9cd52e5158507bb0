"""The small expressions each op is graded on, and the points they are graded at.

Every binary op is tried with two Values and with a plain number on either
side (``a + 2``, ``2 + b``): a number on the left is how ``sum()`` starts (from
``0``), so ``__radd__`` and friends are part of the op.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from taugrad.learn.check.expressions import SYMBOLS, render
from taugrad.learn.check.probe import REFLECTED

Point = Tuple[float, float]
FIXED_POINTS: List[Point] = [(1.37, -0.83), (-2.12, 0.61)]  # both signs; no value where wrong rules coincide
SCALES = (1.7, -0.6, 2.3, 0.45, -1.3)  # upstream gradients g != 1 for the scaled forms


@dataclass
class Form:
    """One way to call an op: its tree (over a, b), which leaves it grades, and their data."""

    op: str
    tree: tuple
    operands: Dict[str, Tuple[str, str]]  # variable -> key of catalogue.LOCAL
    make: Callable[[Point], Tuple[Dict[str, float], float, float]]  # point -> (inputs, x, y)
    dunder: Optional[str] = None  # the reflected method a number on the left needs

    @property
    def text(self) -> str:
        return render(self.tree)

    def scaled(self) -> "Form":
        """``c * (form)``: the same rule with upstream gradient ``c`` instead of 1."""
        return Form(self.op, ("op", "*", ("var", "c"), self.tree), self.operands, self.make, self.dunder)


def random_points(rng: random.Random, n: int = 3) -> List[Point]:
    points = []
    for _ in range(n):
        a, b = (round(rng.choice((-1, 1)) * rng.uniform(0.3, 2.5), 2) for _ in range(2))
        points.append((a, b))
    return points


def _var(name: str) -> tuple:
    return ("var", name)


def _num(k: float) -> tuple:
    return ("num", k)


def forms_for(op: str, info: dict) -> List[Form]:
    """Every form of ``op`` to grade (only forms the class offers, plus the number forms of a binary op)."""
    if op in SYMBOLS:
        s = SYMBOLS[op]
        forms = [
            Form(op, ("op", s, _var("a"), _var("b")), {"a": (op, "a"), "b": (op, "b")},
                 lambda p: ({"a": p[0], "b": p[1]}, p[0], p[1])),
            Form(op, ("op", s, _var("a"), _num(2.0)), {"a": (op, "a")}, lambda p: ({"a": p[0]}, p[0], 2.0)),
        ]
        if op in info["reflected"]:  # the chapter never asks for __radd__ and friends: graded only when defined
            forms.append(Form(op, ("op", s, _num(2.0), _var("b")), {"b": (op, "b")},
                              lambda p: ({"b": p[1]}, 2.0, p[1]), REFLECTED[op]))
        return forms
    if op == "pow":
        forms = [Form(op, ("op", "**", _var("a"), _num(k)), {"a": ("pow", "a")},
                      lambda p, k=k: ({"a": abs(p[0]) if k != int(k) else p[0]}, abs(p[0]) if k != int(k) else p[0], k))
                 for k in (2.0, 3.0, -1.0, 0.5)]
        if info["value_exponent"]:
            forms.append(Form(op, ("op", "**", _var("a"), _var("b")), {"a": ("pow", "a"), "b": ("pow", "b")},
                              lambda p: ({"a": abs(p[0]), "b": p[1]}, abs(p[0]), p[1])))
        if "pow" in info["reflected"]:
            forms.append(Form(op, ("op", "**", _num(2.0), _var("b")), {"b": ("pow", "b")},
                              lambda p: ({"b": p[1]}, 2.0, p[1]), "__rpow__"))
        return forms
    tree = ("neg", _var("a")) if op == "neg" else ("call", op, _var("a"))
    positive = op == "log"
    return [Form(op, tree, {"a": (op, "a")},
                 lambda p: ({"a": abs(p[0]) if positive else p[0]}, abs(p[0]) if positive else p[0], 0.0))]


def reflected_form_text(op: str) -> str:
    """``2 + b``: the form a missing reflected method leaves out."""
    return render(("op", SYMBOLS[op], _num(2.0), _var("b")))


def sum_form() -> Form:
    """``sum([a, b, c])``: starts from 0, so its first step is ``0 + a`` through ``__radd__``."""
    tree = ("sum", (_var("a"), _var("b"), _var("c")))
    return Form("add", tree, {"a": ("add", "a"), "b": ("add", "b"), "c": ("add", "b")},
                lambda p: ({"a": p[0], "b": p[1], "c": 0.75}, p[0], p[1]), "__radd__")

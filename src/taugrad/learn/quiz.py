"""``taugrad trace --quiz``: exercise 2 (Calculate) with the answers held back until you have given yours.

The forward pass is shown; then, rule by rule in the order ``backward()`` runs
them, what each rule adds to each parent's gradient is asked for before the
rule is shown, and last each input's total gradient.  An answer is right when it is within 0.1% (or
1e-6) of the value, so hand-rounded numbers count.
"""
from __future__ import annotations

import math
from typing import Callable, Optional, TextIO

from taugrad.learn.expr import format_number
from taugrad.learn.trace import Trace

REL, ABS = 1e-3, 1e-6


def _read(answers: TextIO) -> Optional[str]:
    line = answers.readline()
    return None if line == "" else line.strip()


def _right(text: str, value: float) -> Optional[bool]:
    """Whether the answer equals ``value`` (None when it is not a number)."""
    try:
        given = float(text)
    except ValueError:
        return None
    if math.isnan(value):
        return math.isnan(given)
    return math.isclose(given, value, rel_tol=REL, abs_tol=ABS)


def quiz(result: Trace, answers: TextIO, say: Callable[[str], None]) -> int:
    """Ask every gradient of ``result``; returns 0 when every answer was right, 1 otherwise."""
    lines = result.text().splitlines()
    backward_at = next(i for i, line in enumerate(lines) if line.startswith("backward pass"))
    for line in lines[:backward_at]:
        say(line)
    say("work out each gradient, type it and press Enter (an empty line shows it)")
    say(f"  {result.root}.grad = 1   (d{result.root}/d{result.root}: backward() starts here)")
    formulas = {s.name: s.formula for s in result.forward}
    asked = right = 0
    for step in result.backward:
        say(f"  rule of {step.node} = {formulas.get(step.node, step.op)}   (g = {step.node}.grad = "
            f"{format_number(step.g)})")
        for line in step.lines:
            verb = "=" if result.assign else "+="
            asked, right = _ask(f"    {line.target}.grad {verb} ?", line.contribution, answers, say, asked, right)
            say(f"    {line.text(result.assign)}")
    say("and in total, after backward():")
    for g in result.gradients:
        asked, right = _ask(f"  d{result.root}/d{g.name} = ?", g.grad, answers, say, asked, right)
    say(f"score: {right} of {asked} right")
    return 0 if right == asked else 1


def _ask(question: str, value: float, answers: TextIO, say: Callable[[str], None], asked: int, right: int):
    say(question)
    text = _read(answers)
    asked += 1
    shown = format_number(value)
    if text is None or text == "":
        say(f"    (no answer) it is {shown}")
        return asked, right
    verdict = _right(text, value)
    if verdict is None:
        say(f"    {text!r} is not a number; it is {shown}")
    elif verdict:
        say(f"    right: {shown}")
        right += 1
    else:
        say(f"    not quite: you said {text}, it is {shown}")
    return asked, right

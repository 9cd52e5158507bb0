"""The random check: expressions over the class's ops against finite differences, shrunk on failure."""
from __future__ import annotations

import math
import random
from typing import Optional

from taugrad.learn.check import reference
from taugrad.learn.check.checks import Context, raised
from taugrad.learn.check.expressions import SYMBOLS, buildable, names_in, random_tree, render, size, to_terms
from taugrad.learn.check.report import Check
from taugrad.learn.check.shrink import shrink

ATOL, RTOL = 1e-5, 1e-3  # as taugrad gradcheck: |analytic - numeric| <= atol + rtol * |numeric|
_OP_OF = {symbol: op for op, symbol in SYMBOLS.items()}
_OP_OF["**"] = "pow"


def _failure(ctx: Context, tree, inputs) -> Optional[Check]:
    """What is wrong with the learner's engine on this expression, or None."""
    terms = to_terms(tree)
    text = render(tree)
    answer = ctx.run(tree, inputs)
    if "error" in answer:
        return Check("random", None, False, expression=text, inputs=inputs, diagnosis=raised(text, answer["error"]))
    value = reference.evaluate(terms, inputs)["value"]
    if not reference.close(answer["value"], value, rtol=1e-7):
        return Check("random", None, False, expression=text, inputs=inputs, expected=value, got=answer["value"],
                     diagnosis=f"the value of {text} is {answer['value']:.6g}, expected {value:.6g}")
    grads = answer["grads"][0]
    exact = reference.evaluate(terms, inputs)["grads"][0]
    for name in inputs:
        numeric = reference.finite_difference(terms, inputs, name)
        if not (math.isfinite(numeric) and math.isfinite(exact[name])):
            continue  # no trustworthy answer at this point (a NaN against a NaN proves nothing either)
        got = grads.get(name)
        if got is None or not abs(got - numeric) <= ATOL + RTOL * abs(numeric):
            return Check("random", None, False, expression=text, inputs=inputs, expected=numeric, got=got,
                         diagnosis=f"d/d{name} of {text} is {_g(got)}; a finite difference gives {numeric:.6g}")
    return None


def _g(x: Optional[float]) -> str:
    return "missing" if x is None else f"{x:.6g}"


def _op_of(tree) -> Optional[str]:
    if tree[0] == "op":
        return _OP_OF[tree[1]]
    if tree[0] == "neg":
        return "neg"
    if tree[0] == "call":
        return tree[1]
    return None


def random_check(ctx: Context, count: int) -> None:
    """``count`` random expressions (seeded), each with reused subexpressions; the first failure is shrunk."""
    ctx.engine.activity = "running the random check"
    if count <= 0 or not ctx.ops:
        ctx.add(Check("random", None, True, severity="info", diagnosis="not graded: no operations to combine"))
        return
    failed, first, original = 0, None, None
    for i in range(count):
        tree, inputs = random_tree(random.Random(ctx.seed * 1_000_003 + i), ctx.info, depth=2 + i % 3)
        if not inputs:
            continue
        problem = _failure(ctx, tree, inputs)
        if problem is not None:
            failed += 1
            if first is None:
                first, original = problem, (tree, inputs)
    if first is None:
        ctx.add(Check("random", None, True, diagnosis=("the random expression agrees" if count == 1 else
                                                               f"{count} random expressions agree")
                                                              + " with finite differences"))
        return
    ctx.engine.activity = "shrinking a failing random expression"
    tree = shrink(original[0], original[1], lambda t, v: _failure(ctx, t, v) is not None,
                  lambda t: buildable(t, ctx.info))
    inputs = {n: original[1][n] for n in names_in(tree)}
    check = _failure(ctx, tree, inputs) or first
    check.op = _op_of(tree)
    check.diagnosis = _explain(ctx, check, tree) + (
        f" [{failed} of {count} expressions failed; shrunk from the {size(original[0])}-node {render(original[0])}]")
    ctx.add(check)


def _explain(ctx: Context, check: Check, tree) -> str:
    """Point at the check that already names this bug, when one does."""
    op = check.op
    for name in ("forward", "rule"):
        for c in ctx.checks:
            if c.name == name and c.op == op and not c.ok and c.severity == "error":
                return f"{check.diagnosis}; the {name} check of {op} says why: {c.diagnosis}"
    for name in ("seed", "accumulation", "order"):
        for c in ctx.checks:
            if c.name == name and not c.ok and c.severity == "error":
                return f"{check.diagnosis}; likely the {name} failure above: {c.diagnosis}"
    return check.diagnosis

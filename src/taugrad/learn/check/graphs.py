"""Checks of the graph walk: accumulation, order, a second backward(), depth.

A wrong gradient here is matched against replays of the classic mistakes
(:func:`taugrad.learn.check.reference.explain`): ``=`` instead of ``+=``, rules
run in forward order, an order that is not topological, shared nodes run
twice.  The check that owns the mistake reports it, whichever graph showed it.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from taugrad.learn.check import reference
from taugrad.learn.check.checks import Context, raised
from taugrad.learn.check.engine import CheckError
from taugrad.learn.check.expressions import names_in, render, to_terms
from taugrad.learn.check.report import Check

DEPTH = 10_000


def _v(name: str) -> tuple:
    return ("var", name)


def _op(symbol: str, left: tuple, right: tuple) -> tuple:
    return ("op", symbol, left, right)


A, B, C, D = _v("a"), _v("b"), _v("c"), _v("d")
AB = _op("*", A, B)
S = _op("+", A, B)

#: (tree, op whose node reuses a value, ops it needs)
REUSE = [
    (_op("+", A, A), "add", ("add",)),
    (_op("*", A, A), "mul", ("mul",)),
    (_op("+", AB, A), "add", ("add", "mul")),
    (_op("*", S, S), "mul", ("add", "mul")),
]
#: diamonds where one path to the shared node is longer than the other, so any wrong order shows
DIAMONDS = [
    _op("+", AB, _op("*", _op("*", AB, C), D)),
    _op("+", _op("*", _op("*", AB, C), D), AB),
    _op("*", S, _op("+", _op("*", S, C), D)),
]
POINTS = [{"a": 1.37, "b": -0.83, "c": 1.9, "d": -0.7}, {"a": -2.12, "b": 0.61, "c": -1.1, "d": 2.4},
          {"a": 0.52, "b": 1.45, "c": 0.8, "d": 1.3}]

ORDER_WORDS = {
    "forward": ("rules run in forward order (leaves first): each node passes on its gradient before it has "
                "received any; run them over reversed(topo)"),
    "early": ("not a topological order: a node's rule ran before every node that uses it had added its gradient "
              "(a breadth-first walk, or a node visited on its first path); build topo by depth-first post-order "
              "and run the rules over it reversed"),
    "repeat": ("a node's rule runs more than once: the topological order lists a shared node twice "
               "(mark nodes as visited while building it)"),
}


def _mismatch(ctx: Context, tree, inputs) -> Optional[Tuple[str, float, float, dict]]:
    """(leaf, expected, got, all learner grads) of the first wrong gradient, or None."""
    answer = ctx.run(tree, inputs)
    if "error" in answer:
        raise _Raised(answer["error"])
    expected = reference.evaluate(to_terms(tree), inputs)["grads"][0]
    got = answer["grads"][0]
    for name in expected:
        if not reference.close(got.get(name), expected[name]):
            return name, expected[name], got.get(name), got
    return None


class _Raised(Exception):
    def __init__(self, error: dict):
        super().__init__(error.get("type"))
        self.error = error


def _used(tree, point) -> dict:
    return {n: point[n] for n in names_in(tree)}


def graph_checks(ctx: Context) -> None:
    """Accumulation, then order: the order check reports what accumulation's graphs show about order."""
    ctx.engine.activity = "running the accumulation check"
    ready = lambda needs: all(ctx.rule_ok.get(op) for op in needs)  # noqa: E731
    deferred: List[Tuple[str, Check]] = []
    accumulation = None
    for tree, op, needs in REUSE:
        if not ready(needs) or accumulation is not None:
            continue
        for point in POINTS:
            found = _graded(ctx, tree, _used(tree, point), "accumulation", op)
            if found is None:
                continue
            mistake, check = found
            if mistake in ORDER_WORDS:
                deferred.append((mistake, check))
                continue
            accumulation = check
            break
    usable = [t for t, _, needs in REUSE if ready(needs)]
    if accumulation is None and not usable:
        ctx.add(Check("accumulation", None, True, severity="info",
                      diagnosis="not graded: needs a correct rule for add or mul"))
    else:
        ctx.add(accumulation or Check("accumulation", None, True, expression=render(usable[-1]),
                                      diagnosis="gradients of reused values add up (+=)"))
    _order(ctx, deferred, accumulation is not None)


def _graded(ctx: Context, tree, inputs, name: str, op: Optional[str]):
    """(mistake, failing Check) for one graph at one point, or None when it is right."""
    try:
        wrong = _mismatch(ctx, tree, inputs)
    except _Raised as err:
        return None, Check(name, op, False, expression=render(tree), inputs=inputs,
                           diagnosis=raised(f"backward() of {render(tree)}", err.error))
    if wrong is None:
        return None
    leaf, expected, got, grads = wrong
    mistake = reference.explain(to_terms(tree), inputs, grads)
    text = render(tree)
    if mistake == "assign":
        why = f"{leaf}.grad is {got:.6g} in {text}, expected {expected:.6g}: " + _assign_or_reset(ctx)
    elif mistake in ORDER_WORDS:
        why = f"{leaf}.grad is {got:.6g} in {text}, expected {expected:.6g}: {ORDER_WORDS[mistake]}"
    else:
        why = f"{leaf}.grad is {got:.6g} in {text}, expected {expected:.6g}: a value used twice gets the wrong total"
    return mistake, Check(name, op, False, expression=text, inputs=inputs, expected=expected, got=got, diagnosis=why)


def _assign_or_reset(ctx: Context) -> str:
    """Why the last path to a reused value wins: a rule that assigns, or backward() zeroing grads as it goes.

    Each of add's and mul's rules is run alone, by hand, on grads that already
    hold 10: a rule that adds leaves 10 plus its share.
    """
    adding = []
    for symbol, op in (("+", "add"), ("*", "mul")):
        if op not in ctx.ops:
            continue
        answer = ctx.engine.call({"do": "rule_alone", "symbol": symbol})
        grads = answer.get("grads") if "error" not in answer else None
        if grads is None:
            adding.append(None)
            continue
        shares = {"+": (1.0, 1.0), "*": (-0.5, 1.5)}[symbol]
        adding.append(reference.close(grads["a"], 10.0 + shares[0]) and reference.close(grads["b"], 10.0 + shares[1]))
    if adding and all(adding):
        return ("every rule adds with '+=', yet the last path to reach a reused value wins: backward() sets "
                "gradients to 0 while the rules run (after some have already added into them); zero every grad "
                "once, before the first rule runs")
    if adding and any(a is False for a in adding):
        return ("a rule sets grad with '=' instead of '+=', so the last path to reach a reused value overwrites "
                "the others")
    return ("the last path to reach a reused value overwrites the others: a rule sets grad with '=' instead of '+=', "
            "or backward() resets gradients while the rules run")


def _order(ctx: Context, deferred, accumulation_failed: bool) -> None:
    ctx.engine.activity = "running the order check"
    if not (ctx.rule_ok.get("add") and ctx.rule_ok.get("mul")):
        ctx.add(Check("order", None, True, severity="info", diagnosis="not graded: needs correct rules for add and mul"))
        return
    failure = deferred[0][1] if deferred else None
    if failure is not None:
        failure.name, failure.op = "order", None
    for tree in DIAMONDS:
        if failure is not None:
            break
        for point in POINTS:
            found = _graded(ctx, tree, _used(tree, point), "order", None)
            if found is None:
                continue
            mistake, check = found
            if mistake == "assign" or (mistake is None and accumulation_failed):
                continue  # the accumulation check already reports it
            failure = check
            break
    ctx.add(failure or Check("order", None, True, expression=render(DIAMONDS[0]),
                             diagnosis="rules run in reverse topological order"))


def backward_twice(ctx: Context) -> None:
    """What a second ``backward()`` on the same graph does (never an error: engines legitimately differ)."""
    ctx.engine.activity = "running the backward-twice check"
    x = _v("x")
    if ctx.rule_ok.get("mul"):
        tree = _op("*", _op("*", x, x), x)
    elif ctx.rule_ok.get("add"):
        tree = _op("+", _op("+", x, x), x)
    else:
        ctx.add(Check("backward_twice", None, True, severity="info", diagnosis="not graded: needs a correct add or mul"))
        return
    inputs = {"x": 3.0}
    text = render(tree)
    answer = ctx.run(tree, inputs, calls=2)
    if "error" in answer:
        ctx.add(Check("backward_twice", None, False, severity="info", expression=text, inputs=inputs,
                      diagnosis=raised("a second backward()", answer["error"])))
        return
    first, second = answer["grads"][0]["x"], answer["grads"][1]["x"]
    terms = to_terms(tree)
    once = reference.evaluate(terms, inputs)["grads"][0]["x"]
    stale = reference.simulate(terms, inputs, list(reversed(range(len(terms)))),
                               start=reference.all_grads(terms, inputs))["x"]
    check = Check("backward_twice", None, True, severity="info", expression=text, inputs=inputs, got=second)
    if reference.close(second, 2 * first) and reference.close(first, once):
        check.diagnosis = (f"accumulates: a second backward() adds the same gradient again ({first:g} -> {second:g}), "
                           f"as PyTorch does; reset grads (zero_grad) between training steps")
    elif reference.close(second, first):
        check.diagnosis = (f"recomputes: backward() resets every grad, so a second call gives {second:g} again "
                           f"(PyTorch would accumulate to {2 * first:g})")
    elif reference.close(second, stale):
        check.ok, check.expected = False, 2 * once
        check.diagnosis = (f"interior gradients are not reset between backward() calls: the second call adds their "
                           f"stale gradient again ({text} at 3: {second:g}, not {2 * once:g}; micrograd 0.1.0 does the "
                           f"same); zero every node's grad before calling backward() again")
    else:
        check.ok = False
        check.diagnosis = f"a second backward() gives x.grad = {second:g} (after {first:g} the first time)"
    ctx.add(check)


def depth(ctx: Context) -> None:
    """A chain of 10,000 additions: a recursive graph walk runs out of stack (a warning, not a wrong gradient)."""
    if "add" not in ctx.ops:
        ctx.add(Check("depth", None, True, severity="info", diagnosis="not graded: needs add"))
        return
    ctx.engine.activity = f"running the depth check ({DEPTH:,}-node chain)"
    text = f"x + z + z + ... + z ({DEPTH:,} additions)"
    try:
        answer = ctx.engine.call({"do": "chain", "n": DEPTH})
    except CheckError as err:
        if "timed out" in str(err):
            raise
        ctx.add(Check("depth", None, False, severity="warning", expression=text,
                      diagnosis=f"a {DEPTH:,}-node chain crashed the engine: {err}"))
        return
    if answer.get("recursion") and answer.get("stage") == "forward":
        where = next((line.strip() for line in reversed(answer["error"].get("frames", []))
                      if line.startswith("  File")), "")
        ctx.add(Check("depth", None, False, severity="warning", expression=text,
                      diagnosis=("building the chain raises RecursionError" + (f" ({where})" if where else "")
                                 + ": an operation walks the graph below it recursively while it is built; "
                                   "compute what it needs from its parents only (or with a loop), not from the "
                                   "whole graph")))
        return
    if answer.get("recursion"):
        hi = answer.get("fails_near", DEPTH)
        ctx.add(Check("depth", None, False, severity="warning", expression=text,
                      diagnosis=f"recursive traversal fails near depth {hi:,} (RecursionError in backward()); "
                                f"build the topological order with an explicit stack instead of recursion"))
        return
    if "error" in answer:
        ctx.add(Check("depth", None, False, severity="warning", expression=text,
                      diagnosis=raised(f"backward() of a {DEPTH:,}-node chain", answer["error"])))
        return
    grads = answer["grads"][0]
    if reference.close(grads["x"], 1.0) and reference.close(grads["z"], float(DEPTH)):
        ctx.add(Check("depth", None, True, expression=text, diagnosis=f"a {DEPTH:,}-node chain is fine"))
    else:
        ctx.add(Check("depth", None, False, severity="warning", expression=text, expected=float(DEPTH), got=grads["z"],
                      diagnosis=f"no recursion limit, but on a {DEPTH:,}-node chain z.grad is {grads['z']:g}, "
                                f"expected {DEPTH:,} (see the failures above)"))

"""The per-op checks: forward values and local rules against ``taugrad.Value``.

Rules are graded in three rounds.  First on one-node graphs (``a * b``),
where neither accumulation nor traversal order can matter, so a wrong number
*is* the rule.  Then scaled by an upstream gradient (``c * (a * b)``), which
catches a rule that forgets ``out.grad`` (a wrong number that a known
traversal mistake explains is left to the graph checks).  Last, once the
graph checks have passed, through ``sum()``, which catches a ``__radd__`` that
loses the graph.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from taugrad.learn.check import catalogue, reference
from taugrad.learn.check.expressions import SYMBOLS, to_terms
from taugrad.learn.check.forms import (FIXED_POINTS, SCALES, Form, forms_for, random_points, reflected_form_text,
                                      sum_form)
from taugrad.learn.check.probe import REFLECTED
from taugrad.learn.check.report import Check

FORWARD_RTOL = 1e-7  # learners compute tanh or sigmoid by other, equally good formulas


@dataclass
class Context:
    """What every check needs: the engine, what it offers, and what earlier checks found."""

    engine: object
    seed: int = 0
    checks: List[Check] = field(default_factory=list)
    rule_ok: Dict[str, bool] = field(default_factory=dict)
    raising: set = field(default_factory=set)  # texts of forms whose forward pass raised
    stop: Optional[str] = None  # why the later checks cannot be graded (the output's gradient is never seeded)

    def __post_init__(self):
        self.info = self.engine.info
        self.ops = list(self.info["ops"])
        self.points = FIXED_POINTS + random_points(random.Random(self.seed))

    def run(self, tree, inputs, calls: int = 1) -> dict:
        return self.engine.call({"do": "evaluate", "terms": to_terms(tree), "inputs": inputs, "calls": calls})

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    def failed(self, name: str) -> bool:
        return any(c.name == name and not c.ok and c.severity == "error" for c in self.checks)


def raised(text: str, error: dict, form: Optional[Form] = None, info: Optional[dict] = None) -> str:
    """One line for a learner's exception: what raised, where in their file, and the likely fix."""
    kind, message = error.get("type", "Error"), error.get("message", "")
    where = next((line.strip() for line in reversed(error.get("frames", [])) if line.startswith("  File")), "")
    where = where.replace("File ", "").replace('"', "")
    line = f"{text} raises {kind}" + (f": {message}" if message else "") + (f" ({where})" if where else "")
    if form is not None and form.dunder and info is not None and form.op not in info["reflected"]:
        line += (f"; define {form.dunder} so that a number can come first"
                 + (" (sum() starts from 0, so it needs __radd__)" if form.dunder == "__radd__" else ""))
    elif kind == "AttributeError" and "'data'" in message:
        line += "; wrap plain numbers first: other = other if isinstance(other, Value) else Value(other)"
    return line


def forward(ctx: Context) -> None:
    """Each op's value against taugrad, in every form the op must support."""
    for op in ctx.ops:
        ctx.engine.activity = f"running the forward check of {op}"
        with_sum = op == "add" and "add" in ctx.info["reflected"]
        forms = forms_for(op, ctx.info) + ([sum_form()] if with_sum else [])
        failure = None
        for form in forms:
            failure = _grade_forward(ctx, op, form)
            if failure is not None:
                break
        ctx.add(failure or Check("forward", op, True, expression=forms[0].text,
                                 diagnosis="matches taugrad.Value in every form"))
    missing = [op for op in ctx.ops if op in SYMBOLS and op not in ctx.info["reflected"]]
    if missing:
        ctx.add(_missing_reflected(missing))


def _missing_reflected(ops: List[str]) -> Check:
    """A warning, not a failure: the chapter's engine need not take a number on the left."""
    names = ", ".join(REFLECTED[op] for op in ops)
    texts = ", ".join(reflected_form_text(op) for op in ops)
    extra = "; sum() of Values starts from 0, so it needs __radd__" if "add" in ops else ""
    return Check("forward", None, False, severity="warning", expression=texts,
                 diagnosis=f"no {names}: a number on the left ({texts}) raises TypeError{extra}; not graded, "
                           f"as the chapter does not ask for it")


def _grade_forward(ctx: Context, op: str, form: Form) -> Optional[Check]:
    samples, first = [], None
    for point in ctx.points:
        inputs, x, y = form.make(point)
        expected = reference.evaluate(to_terms(form.tree), inputs)["value"]
        answer = ctx.run(form.tree, inputs)
        if "error" in answer:
            ctx.raising.add(form.text)
            return Check("forward", op, False, expression=form.text, inputs=inputs, expected=expected,
                         diagnosis=raised(form.text, answer["error"], form, ctx.info))
        got = answer["value"]
        samples.append((x, y, got))
        if first is None and not reference.close(got, expected, rtol=FORWARD_RTOL):
            first = Check("forward", op, False, expression=form.text, inputs=inputs, expected=expected, got=got)
    if first is None:
        return None
    why = catalogue.explain_forward(op, samples) if form.tree[0] != "sum" else None
    first.diagnosis = f"{form.text} gives {first.got:.6g}, expected {first.expected:.6g}" + (f": {why}" if why else "")
    return first


def rules(ctx: Context, forms_of=None, scaled: bool = False) -> None:
    """Each op's local rule: gradients of one-node graphs (or, ``scaled``, their deep forms) against taugrad."""
    for op in ctx.ops:
        if scaled and not ctx.rule_ok.get(op):
            continue  # its one-node failure already says what is wrong
        ctx.engine.activity = f"running the rule check of {op}"
        forms = [f for f in (forms_of(op) if forms_of else forms_for(op, ctx.info)) if f.text not in ctx.raising]
        failure = _grade_rule(ctx, op, forms, scaled)
        if not scaled:
            ctx.rule_ok[op] = failure is None
            ctx.add(failure or Check("rule", op, True, expression=forms[0].text if forms else None,
                                     diagnosis="gradients match taugrad.Value"))
        elif failure is not None:  # replaces the passing one-node verdict
            ctx.rule_ok[op] = False
            ctx.checks = [failure if (c.name == "rule" and c.op == op) else c for c in ctx.checks]
    if not scaled:
        for op in ctx.ops:
            if not any(f.text not in ctx.raising for f in forms_for(op, ctx.info)):
                ctx.rule_ok[op] = False


def _grade_rule(ctx: Context, op: str, forms: List[Form], scaled: bool) -> Optional[Check]:
    for form in forms:
        graded = form.scaled() if scaled and form.tree[0] != "sum" else form
        wrong: Dict[str, list] = {}
        first: Dict[str, Check] = {}
        all_samples: Dict[str, list] = {name: [] for name in form.operands}
        for index, point in enumerate(ctx.points):
            inputs, x, y = graded.make(point)
            g = 1.0
            if graded is not form:
                g = SCALES[index % len(SCALES)]
                inputs = {**inputs, "c": g}
            terms = to_terms(graded.tree)
            expected = reference.evaluate(terms, inputs)["grads"][0]
            answer = ctx.run(graded.tree, inputs)
            if "error" in answer:
                return Check("rule", op, False, expression=graded.text, inputs=inputs,
                             diagnosis=raised(f"backward() of {graded.text}", answer["error"]))
            got = answer["grads"][0]
            right = all(reference.close(got.get(name), expected[name]) for name in form.operands)
            if scaled and not right and reference.explain(terms, inputs, got) is not None:
                continue  # a traversal mistake, not this rule's: the graph checks report it
            out = answer["value"] / g if graded is not form and g else answer["value"]
            for name in form.operands:
                all_samples[name].append((x, y, out, g, got.get(name)))
                if not reference.close(got.get(name), expected[name]):
                    wrong.setdefault(name, []).append(index)
                    first.setdefault(name, Check("rule", op, False, expression=graded.text, inputs=inputs,
                                                 expected=expected[name], got=got.get(name)))
        if wrong:
            name = next(iter(wrong))
            check = first[name]
            key = form.operands[name]
            samples = [s for s in all_samples[name] if s[4] is not None]
            why = catalogue.explain_rule(key[0], key[1], samples) if len(samples) == len(all_samples[name]) else None
            if why is None:
                right = catalogue.LOCAL[key][0][0]
                why = (f"{op} gives {name}.grad = {check.got}; expected {check.expected:.10g} "
                       f"(= {catalogue.times_g(right)}{' with g = ' + format(check.inputs['c'], 'g') if 'c' in check.inputs and graded is not form else ''})")
                why += _nearly(check.got, check.expected)
            if all(s[4] == 0 for s in all_samples[name]) and graded is form:
                why = disconnected(ctx, form, name, check.inputs) or why
            check.diagnosis = _context(graded, form) + why
            return check
    return None


def structure(ctx: Context, tree, inputs) -> Optional[dict]:
    """The learner's graph of ``tree``: its root's gradient and how the leaves hang on it (see ``Probe.structure``)."""
    answer = ctx.engine.call({"do": "structure", "terms": to_terms(tree), "inputs": inputs})
    return None if "error" in answer else answer


def disconnected(ctx: Context, form: Form, name: str, inputs) -> Optional[str]:
    """A diagnosis when ``form``'s result does not reach operand ``name`` through its parents, else None."""
    found = structure(ctx, form.tree, inputs)
    if found is None or not found["reach"] or found["reach"].get(name) != "none":
        return None
    parents = ctx.info["attributes"].get("parents") or "parents"
    return (f"the result of {form.text} is not connected to its operand {name}: {name} is not among its "
            f"{parents} (directly or through other nodes), so backward() never reaches it; build the result "
            f"with {name} as a parent and give it a backward rule")


def _nearly(got: Optional[float], expected: Optional[float]) -> str:
    """A note for a rule that is close but not right: a finite difference would not see it."""
    if got is None or expected is None or not expected or not (got == got):
        return ""
    relative = abs(got - expected) / abs(expected)
    if relative >= 1e-2:
        return ""
    return (f": close, but off by a relative {relative:.1e} (more than rounding: a wrong constant? "
            f"a finite-difference check at 1e-3 would miss it)")


def _context(graded: Form, form: Form) -> str:
    if form.tree[0] == "sum":
        return ("in sum([a, b, c]) (sum() starts from 0, so its first step is 0 + a, through __radd__, "
                "which must return a node with a as a parent): ")
    if form.dunder:
        return f"in {graded.text} (a number on the left calls {form.dunder}; sum() relies on __radd__): "
    return ""


def scaled_rules(ctx: Context) -> None:
    """Rules again with an upstream gradient g != 1 (``c * (a * b)``), once mul's own rule is right."""
    if ctx.rule_ok.get("mul"):
        rules(ctx, scaled=True)


def sum_rule(ctx: Context) -> None:
    """``sum([a, b, c])`` (three nodes deep): only once the graph walk is known to be right."""
    if ("add" in ctx.ops and ctx.rule_ok.get("add") and "add" in ctx.info["reflected"]
            and sum_form().text not in ctx.raising and not ctx.failed("accumulation") and not ctx.failed("order")):
        rules(ctx, lambda op: [sum_form()] if op == "add" else [], scaled=True)

"""Faults that make many rules look wrong at once, named where they are.

Three mistakes show up as wrong numbers in checks that are not theirs: an
output gradient never seeded with 1 (every gradient is 0), a result not
connected to its operand (its gradient is 0, which looks like a rule that
says 0), and an op built from others (``a - b`` as ``a + (-b)``) whose parts
or traversal are wrong.  Each is confirmed on the learner's own graph (its
parents), not guessed from the numbers.
"""
from __future__ import annotations

from taugrad.learn.check import reference
from taugrad.learn.check.checks import Context, structure
from taugrad.learn.check.forms import FIXED_POINTS, forms_for
from taugrad.learn.check.report import Check


def seed(ctx: Context) -> None:
    """Does backward() set the output's own gradient to 1?  If not, every other check would blame a rule."""
    ctx.engine.activity = "running the seed check"
    forms = [f for op in ("mul", "add") if op in ctx.ops for f in forms_for(op, ctx.info)[:1]
             if f.text not in ctx.raising]
    if not forms:
        ctx.add(Check("seed", None, True, severity="info", diagnosis="not graded: needs add or mul"))
        return
    form = forms[0]
    inputs, _, _ = form.make(FIXED_POINTS[0])
    answer = ctx.run(form.tree, inputs)
    found = structure(ctx, form.tree, inputs)
    if "error" in answer or found is None:
        ctx.add(Check("seed", None, True, severity="info", expression=form.text,
                      diagnosis="not graded: backward() raised (see the rule checks)"))
        return
    grads = answer["grads"][0]
    if not reference.close(found["root_grad"], 1.0) and all(g == 0 for g in grads.values()):
        ctx.stop = "the output's gradient is never seeded with 1 (see the seed check)"
        ctx.add(Check("seed", None, False, expression=form.text, inputs=inputs, expected=1.0, got=found["root_grad"],
                      diagnosis=(f"after backward() the output's own grad is {found['root_grad']:g}, not 1, and every "
                                 f"gradient is 0: backward() must set self.grad = 1.0 (d out / d out) before it runs "
                                 f"the rules, or each rule multiplies by 0")))
        return
    ctx.add(Check("seed", None, True, expression=form.text, diagnosis="backward() seeds the output's gradient with 1"))


def blame_composed(ctx: Context) -> None:
    """A failing rule of an op built from others (``a - b`` as ``a + (-b)``) is put on the part or walk at fault."""
    failing = [c for c in ctx.checks if c.name == "rule" and not c.ok and c.severity == "error" and c.op]
    composed = []
    for check in failing:
        form = forms_for(check.op, ctx.info)[0]
        inputs, _, _ = form.make(FIXED_POINTS[0])
        found = structure(ctx, form.tree, inputs)
        if found is not None and found.get("composed"):
            composed.append((check, form))
    built = {check.op for check, _ in composed}
    culprits = [c for c in ctx.checks if not c.ok and c.severity == "error"
                and (c.name in ("accumulation", "order") or (c.name == "rule" and c.op not in built))]
    if not culprits:
        return
    culprit = culprits[0]
    which = f"the rule of {culprit.op}" if culprit.name == "rule" else f"the {culprit.name} check"
    for check, form in composed:
        check.severity = "info"
        check.diagnosis = (f"not graded on its own: your {form.text} is built from other operations, and {which} "
                           f"already fails; it gives {_g(check.got)} here for that reason ({culprit.diagnosis})")
        ctx.rule_ok[check.op] = False


def _g(x) -> str:
    return "nothing" if x is None else f"{x:g}"

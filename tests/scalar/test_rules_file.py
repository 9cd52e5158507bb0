"""The first-order scalar rules are real Python in a checked-in file, in the chapter's form, and match their derivatives."""
from __future__ import annotations

import inspect
import traceback
from pathlib import Path

from taugrad.scalar import Value, derivatives, rules, write_rules


def test_the_checked_in_rules_are_what_the_derivatives_generate():
    written = Path(rules.__file__).read_text()
    assert written == write_rules.render(), "run: python -m taugrad.scalar.write_rules"


def test_every_rule_the_engine_runs_is_a_function_of_that_file():
    for definition in derivatives.ALL:
        rule = definition.rule
        assert rule is getattr(rules, definition.rule_name)
        assert inspect.getsourcefile(rule) == rules.__file__
        assert rule.derivative is definition


def test_mul_reads_as_the_chapter_writes_it():
    source = inspect.getsource(rules.mul_rule)
    assert "a, b = out._prev" in source and "g = out.grad" in source
    assert "a.grad += b.data * g" in source and "b.grad += a.data * g" in source


def test_a_traceback_through_a_rule_shows_its_file_and_line():
    a, b = Value(2.0), Value(3.0)
    out = a * b
    out._prev = ("not a Value", b)  # a rule that fails on its first line
    out.grad = 1.0
    try:
        out._backward()
    except AttributeError as err:
        frames = traceback.extract_tb(err.__traceback__)
    else:
        raise AssertionError("the broken node did not raise")
    last = frames[-1]
    assert last.filename == rules.__file__ and last.name == "mul_rule"
    assert last.line == "a.grad += b.data * g"

"""taugrad.gradcheck on Values: passes on correct rules, names every wrong input."""
from __future__ import annotations

import pytest

from taugrad import GradcheckError, Value, gradcheck
from taugrad.scalar import value as value_module


def test_passes_and_leaves_inputs_untouched():
    a, b = Value(1.5, label="a"), Value(-0.5, label="b")
    a.grad = 7.0
    assert gradcheck(lambda a, b: (a * b + b.tanh()).exp(), [a, b]) is True
    assert a.grad == 7.0 and a.data == 1.5 and b.data == -0.5


def test_single_input_without_list():
    assert gradcheck(lambda x: x.sigmoid() * x, Value(0.3))


def test_wrong_rule_is_reported_with_both_numbers(monkeypatch):
    def broken_mul(out):  # forgets the factor for the second operand
        a, b = out._prev
        a.grad += b.data * out.grad
        b.grad += out.grad

    monkeypatch.setattr(value_module, "mul_rule", broken_mul)
    a, b, c = Value(2.0, label="a"), Value(3.0, label="b"), Value(1.0, label="c")
    with pytest.raises(GradcheckError) as err:
        gradcheck(lambda a, b, c: a * b + c, [a, b, c])
    message = str(err.value)
    assert "input 1 (b): analytic 1.0, numeric 2.0000000" in message
    assert "input 0" not in message and "input 2" not in message


def test_bad_arguments():
    with pytest.raises(ValueError, match="empty"):
        gradcheck(lambda: Value(1.0), [])
    with pytest.raises(ValueError, match="eps"):
        gradcheck(lambda x: x, [Value(1.0)], eps=0)

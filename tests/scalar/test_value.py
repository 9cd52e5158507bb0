"""Value: the chapter's examples, IEEE edge cases, bad input, repeated backward, deep graphs."""
from __future__ import annotations

import math
import sys

import pytest
import torch

from taugrad import Value
from taugrad.scalar import Value as ScalarValue


def torch_scalar(fn, *xs):
    """(value, grads) of fn at xs in PyTorch float64."""
    ts = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    out = fn(*ts)
    out.backward()
    return out.item(), [t.grad.item() for t in ts]


def ours(fn, *xs):
    vs = [Value(x) for x in xs]
    out = fn(*vs)
    out.backward()
    return out.data, [v.grad for v in vs]


def same(a, b):
    """Equal floats, treating nan == nan and matching signed infinities."""
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-300)


def test_exported_from_both_places():
    assert Value is ScalarValue


def test_chapter_example_a_times_b_plus_c():
    a, b, c = Value(2.0, label="a"), Value(3.0, label="b"), Value(4.0, label="c")
    L = (a * b) + c
    L.backward()
    assert (L.data, a.grad, b.grad, c.grad) == (10.0, 3.0, 2.0, 1.0)
    assert L._op == "+" and set(L._prev) == {a * b if False else L._prev[0], c}
    assert a.label == "a"


def test_shared_subexpression_accumulates():
    a = Value(3.0)
    (a * a + a).backward()  # d/da (a^2 + a) = 2a + 1
    assert a.grad == 7.0


def test_backward_twice_accumulates_into_leaves_like_pytorch():
    # micrograd gives 72 here (interior grads are not reset); PyTorch with retain_graph gives 54
    x = Value(3.0)
    y = x * x * x
    y.backward()
    assert x.grad == 27.0
    y.backward()
    assert x.grad == 54.0
    t = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    ty = t * t * t
    ty.backward(retain_graph=True)
    ty.backward()
    assert x.grad == t.grad.item()


def test_backward_on_a_leaf_gives_one():
    x = Value(5.0)
    x.backward()
    assert x.grad == 1.0


def test_deep_chain_of_a_million_nodes_without_recursion(monkeypatch):
    limit = sys.getrecursionlimit()

    def forbidden(_):
        raise AssertionError("backward must not touch the recursion limit")

    monkeypatch.setattr(sys, "setrecursionlimit", forbidden)
    x = Value(0.5)
    y = x
    for _ in range(500_000):  # each step adds 2 nodes: a coerced leaf and the sum
        y = y + 1.0
        y = y * 1.0
    y.backward()
    assert x.grad == 1.0
    assert y.data == 500_000.5
    assert sys.getrecursionlimit() == limit


@pytest.mark.parametrize(
    "name, fn, x",
    [
        ("exp overflow", lambda v: v.exp(), 1000.0),
        ("exp underflow", lambda v: v.exp(), -1000.0),
        ("log of zero", lambda v: v.log(), 0.0),
        ("log of negative", lambda v: v.log(), -1.0),
        ("sqrt of negative", lambda v: v**0.5, -8.0),
        ("reciprocal of zero", lambda v: v**-1, 0.0),
        ("reciprocal of negative zero", lambda v: v**-1, -0.0),
        ("sqrt at zero", lambda v: v**0.5, 0.0),
        ("division by zero", lambda v: 1.0 / v, 0.0),
        ("zero over zero", lambda v: v / v, 0.0),
        ("x over x, tiny", lambda v: v / v, 1e-300),
        ("x over x, subnormal", lambda v: v / v, 1e-310),
        ("sqrt of -inf", lambda v: v**0.5, -math.inf),
        ("sqrt of negative zero", lambda v: v**0.5, -0.0),
        ("rsqrt of negative zero", lambda v: v**-0.5, -0.0),
        ("rsqrt of -inf", lambda v: v**-0.5, -math.inf),
        ("1.5 power of -inf", lambda v: v**1.5, -math.inf),
        ("power overflow", lambda v: v**400, 10.0),
        ("negative power overflow", lambda v: v**401, -10.0),
        ("tanh huge", lambda v: v.tanh(), 1e4),
        ("tanh huge negative", lambda v: v.tanh(), -1e4),
        ("sigmoid huge", lambda v: v.sigmoid(), 1e4),
        ("sigmoid huge negative", lambda v: v.sigmoid(), -1e4),
        ("relu of nan", lambda v: v.relu(), math.nan),
        ("relu at zero", lambda v: v.relu(), 0.0),
        ("exp of inf", lambda v: v.exp(), math.inf),
        ("tanh of nan", lambda v: v.tanh(), math.nan),
        ("zero to the zero", lambda v: v**0, 0.0),
        ("2 ** v huge", lambda v: 2**v, 5000.0),
        ("0 ** v", lambda v: 0**v, 2.0),
        ("v ** v at zero", lambda v: v**v, 0.0),
        ("negative base, Value exponent", lambda v: (v - 3.0) ** (v * 0.5), 1.0),
    ],
)
def test_ieee_edge_cases_match_pytorch_float64(name, fn, x):
    got, (grad,) = ours(fn, x)
    want, (want_grad,) = torch_scalar(fn, x)
    assert same(got, want), f"{name}: value {got} != {want}"
    assert same(grad, want_grad), f"{name}: grad {grad} != {want_grad}"


def test_no_complex_numbers_and_no_exceptions():
    v = Value(-8.0) ** (1 / 3)
    assert isinstance(v.data, float) and math.isnan(v.data)
    w = Value(0.0)
    out = w.log() + w**-1 + (1.0 / w)
    out.backward()  # no ZeroDivisionError out of backward
    assert math.isnan(w.grad) or math.isinf(w.grad)


def test_tanh_and_sigmoid_exact_for_large_inputs():
    for x in (20.0, 400.0, 1e4):
        assert Value(x).tanh().data == 1.0 and Value(-x).tanh().data == -1.0
        assert Value(-x).sigmoid().data == pytest.approx(math.exp(-x) / (1 + math.exp(-x)), rel=1e-15, abs=0)
    assert Value(30.0).sigmoid().data == pytest.approx(1.0 / (1.0 + math.exp(-30.0)), rel=1e-15)


@pytest.mark.parametrize("bad", ["abc", None, [1.0], 1 + 2j, {"x": 1}])
def test_non_numeric_data_is_a_type_error_naming_it(bad):
    with pytest.raises(TypeError) as err:
        Value(bad)
    assert repr(bad) in str(err.value)
    assert "\n" not in str(err.value)


def test_value_of_a_value_explains():
    with pytest.raises(TypeError, match="got a Value"):
        Value(Value(1.0))


def test_numbers_of_other_types_are_accepted():
    import fractions

    import numpy as np

    assert Value(2).data == 2.0 and isinstance(Value(2).data, float)
    assert Value(True).data == 1.0
    assert Value(np.float32(1.5)).data == 1.5 and isinstance(Value(np.float32(1.5)).data, float)
    assert Value(fractions.Fraction(1, 4)).data == 0.25


def test_bad_operand_is_python_type_error():
    with pytest.raises(TypeError):
        Value(1.0) + "a"
    with pytest.raises(TypeError):
        "a" * Value(1.0) * None
    with pytest.raises(TypeError):
        Value(1.0) ** "x"


def test_reflected_operators_and_sum():
    a = Value(4.0)
    results = [(2 - a, -2.0, -1.0), (2 / a, 0.5, -2 / 16), (2**a, 16.0, 16 * math.log(2)),
               (3 + a, 7.0, 1.0), (3 * a, 12.0, 3.0), (-a, -4.0, -1.0), (a - 1, 3.0, 1.0), (a / 2, 2.0, 0.5)]
    for out, value, grad in results:
        a.grad = 0.0
        out.backward()
        assert out.data == pytest.approx(value) and a.grad == pytest.approx(grad)
    b, c = Value(1.0), Value(2.0)
    total = sum([a, b, c])
    total.backward()
    assert total.data == 7.0 and (b.grad, c.grad) == (1.0, 1.0)


def test_repr_matches_micrograd():
    assert repr(Value(2.0)) == "Value(data=2.0, grad=0.0)"

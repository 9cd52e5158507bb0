"""Audit against PyTorch float64: true division, masked pow gradients, exponents +-0.5,
and ``grad`` of inputs that are used but get no gradient term.

Values are compared exactly, the sign of zero included.  Gradients are compared
exactly except for the sign of a zero: a leaf's ``.grad`` starts at +0.0 and is
accumulated into (``0.0 + -0.0 == 0.0``), where PyTorch assigns the first gradient.
"""
from __future__ import annotations

import math
import random

import pytest
import torch

import taugrad
from taugrad import Value
from taugrad.scalar import nn

INF, NAN = math.inf, math.nan


def t64(x, requires_grad=True):
    return torch.tensor(x, dtype=torch.float64, requires_grad=requires_grad)


def same_value(got, want):
    """Bit-for-bit equal as IEEE results: nan matches nan, -0.0 does not match 0.0."""
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def same_grad(got, want):
    """Equal, nan matching nan; the sign of a zero gradient is not compared."""
    return (math.isnan(got) and math.isnan(want)) or got == want


def close(got, want):
    """For second derivatives: sums of terms may be accumulated in another order."""
    if want is None or got is None:
        return got is None and want is None
    return (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-12, abs=0.0)


# ---------------------------------------------------------------------------
# A. a / b is one IEEE division, with PyTorch's local rules
# ---------------------------------------------------------------------------

QUOTIENTS = [
    (0.0, 1e-160),  # b * b underflows: b**-1 then -b**-2 gave nan
    (1e-170, 1e-170),  # b**-2 overflows: -inf
    (1e200, 1e200),  # b**-2 underflows: 0.0
    (INF, 1e200),  # inf * 0: nan
    (1e-310, 1e-310),  # 1 / subnormal overflows: the value was inf
    (49.0, 49.0),  # 49 * (1/49) rounds to 0.9999999999999999
    (1.0, 3.0),
    (-7.5, 0.1),
    (1.0, 0.0),
    (1.0, -0.0),
    (-0.0, 5.0),
    (0.0, 0.0),
    (INF, INF),
    (1.0, INF),
    (NAN, 2.0),
    (1e308, 1e-308),
]


@pytest.mark.parametrize("a, b", QUOTIENTS)
def test_value_over_value_matches_torch(a, b):
    x, y = Value(a), Value(b)
    out = x / y
    out.backward()
    tx, ty = t64(a), t64(b)
    want = tx / ty
    want.backward()
    assert same_value(out.data, want.item())
    assert same_grad(x.grad, tx.grad.item()), f"d/da: {x.grad} != {tx.grad.item()}"
    assert same_grad(y.grad, ty.grad.item()), f"d/db: {y.grad} != {ty.grad.item()}"


@pytest.mark.parametrize("a, b", QUOTIENTS)
def test_value_over_number_and_number_over_value_match_torch_div(a, b):
    # torch's Python ``k / t`` is reciprocal(t) * k; torch.div(k, t) is the one IEEE division
    x = Value(a)
    out = x / b
    out.backward()
    tx = t64(a)
    want = torch.div(tx, b)
    want.backward()
    assert same_value(out.data, want.item()) and same_grad(x.grad, tx.grad.item())

    y = Value(b)
    out = a / y
    out.backward()
    ty = t64(b)
    want = torch.div(t64(a, requires_grad=False), ty)
    want.backward()
    assert same_value(out.data, want.item()) and same_grad(y.grad, ty.grad.item())


@pytest.mark.parametrize("x0", [1e-300, 1e-310, 1e-170, 1e200, 49.0, 0.0, INF])
def test_x_over_x_matches_torch(x0):
    x = Value(x0)
    out = x / x
    out.backward()
    t = t64(x0)
    want = t / t
    want.backward()
    assert same_value(out.data, want.item()) and same_grad(x.grad, t.grad.item())


def test_quotient_is_one_rounding_so_later_ops_see_the_right_number():
    x = Value(49.0)
    assert (x / x).data == 1.0
    assert (Value(-8.0) ** (x / x)).data == -8.0  # was nan: (-8) ** 0.9999999999999999
    assert (Value(1.0) / Value(10.0)).data == 0.1
    assert (1.0 / Value(49.0)).data == 1.0 / 49.0


def test_division_is_one_node_with_both_operands_as_parents():
    a, b = Value(6.0), Value(3.0)
    c = a / b
    assert c._op == "/" and c._prev == (a, b) and c.data == 2.0
    d = 1.5 / a
    assert d._op == "/" and d._prev[1] is a and d._prev[0].data == 1.5
    e = a / 4
    assert e._op == "/" and e._prev[0] is a and e._prev[1].data == 4.0


SECOND_ORDER_POINTS = [(1.3, -0.7), (2.0, 3.0), (1e-170, 1e-170), (1e200, 1e200), (0.0, 1e-160), (3.0, 1e-100)]


@pytest.mark.parametrize("a0, b0", SECOND_ORDER_POINTS)
@pytest.mark.parametrize(
    "f",
    [lambda a, b: a / b, lambda a, b: (a * a) / (b * a + 1.0), lambda a, b: 2.5 / b + a / 3.0],
    ids=["a/b", "a2/(ab+1)", "const"],
)
def test_second_derivatives_of_division_match_torch(f, a0, b0):
    a, b = Value(a0), Value(b0)
    ga, gb = taugrad.grad(f(a, b), [a, b], create_graph=True, allow_unused=True)
    ta, tb = t64(a0), t64(b0)
    tga, tgb = torch.autograd.grad(f(ta, tb), [ta, tb], create_graph=True, allow_unused=True)
    for g, tg in ((ga, tga), (gb, tgb)):
        if tg is None:
            assert g is None
            continue
        assert close(g.data, tg.item())
        if not tg.requires_grad:
            continue
        ours = taugrad.grad(g, [a, b], allow_unused=True)
        want = torch.autograd.grad(tg, [ta, tb], retain_graph=True, allow_unused=True)
        assert all(close(o, None if w is None else w.item()) for o, w in zip(ours, want)), (ours, want)


@pytest.mark.parametrize("a0, b0", [(1.5, -0.25), (1e-170, 1e-170), (1e-300, 1e-160)])
def test_backward_create_graph_through_division(a0, b0):
    a, b = Value(a0), Value(b0)
    (a / b).backward(create_graph=True)
    gb = b.grad
    a.grad, b.grad = 0.0, 0.0
    gb.backward()
    ta, tb = t64(a0), t64(b0)
    (tgb,) = torch.autograd.grad(ta / tb, [tb], create_graph=True)
    tgb.backward()
    assert close(gb.data, tgb.item()) and close(a.grad, ta.grad.item()) and close(b.grad, tb.grad.item())


# ---------------------------------------------------------------------------
# B. masked pow gradients are multiplied by 0, so an inf upstream gives nan
# ---------------------------------------------------------------------------

MASKED_POW = [
    ("(0 ** b) ** -1", lambda a, b: (0.0**b) ** -1.0 + a, 0.0, 0.5),
    ("(a ** b) ** -1", lambda a, b: (a**b) ** -1.0, 0.0, 0.5),
    ("(a ** b) ** -1, b = 0", lambda a, b: (a**b) ** -1.0, 0.0, 0.0),
    ("log(0 ** b)", lambda a, b: (0.0**b).log() + a, 1.0, 2.0),
    ("a ** b masked, finite upstream", lambda a, b: (a**b) * 3.0, 0.0, 2.0),
]


@pytest.mark.parametrize("name, f, a0, b0", MASKED_POW, ids=[m[0] for m in MASKED_POW])
def test_masked_pow_gradient_is_times_zero_like_torch(name, f, a0, b0):
    a, b = Value(a0), Value(b0)
    f(a, b).backward()
    ta, tb = t64(a0), t64(b0)
    f(ta, tb).backward()
    assert same_grad(a.grad, ta.grad.item()), f"d/da {a.grad} != {ta.grad.item()}"
    assert same_grad(b.grad, tb.grad.item()), f"d/db {b.grad} != {tb.grad.item()}"


@pytest.mark.parametrize("name, f, a0, b0", MASKED_POW, ids=[m[0] for m in MASKED_POW])
def test_masked_pow_gradient_is_times_zero_with_create_graph(name, f, a0, b0):
    a, b = Value(a0), Value(b0)
    ours = taugrad.grad(f(a, b), [a, b], create_graph=True)
    ta, tb = t64(a0), t64(b0)
    want = torch.autograd.grad(f(ta, tb), [ta, tb], create_graph=True)
    for o, w in zip(ours, want):
        assert same_grad(o.data, w.item()), (ours, want)


# ---------------------------------------------------------------------------
# C. exponents 0.5 and -0.5 are sqrt and 1 / sqrt, as PyTorch evaluates them
# ---------------------------------------------------------------------------

SPECIAL = [-INF, -4.0, -1e-310, -0.0, 0.0, 1e-310, 0.25, 4.0, 1e300, INF, NAN]


@pytest.mark.parametrize("k", [0.5, -0.5, 1.5, -1.5])
@pytest.mark.parametrize("x0", SPECIAL)
def test_half_integer_powers_match_torch(k, x0):
    x = Value(x0)
    out = x**k
    out.backward()
    t = t64(x0)
    want = t**k
    want.backward()
    assert same_value(out.data, want.item()), f"value {out.data} != {want.item()}"
    assert same_grad(x.grad, t.grad.item()), f"grad {x.grad} != {t.grad.item()}"
    # the differentiable path evaluates the same rule
    x = Value(x0)
    (g,) = taugrad.grad(x**k, [x], create_graph=True)
    assert same_grad(g.data, t.grad.item())


def test_sqrt_of_negative_zero_keeps_the_sign():
    assert math.copysign(1.0, (Value(-0.0) ** 0.5).data) == -1.0
    assert (Value(-0.0) ** -0.5).data == -INF
    assert math.isnan((Value(-INF) ** 0.5).data) and math.isnan((Value(-INF) ** -0.5).data)


# ---------------------------------------------------------------------------
# D. grad: an input the outputs reach is used, even if its gradient is masked
# ---------------------------------------------------------------------------

MASKED_USES = [
    ("relu(x), x < 0", lambda x: x.relu(), -1.0),
    ("x ** 0", lambda x: x**0, 2.0),
    ("0 ** x", lambda x: 0.0**x, 1.0),
    ("x ** x at 0", lambda x: x**x, 0.0),
    ("relu(x) * 3", lambda x: x.relu() * 3, -1.0),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("allow_unused", [False, True])
@pytest.mark.parametrize("name, f, x0", MASKED_USES, ids=[m[0] for m in MASKED_USES])
def test_used_input_with_masked_gradient_gets_zero(name, f, x0, create_graph, allow_unused):
    x = Value(x0)
    (g,) = taugrad.grad(f(x), [x], create_graph=create_graph, allow_unused=allow_unused)
    t = t64(x0)
    (want,) = torch.autograd.grad(f(t), [t], create_graph=create_graph, allow_unused=allow_unused)
    assert g is not None and want is not None
    assert (g.data if create_graph else g) == want.item() == 0.0


def test_dead_relu_in_an_mlp_gets_zero_gradients_like_torch():
    random.seed(0)
    model = nn.MLP(2, [4, 1])
    dead = model.layers[0].neurons[0]
    dead.b.data = -100.0  # relu(-100 + w.x) = 0 for this input: its w and b get 0
    x = [0.5, -1.5]
    loss = model(x) ** 2
    ours = taugrad.grad(loss, model.parameters())
    assert taugrad.grad(loss, model.parameters(), allow_unused=True) == ours
    # the same network in torch, from the same numbers
    layer0 = [([t64(w.data) for w in n.w], t64(n.b.data)) for n in model.layers[0].neurons]
    (w1, b1), = [([t64(w.data) for w in n.w], t64(n.b.data)) for n in model.layers[1].neurons]
    hidden = [torch.relu(b + sum(wi * xi for wi, xi in zip(ws, x))) for ws, b in layer0]
    tloss = (b1 + sum(wi * hi for wi, hi in zip(w1, hidden))) ** 2
    tparams = [p for ws, b in layer0 + [(w1, b1)] for p in ws + [b]]
    want = [g.item() for g in torch.autograd.grad(tloss, tparams)]
    assert list(ours) == pytest.approx(want, rel=1e-12, abs=0.0)
    assert ours[:3] == (0.0, 0.0, 0.0)
    loss.backward()
    assert list(ours) == [p.grad for p in model.parameters()]


def test_unreached_input_is_still_unused():
    x, y = Value(1.0), Value(2.0)
    with pytest.raises(ValueError, match="input 1 .* not used"):
        taugrad.grad(x.relu(), [x, y])
    assert taugrad.grad((-x).relu(), [x, y], allow_unused=True) == (0.0, None)

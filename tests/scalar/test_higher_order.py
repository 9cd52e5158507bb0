"""Higher-order derivatives of Value graphs: create_graph=True and scalar grad()."""
from __future__ import annotations

import math

import pytest
import torch

from taugrad import Value
from taugrad.scalar import nn
from taugrad.scalar.higher import grad

# f, then its 1st, 2nd, 3rd derivatives in closed form
CLOSED_FORMS = {
    "x**3": (lambda v: v**3, lambda x: 3 * x**2, lambda x: 6 * x, lambda x: 6.0),
    "tanh": (lambda v: v.tanh(),
             lambda x: 1 - math.tanh(x) ** 2,
             lambda x: -2 * math.tanh(x) * (1 - math.tanh(x) ** 2),
             lambda x: (1 - math.tanh(x) ** 2) * (6 * math.tanh(x) ** 2 - 2)),
    "exp": (lambda v: v.exp(), math.exp, math.exp, math.exp),
    "log": (lambda v: v.log(), lambda x: 1 / x, lambda x: -1 / x**2, lambda x: 2 / x**3),
    "sigmoid": (lambda v: v.sigmoid(),
                lambda x: s(x) * (1 - s(x)),
                lambda x: s(x) * (1 - s(x)) * (1 - 2 * s(x)),
                lambda x: s(x) * (1 - s(x)) * (1 - 6 * s(x) + 6 * s(x) ** 2)),
    "1/x": (lambda v: 1 / v, lambda x: -1 / x**2, lambda x: 2 / x**3, lambda x: -6 / x**4),
    "2**x": (lambda v: 2**v, lambda x: 2**x * math.log(2), lambda x: 2**x * math.log(2) ** 2, lambda x: 2**x * math.log(2) ** 3),
    "x**x": (lambda v: v**v,
             lambda x: x**x * (math.log(x) + 1),
             lambda x: x**x * ((math.log(x) + 1) ** 2 + 1 / x),
             lambda x: x**x * ((math.log(x) + 1) ** 3 + 3 * (math.log(x) + 1) / x - 1 / x**2)),
    "relu(x)*x": (lambda v: v.relu() * v, lambda x: 2 * x, lambda x: 2.0, lambda x: 0.0),
}


def s(x):
    return 1 / (1 + math.exp(-x))


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
@pytest.mark.parametrize("x0", [0.7, 1.9])
def test_first_three_derivatives_match_closed_forms(name, x0):
    f, *derivatives = CLOSED_FORMS[name]
    x = Value(x0)
    y = f(x)
    for order, closed in enumerate(derivatives, start=1):
        (y,) = grad(y, [x], create_graph=True, allow_unused=True)
        if y is None:  # the previous derivative no longer depends on x: this one is 0
            y = Value(0.0)
        assert y.data == pytest.approx(closed(x0), rel=1e-10, abs=1e-12), f"order {order}"


def test_x_cubed_at_two():
    x = Value(2.0)
    d1, = grad(x**3, [x], create_graph=True)
    d2, = grad(d1, [x], create_graph=True)
    d3, = grad(d2, [x])
    assert (d1.data, d2.data, d3) == (12.0, 12.0, 6.0)


def test_backward_create_graph_then_backward_again():
    x = Value(2.0)
    (x**3).backward(create_graph=True)
    first = x.grad
    assert isinstance(first, Value) and first.data == 12.0
    x.grad = 0.0
    first.backward()
    assert x.grad == 12.0


def test_mixed_partials_against_pytorch():
    def f(a, b, lib_log):
        return (a * b).tanh() * lib_log(a * a + b) + (a ** b)

    a, b = Value(1.3), Value(0.4)
    ga, gb = grad(f(a, b, lambda v: v.log()), [a, b], create_graph=True)
    hessian = [grad(g, [a, b]) for g in (ga, gb)]
    ta = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
    tga, tgb = torch.autograd.grad(f(ta, tb, torch.log), [ta, tb], create_graph=True)
    want = [[t.item() for t in torch.autograd.grad(g, [ta, tb], retain_graph=True)] for g in (tga, tgb)]
    assert (ga.data, gb.data) == pytest.approx((tga.item(), tgb.item()), rel=1e-12)
    assert [h for row in hessian for h in row] == pytest.approx([w for row in want for w in row], rel=1e-10)


@pytest.mark.parametrize("nonlin", [True, "tanh"])
def test_fused_and_granular_neurons_have_the_same_second_derivatives(nonlin):
    import random

    random.seed(3)
    fused_net = nn.MLP(2, [3, 1], nonlin=nonlin)
    granular = nn.MLP(2, [3, 1], nonlin=nonlin, fused=False)
    for p, q in zip(fused_net.parameters(), granular.parameters()):
        q.data = p.data
    rows = []
    for net in (fused_net, granular):
        x = [Value(0.3), Value(-0.8)]
        gx = grad(net(x), x, create_graph=True)
        rows.append([grad(g, x, allow_unused=True) for g in gx])
    flat = [[0.0 if h is None else h for row in hess for h in row] for hess in rows]
    assert flat[0] == pytest.approx(flat[1], rel=1e-12, abs=1e-15)


def test_hand_written_backward_cannot_be_differentiated_again():
    x = Value(2.0)
    out = Value(x.data**2, (x,), "square")

    def _backward():
        x.grad += 2 * x.data * out.grad

    out._backward = _backward
    with pytest.raises(TypeError, match="op 'square' has a hand-written _backward"):
        grad(out, [x], create_graph=True)


def test_grad_argument_errors():
    x, y = Value(1.0), Value(2.0)
    with pytest.raises(ValueError, match="input 1 .* not used"):
        grad(x * 2, [x, y])
    assert grad(x * 2, [x, y], allow_unused=True) == (2.0, None)
    with pytest.raises(TypeError, match="inputs must be a Value"):
        grad(x * 2, [1.0])
    with pytest.raises(ValueError, match="2 grad_outputs for 1 outputs"):
        grad([x * 2], [x], grad_outputs=[1.0, 2.0])

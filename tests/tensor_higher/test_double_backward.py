"""Double (and triple) backward through every Tensor op, and create_graph=True to any order.

* ``gradgradcheck`` on every row of ``op_cases.OP_CASES``: the analytic
  Hessian-vector product (grad of grad) against finite differences of the
  analytic gradient, plus the double-backward trick ``d <J^T r, v> / d r = J v``.
* The same check one order up: ``gradgradcheck`` of the op's *first-derivative
  function* (itself built with ``create_graph=True``) checks third derivatives.
* Elementwise ops: derivatives of order 1, 2 and 3 against closed forms.
* ``Tensor.backward(create_graph=True)`` and ``taugrad.grad`` repeated, for
  Tensors and (through the same ``taugrad.grad``) for Values.
* What cannot be differentiated twice (a custom ``Function``) says so, naming it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import taugrad
import taugrad.functional as F
from taugrad import Value
from taugrad.autograd.gradcheck import GradcheckError, gradgradcheck
from taugrad.tensors.ops import elementwise, trig

from .op_cases import OP_CASES, OpCase, make_inputs

CASE_IDS = [case.name for case in OP_CASES]


# ---------------------------------------------------------------------------
# gradgradcheck on every op
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", OP_CASES, ids=CASE_IDS)
def test_second_order_matches_finite_differences(case: OpCase):
    inputs = make_inputs(case)
    assert gradgradcheck(case.fn, inputs)


def first_derivative(case: OpCase, inputs):
    """x -> d <f(x), w> / d x (all inputs, flattened and joined), recorded with create_graph=True."""
    rng = np.random.default_rng(99)
    weights = {}

    def g(*xs):
        out = case.fn(*xs)
        if out.shape not in weights:
            weights[out.shape] = taugrad.tensor(rng.uniform(0.5, 1.5, out.shape), dtype="float64")
        grads = taugrad.grad((out * weights[out.shape]).sum(), list(xs), create_graph=True, allow_unused=True)
        parts = [gi.reshape(-1) if gi is not None else taugrad.zeros(x.detach().numpy().size, dtype="float64")
                 for gi, x in zip(grads, xs)]
        return taugrad.cat(parts)

    return g


@pytest.mark.parametrize("case", OP_CASES, ids=CASE_IDS)
def test_third_order_matches_finite_differences(case: OpCase):
    inputs = make_inputs(case, seed=1)
    assert gradgradcheck(first_derivative(case, inputs), inputs, atol=1e-4)


def test_gradgradcheck_catches_a_wrong_second_derivative(monkeypatch):
    """A tanh rule that is right to first order but treats tanh(x) as a constant."""

    def flat_tanh_backward(g, out, ins, node):
        held = out.detach() if isinstance(out, taugrad.Tensor) else out
        return (g * (1.0 - held * held),)

    monkeypatch.setattr(trig.tanh_backward, "backward", flat_tanh_backward)
    x = taugrad.tensor([0.3, -0.7], dtype="float64", requires_grad=True)
    assert taugrad.gradcheck(lambda t: t.tanh(), [x])  # first order still right
    with pytest.raises(GradcheckError, match=r"\(H v\) of input 0\[0\]: analytic 0.0"):
        gradgradcheck(lambda t: t.tanh(), [x])


def test_gradgradcheck_catches_a_wrong_double_backward_trick(monkeypatch):
    """A mul rule whose gradient ignores g's graph: H v is right, J v through grad_output is not."""

    def detached_g_mul_backward(g, out, ins, node):
        a, b = ins
        g = g.detach() if isinstance(g, taugrad.Tensor) else g
        return g * b, g * a

    monkeypatch.setattr(elementwise.mul_backward, "backward", detached_g_mul_backward)
    a = taugrad.tensor([0.5, 2.0], dtype="float64", requires_grad=True)
    b = taugrad.tensor([1.5, -1.0], dtype="float64", requires_grad=True)
    with pytest.raises(GradcheckError, match=r"\(J v\) via grad_output"):
        gradgradcheck(lambda x, y: x * y, [a, b])


def test_gradgradcheck_on_values_checks_the_full_hessian():
    a, b = Value(0.7, label="a"), Value(-1.2, label="b")
    assert gradgradcheck(lambda x, y: (x * y).tanh() + x**3 * y, [a, b])


def test_gradgradcheck_on_values_catches_a_wrong_graph_rule(monkeypatch):
    """A Value tanh graph rule using tanh's *number* (not its node) loses the second derivative."""
    from taugrad.scalar import higher
    from taugrad.scalar import value as scalar_value

    def flat_tanh(out, g):
        return ((out._prev[0], (1.0 - out.data * out.data) * g),)

    monkeypatch.setitem(higher.GRAPH_RULES, scalar_value.tanh_rule, flat_tanh)
    x = Value(0.4, label="x")
    assert taugrad.gradcheck(lambda t: t.tanh(), [x])
    with pytest.raises(GradcheckError, match=r"d2 f / d\(input 0 \(x\)\) d\(input 0 \(x\)\): analytic 0.0"):
        gradgradcheck(lambda t: t.tanh(), [x])


def test_gradgradcheck_input_errors():
    with pytest.raises(ValueError, match="inputs is empty"):
        gradgradcheck(lambda: None, [])
    x32 = taugrad.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="float64"):
        gradgradcheck(lambda t: t * t, [x32])
    with pytest.raises(ValueError, match="eps must be positive"):
        gradgradcheck(lambda t: t * t, [Value(1.0)], eps=0)


# ---------------------------------------------------------------------------
# orders 1-3 of each elementwise op against closed forms
# ---------------------------------------------------------------------------


def _phi(x):
    return np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _Phi(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _sig(x):
    return 1 / (1 + np.exp(-x))


# name: (op on a Tensor, domain, (f', f'', f''') as NumPy functions)
CLOSED_FORMS = {
    "exp": (lambda t: t.exp(), "real", (np.exp, np.exp, np.exp)),
    "log": (lambda t: t.log(), "positive", (lambda x: 1 / x, lambda x: -1 / x**2, lambda x: 2 / x**3)),
    "log1p": (lambda t: t.log1p(), "positive",
              (lambda x: 1 / (1 + x), lambda x: -1 / (1 + x) ** 2, lambda x: 2 / (1 + x) ** 3)),
    "sqrt": (lambda t: t.sqrt(), "positive",
             (lambda x: 0.5 * x**-0.5, lambda x: -0.25 * x**-1.5, lambda x: 0.375 * x**-2.5)),
    "sin": (lambda t: t.sin(), "real", (np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x))),
    "cos": (lambda t: t.cos(), "real", (lambda x: -np.sin(x), lambda x: -np.cos(x), np.sin)),
    "tanh": (lambda t: t.tanh(), "real",
             (lambda x: 1 - np.tanh(x) ** 2,
              lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2),
              lambda x: (1 - np.tanh(x) ** 2) * (6 * np.tanh(x) ** 2 - 2))),
    "sigmoid": (lambda t: t.sigmoid(), "real",
                (lambda x: _sig(x) * (1 - _sig(x)),
                 lambda x: _sig(x) * (1 - _sig(x)) * (1 - 2 * _sig(x)),
                 lambda x: _sig(x) * (1 - _sig(x)) * (1 - 6 * _sig(x) + 6 * _sig(x) ** 2))),
    "relu": (lambda t: t.relu(), "nonzero",
             (lambda x: (x > 0).astype(float), lambda x: 0 * x, lambda x: 0 * x)),
    "abs": (lambda t: t.abs(), "nonzero", (np.sign, lambda x: 0 * x, lambda x: 0 * x)),
    "neg": (lambda t: -t, "real", (lambda x: -1 + 0 * x, lambda x: 0 * x, lambda x: 0 * x)),
    "gelu": (lambda t: t.gelu(), "real",
             (lambda x: _Phi(x) + x * _phi(x), lambda x: (2 - x**2) * _phi(x), lambda x: (x**3 - 4 * x) * _phi(x))),
    "erf": (lambda t: t.erf(), "real",
            (lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x),
             lambda x: -4 * x / math.sqrt(math.pi) * np.exp(-x * x),
             lambda x: (8 * x * x - 4) / math.sqrt(math.pi) * np.exp(-x * x))),
    "x**3": (lambda t: t**3, "real", (lambda x: 3 * x**2, lambda x: 6 * x, lambda x: 6 + 0 * x)),
    "x**2": (lambda t: t**2, "real", (lambda x: 2 * x, lambda x: 2 + 0 * x, lambda x: 0 * x)),
    "x**-1.5": (lambda t: t**-1.5, "positive",
                (lambda x: -1.5 * x**-2.5, lambda x: 3.75 * x**-3.5, lambda x: -13.125 * x**-4.5)),
    "2.5**x": (lambda t: 2.5**t, "real", tuple((lambda k: lambda x: 2.5**x * math.log(2.5) ** k)(k) for k in (1, 2, 3))),
    "x*x": (lambda t: t * t, "real", (lambda x: 2 * x, lambda x: 2 + 0 * x, lambda x: 0 * x)),
    "2/x": (lambda t: 2.0 / t, "positive", (lambda x: -2 / x**2, lambda x: 4 / x**3, lambda x: -12 / x**4)),
    "x/y (wrt y, x=1.5)": (lambda t: taugrad.tensor(1.5, dtype="float64") / t, "positive",
                           (lambda x: -1.5 / x**2, lambda x: 3 / x**3, lambda x: -9 / x**4)),
    "x**y (wrt x, y=2.5)": (lambda t: t ** taugrad.tensor(2.5, dtype="float64"), "positive",
                            (lambda x: 2.5 * x**1.5, lambda x: 3.75 * x**0.5, lambda x: 1.875 * x**-0.5)),
    "x**y (wrt y, x=1.7)": (lambda t: taugrad.tensor(1.7, dtype="float64") ** t, "real",
                            tuple((lambda k: lambda y: 1.7**y * math.log(1.7) ** k)(k) for k in (1, 2, 3))),
    "clip(-0.5, 0.7)": (lambda t: t.clip(-0.5, 0.7), "real",
                        (lambda x: ((x > -0.5) & (x < 0.7)).astype(float), lambda x: 0 * x, lambda x: 0 * x)),
    "x*exp(x)": (lambda t: t * t.exp(), "real",
                 (lambda x: (1 + x) * np.exp(x), lambda x: (2 + x) * np.exp(x), lambda x: (3 + x) * np.exp(x))),
}


def derivatives(op, x, order: int):
    """[f'(x), f''(x), ...] elementwise, each by differentiating the previous one (create_graph=True)."""
    result, current = [], op(x)
    for _ in range(order):
        if not current.requires_grad:  # the previous derivative is constant: this one is 0
            current = taugrad.zeros(x.shape, dtype=x.dtype)
        else:  # elementwise op: d sum(f(x)) / dx_i = f'(x_i)
            (current,) = taugrad.grad(current.sum(), [x], create_graph=True, allow_unused=True)
            current = taugrad.zeros(x.shape, dtype=x.dtype) if current is None else current
        result.append(current.detach().numpy().copy())
    return result


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_orders_one_to_three_match_closed_forms(name):
    op, domain, closed = CLOSED_FORMS[name]
    (x,) = make_inputs(OpCase(name, op, ((7,),), domain), seed=3)
    for order, (got, formula) in enumerate(zip(derivatives(op, x, 3), closed), start=1):
        np.testing.assert_allclose(got, formula(x.detach().numpy()), rtol=1e-12, atol=1e-12, err_msg=f"{name}, order {order}")


def test_binary_op_mixed_second_derivatives():
    """d2(a*b)/da db = 1 and d2(a/b)/da db = -1/b^2: the cross terms of the Hessian."""
    a = taugrad.tensor([0.5, -2.0], dtype="float64", requires_grad=True)
    b = taugrad.tensor([1.5, 3.0], dtype="float64", requires_grad=True)
    (da,) = taugrad.grad((a * b).sum(), [a], create_graph=True)
    (dab,) = taugrad.grad(da.sum(), [b])
    np.testing.assert_array_equal(dab.detach().numpy(), [1.0, 1.0])
    (da,) = taugrad.grad((a / b).sum(), [a], create_graph=True)
    (dab,) = taugrad.grad(da.sum(), [b])
    np.testing.assert_allclose(dab.detach().numpy(), -1 / b.detach().numpy()**2, rtol=1e-14)


# ---------------------------------------------------------------------------
# create_graph=True to any order, through backward() and grad()
# ---------------------------------------------------------------------------


def test_backward_create_graph_to_third_order():
    """y = x**3 at x = 2: 12, 12, 6, each from .backward() of the previous .grad."""
    x = taugrad.tensor(2.0, dtype="float64", requires_grad=True)
    (x**3).backward(create_graph=True)
    d1, x.grad = x.grad, None
    assert d1.requires_grad and d1.item() == 12.0
    d1.backward(create_graph=True)
    d2, x.grad = x.grad, None
    assert d2.item() == 12.0
    d2.backward()
    assert x.grad.item() == 6.0


def test_backward_create_graph_accumulates_a_differentiable_grad():
    x = taugrad.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    (x**2).sum().backward(create_graph=True)
    (x**3).sum().backward(create_graph=True)  # x.grad = 2x + 3x^2, still a graph
    np.testing.assert_allclose(x.grad.detach().numpy(), [5.0, 16.0])
    (h,) = taugrad.grad(x.grad.sum(), [x])
    np.testing.assert_allclose(h.detach().numpy(), [2 + 6.0, 2 + 12.0])


def test_grad_to_fifth_order_of_sin():
    x = taugrad.tensor([0.3, 1.1], dtype="float64", requires_grad=True)
    current = x.sin()
    expected = [np.cos, lambda v: -np.sin(v), lambda v: -np.cos(v), np.sin, np.cos]
    for order, formula in enumerate(expected, start=1):
        (current,) = taugrad.grad(current.sum(), [x], create_graph=True)
        np.testing.assert_allclose(current.detach().numpy(), formula(x.detach().numpy()), rtol=1e-14, err_msg=f"order {order}")


def test_grad_of_grad_through_a_matrix_expression():
    """f = sum(tanh(W x)): d2f/dx2 = W^T diag(-2 t (1 - t^2)) W, against the closed form."""
    rng = np.random.default_rng(5)
    W = taugrad.tensor(rng.normal(size=(3, 4)), dtype="float64")
    x = taugrad.tensor(rng.normal(size=4), dtype="float64", requires_grad=True)
    (g,) = taugrad.grad((W @ x).tanh().sum(), [x], create_graph=True)
    rows = [taugrad.grad(g[i], [x], retain_graph=True)[0].detach().numpy() for i in range(4)]
    t = np.tanh(W.detach().numpy() @ x.detach().numpy())
    np.testing.assert_allclose(np.stack(rows), W.detach().numpy().T @ np.diag(-2 * t * (1 - t**2)) @ W.detach().numpy(), rtol=1e-12)


def test_float32_double_backward_keeps_dtype_and_agrees_with_float64():
    x32 = taugrad.tensor([0.25, -0.5, 1.0], dtype="float32", requires_grad=True)
    (g,) = taugrad.grad((x32.tanh() * x32.astype("float64")).sum(), [x32], create_graph=True)
    (h,) = taugrad.grad(g.sum(), [x32])
    assert g.dtype == np.float32 and h.dtype == np.float32
    x = x32.detach().numpy().astype(np.float64)
    t = np.tanh(x)
    np.testing.assert_allclose(h.detach().numpy(), 2 * (1 - t**2) - 2 * x * t * (1 - t**2), rtol=1e-5)


def test_taugrad_grad_dispatches_to_the_value_engine():
    """The same taugrad.grad differentiates Values, to any order: x**3 at 2 gives 12, 12, 6."""
    x = Value(2.0)
    (d1,) = taugrad.grad(x**3, [x], create_graph=True)
    (d2,) = taugrad.grad(d1, [x], create_graph=True)
    (d3,) = taugrad.grad(d2, x)
    assert (d1.data, d2.data, d3) == (12.0, 12.0, 6.0)
    t = 0.4
    v = Value(t)
    (g1,) = taugrad.grad(v.tanh(), [v], create_graph=True)
    (g2,) = taugrad.grad(g1, [v], create_graph=True)
    (g3,) = taugrad.grad(g2, [v])
    th = math.tanh(t)
    assert g1.data == pytest.approx(1 - th**2, rel=1e-14)
    assert g2.data == pytest.approx(-2 * th * (1 - th**2), rel=1e-14)
    assert g3 == pytest.approx((1 - th**2) * (6 * th**2 - 2), rel=1e-14)


def test_taugrad_grad_refuses_mixed_engines():
    x = taugrad.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="both be Values or both be Tensors"):
        taugrad.grad(Value(1.0) * 2, [x])


# ---------------------------------------------------------------------------
# what cannot be differentiated twice says so
# ---------------------------------------------------------------------------


class Cube(taugrad.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x**2


def test_custom_function_backward_in_tensor_ops_is_differentiable_twice():
    """As in torch: a backward written with Tensor ops records a graph under create_graph=True."""
    x = taugrad.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    (g,) = taugrad.grad(Cube.apply(x).sum(), [x], create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [3.0, 12.0])
    (h,) = taugrad.grad(g.sum(), [x])
    np.testing.assert_array_equal(h.numpy(), [6.0, 12.0])  # d/dx 3x^2 = 6x


class OnceCube(taugrad.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    @taugrad.autograd.once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x**2


def test_once_differentiable_function_names_itself_under_create_graph():
    x = taugrad.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    (g,) = taugrad.grad(OnceCube.apply(x).sum(), [x])
    np.testing.assert_array_equal(g.detach().numpy(), [3.0, 12.0])
    with pytest.raises(RuntimeError, match="OnceCube"):
        (g2,) = taugrad.grad(OnceCube.apply(x).sum(), [x], create_graph=True)
        taugrad.grad(g2.sum(), [x])


def test_second_order_of_a_released_graph_says_retain_graph():
    x = taugrad.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    y = (x**3).sum()
    y.backward()
    with pytest.raises(taugrad.GraphReleasedError, match="retain_graph"):
        taugrad.grad(y, [x], create_graph=True)


def _rules_in_graph(root) -> set:
    rules, stack, seen = set(), [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node._rule is not None:
            rules.add(node._rule)
        stack.extend(node._prev)
    return rules


def test_every_recorded_op_has_a_row_in_the_table():
    """Each local rule defined in taugrad.tensors.ops appears in a graph the checks above differentiate.

    A new op without a row (or a row that stopped using its op) fails here.
    """
    from taugrad.tensors.ops import elementwise, index, losses, matmul, reduce, shape
    from taugrad.tensors.ops import einsum, elementary, gather, inplace, linalg, masking, rearrange, scan, sorting
    from taugrad.tensors.core import rebase
    from taugrad.tensors.ops import conv, norm, pool
    from taugrad.tensors.ops import dropout, explog, softmax, trig
    from taugrad.tensors.core.rule import Rule

    modules = (elementwise, index, matmul, losses, reduce, shape,
               einsum, elementary, gather, inplace, linalg, masking, rearrange, scan, sorting, rebase,
               conv, norm, pool, trig, explog, softmax, dropout)
    defined = {obj for module in modules for obj in vars(module).values() if isinstance(obj, Rule)}
    exercised = set()
    for case in OP_CASES:
        inputs = make_inputs(case)
        exercised |= _rules_in_graph(case.fn(*inputs))
        exercised |= _rules_in_graph(first_derivative(case, inputs)(*inputs))  # rules made by create_graph
    # astype: float32 rounding defeats finite differences; its second order is checked in
    # test_float32_double_backward_keeps_dtype_and_agrees_with_float64
    missing = {rule.op for rule in defined - exercised} - {"astype"}
    assert not missing, f"ops without a double-backward row: {sorted(missing)}"
    assert all(rule.twice for rule in defined)

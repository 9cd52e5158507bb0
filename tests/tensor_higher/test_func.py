"""taugrad.func transforms against torch.func (float64): values, shapes, nesting, Values, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import taugrad
from taugrad import Value, func

# torch.func's first use compiles a helper with torch.jit.script, which warns in torch 2.13
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

RNG = np.random.default_rng(11)


def pair(shape):
    """The same float64 numbers as a taugrad and a torch tensor."""
    a = RNG.uniform(-1.2, 1.2, size=shape)
    return taugrad.tensor(a, dtype="float64"), torch.tensor(a)


def close(ours, theirs, rtol=1e-12, atol=1e-13):
    """Compare (nested tuples of) results, shapes included."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            close(o, t, rtol, atol)
        return
    assert isinstance(ours, taugrad.Tensor), type(ours)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


# Each function is written once and runs on both libraries (same method names).
def f_scalar(x):  # R^n -> R
    return (x.sin() * x).sum() + (x**2).sum() ** 2


def f_two(x, y):  # two arguments -> R
    return ((x @ y).tanh()).sum() + (y**3).sum()


def f_vector(x):  # R^n -> R^3, built from differentiable pieces
    return (x[:3] * x[1:4]).exp() + x.sum()


def f_matrix_in(x):  # R^{2x3} -> R
    return (x.exp() * x.sum(1, keepdim=True)).sum()


def test_grad_matches_torch_func():
    x, tx = pair((5,))
    close(func.grad(f_scalar)(x), torch.func.grad(f_scalar)(tx))


def test_grad_with_argnums_tuple_and_negative():
    x, tx = pair((2, 3))
    y, ty = pair((3,))
    close(func.grad(f_two, argnums=(0, 1))(x, y), torch.func.grad(f_two, argnums=(0, 1))(tx, ty))
    close(func.grad(f_two, argnums=-1)(x, y), torch.func.grad(f_two, argnums=1)(tx, ty))


def test_value_and_grad_and_has_aux():
    x, tx = pair((4,))

    def with_aux(lib):
        return lambda v: (f_scalar(v), v * 2)

    (value, aux), g = func.value_and_grad(with_aux(taugrad), has_aux=True)(x)
    t_g, (t_value, t_aux) = torch.func.grad_and_value(with_aux(torch), has_aux=True)(tx)
    close((value, aux, g), (t_value, t_aux, t_g))
    g3, (value3, aux3) = func.grad_and_value(with_aux(taugrad), has_aux=True)(x)
    close((value3, aux3, g3), (t_value, t_aux, t_g))
    assert not value.requires_grad and not g.requires_grad  # plain results, as torch.func
    g2, aux2 = func.grad(with_aux(taugrad), has_aux=True)(x)
    close((g2, aux2), (t_g, t_aux))


def test_vjp_matches_torch_func():
    x, tx = pair((5,))
    out, fn = func.vjp(f_vector, x)
    t_out, t_fn = torch.func.vjp(f_vector, tx)
    u, tu = pair((3,))
    close(out, t_out)
    close(fn(u), t_fn(tu))
    close(fn(u * 2.0), t_fn(tu * 2.0))  # the vjp function can be reused


def test_vjp_with_two_primals_and_two_outputs():
    x, tx = pair((2, 3))
    y, ty = pair((3,))

    def f(a, b):
        return (a * b).sum(0), (a @ b).exp()

    out, fn = func.vjp(f, x, y)
    t_out, t_fn = torch.func.vjp(f, tx, ty)
    u1, tu1 = pair((3,))
    u2, tu2 = pair((2,))
    close(out, t_out)
    close(fn((u1, u2)), t_fn((tu1, tu2)))


def test_jvp_is_exact_and_matches_torch_func():
    x, tx = pair((5,))
    v, tv = pair((5,))
    out, jv = func.jvp(f_vector, (x,), (v,))
    t_out, t_jv = torch.func.jvp(f_vector, (tx,), (tv,))
    close((out, jv), (t_out, t_jv))  # rtol 1e-12: no finite differences involved


def test_jvp_with_two_primals_and_scalar_output():
    x, tx = pair((2, 3))
    y, ty = pair((3,))
    vx, tvx = pair((2, 3))
    vy, tvy = pair((3,))
    close(func.jvp(f_two, (x, y), (vx, vy)), torch.func.jvp(f_two, (tx, ty), (tvx, tvy)))


def test_jvp_of_a_function_not_depending_on_its_input_is_zero():
    x, _ = pair((3,))
    out, jv = func.jvp(lambda a: taugrad.tensor([1.0, 2.0], dtype="float64"), (x,), (x,))
    np.testing.assert_array_equal(jv.detach().numpy(), [0.0, 0.0])


@pytest.mark.parametrize("fn, shape", [(f_vector, (5,)), (f_scalar, (4,)), (f_matrix_in, (2, 3))])
def test_jacobian_matches_jacrev(fn, shape):
    x, tx = pair(shape)
    close(func.jacobian(fn)(x), torch.func.jacrev(fn)(tx))
    assert func.jacrev is func.jacobian


def test_jacobian_argnums_tuple_and_tuple_outputs():
    x, tx = pair((2, 3))
    y, ty = pair((3,))

    def f(a, b):
        return (a * b).sum(0), (a @ b).exp()

    close(func.jacobian(f, argnums=(0, 1))(x, y), torch.func.jacrev(f, argnums=(0, 1))(tx, ty))


@pytest.mark.parametrize("fn, shape", [(f_scalar, (4,)), (f_matrix_in, (2, 3))])
def test_hessian_shapes_and_values_match_torch_func(fn, shape):
    x, tx = pair(shape)
    ours = func.hessian(fn)(x)
    assert ours.shape == shape + shape
    close(ours, torch.func.hessian(fn)(tx))


def test_hessian_with_argnums_tuple_is_a_tuple_of_tuples():
    x, tx = pair((2, 3))
    y, ty = pair((3,))
    ours = func.hessian(f_two, argnums=(0, 1))(x, y)
    close(ours, torch.func.hessian(f_two, argnums=(0, 1))(tx, ty))
    assert ours[0][1].shape == (2, 3, 3) and ours[1][0].shape == (3, 2, 3)


def test_hvp_matches_torch_autograd_functional():
    x, tx = pair((4,))
    v, tv = pair((4,))
    value, hv = func.hvp(f_scalar, x, v)
    t_value, t_hv = torch.autograd.functional.hvp(f_scalar, tx, tv)
    close((value, hv), (t_value, t_hv))


def test_nested_transforms_give_higher_derivatives():
    """grad of grad of grad of a scalar function: sin(x) * x^2 -> its third derivative."""
    x = taugrad.tensor(0.7, dtype="float64")
    ours = func.grad(func.grad(func.grad(lambda t: t.sin() * t**2)))(x)
    tx = torch.tensor(0.7, dtype=torch.float64)
    theirs = torch.func.grad(torch.func.grad(torch.func.grad(lambda t: t.sin() * t**2)))(tx)
    close(ours, theirs)


def test_jacobian_of_grad_equals_hessian_and_jvp_of_grad_equals_hvp():
    x, _ = pair((4,))
    v, _ = pair((4,))
    np.testing.assert_allclose(func.jacobian(func.grad(f_scalar))(x).detach().numpy(), func.hessian(f_scalar)(x).detach().numpy(), rtol=1e-13)
    _, jv = func.jvp(func.grad(f_scalar), (x,), (v,))
    _, hv = func.hvp(f_scalar, x, v)
    np.testing.assert_allclose(jv.detach().numpy(), hv.detach().numpy(), rtol=1e-12)


def test_nested_transforms_do_not_confuse_perturbations():
    """d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x: the inner derivative must not leak into the outer.

    (The classic "perturbation confusion" example, Siskind & Pearlmutter 2005.)
    """
    x = taugrad.tensor(3.0, dtype="float64")
    y = taugrad.tensor(5.0, dtype="float64")
    outer = func.grad(lambda a: a * func.grad(lambda b: a * b)(y))(x)
    assert outer.item() == 6.0


def test_transforms_work_inside_no_grad_and_leave_inputs_alone():
    x, tx = pair((4,))
    with taugrad.no_grad():
        g = func.grad(f_scalar)(x)
        h = func.hessian(f_scalar)(x)
    close(g, torch.func.grad(f_scalar)(tx))
    close(h, torch.func.hessian(f_scalar)(tx))
    assert not x.requires_grad and x.grad is None


def test_results_stay_differentiable_when_the_argument_requires_grad():
    """func.grad inside an ordinary backward: d/dx sum(grad f(x)) = sum over rows of the Hessian."""
    x, tx = pair((4,))
    x.requires_grad_()
    func.grad(f_scalar)(x).sum().backward()
    tx.requires_grad_()
    torch.func.grad(f_scalar)(tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------------------
# Value functions
# ---------------------------------------------------------------------------


def test_value_grad_hessian_and_value_and_grad():
    a, b = Value(0.5), Value(-1.5)

    def f(x, y):
        return (x * y).tanh() + x**3 * y

    g = func.grad(f, argnums=(0, 1))(a, b)
    H = func.hessian(f, argnums=(0, 1))(a, b)
    ta = torch.tensor(0.5, dtype=torch.float64)
    tb = torch.tensor(-1.5, dtype=torch.float64)
    tf = lambda x, y: torch.tanh(x * y) + x**3 * y  # noqa: E731
    t_g = torch.func.grad(tf, argnums=(0, 1))(ta, tb)
    t_H = torch.func.hessian(tf, argnums=(0, 1))(ta, tb)
    for o, t in zip(g, t_g):
        assert isinstance(o, Value) and o.data == pytest.approx(t.item(), rel=1e-13)
    for i in range(2):
        for j in range(2):
            assert H[i][j].data == pytest.approx(t_H[i][j].item(), rel=1e-13, abs=1e-14)
    value, d = func.value_and_grad(lambda x: x.exp() * x)(Value(1.0))
    assert value.data == pytest.approx(math.e) and d.data == pytest.approx(2 * math.e)


def test_value_third_derivative_by_nesting():
    """x**3 at 2: 12, 12, 6 with the function transforms on the scalar engine."""
    cube = lambda x: x**3  # noqa: E731
    x = Value(2.0)
    assert func.grad(cube)(x).data == 12.0
    assert func.grad(func.grad(cube))(x).data == 12.0
    assert func.grad(func.grad(func.grad(cube)))(x).data == 6.0


def test_value_jvp_and_hvp():
    f = lambda x, y: x * x * y + y.exp()  # noqa: E731
    a, b = Value(1.5), Value(0.5)
    out, jv = func.jvp(f, (a, b), (1.0, 2.0))
    assert out.data == pytest.approx(1.125 + math.exp(0.5))
    assert jv.data == pytest.approx(2 * 1.5 * 0.5 * 1.0 + (1.5**2 + math.exp(0.5)) * 2.0, rel=1e-14)
    _, (h0, h1) = func.hvp(f, (a, b), (1.0, 2.0))
    # H = [[2y, 2x], [2x, e^y]]
    assert h0.data == pytest.approx(2 * 0.5 + 2 * 1.5 * 2.0)
    assert h1.data == pytest.approx(2 * 1.5 + math.exp(0.5) * 2.0, rel=1e-14)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_errors_are_one_line_and_name_the_problem():
    x, _ = pair((3,))
    with pytest.raises(ValueError, match=r"func.grad: f must return a single-element Tensor, got shape \(3,\)"):
        func.grad(lambda t: t * 2)(x)
    with pytest.raises(ValueError, match="argnums 2 is out of range"):
        func.grad(f_scalar, argnums=2)(x)
    with pytest.raises(TypeError, match="argument 0 must be a Tensor or a Value, got list"):
        func.grad(f_scalar)([1.0, 2.0])
    with pytest.raises(TypeError, match="argument 0 has dtype taugrad.int64"):
        func.grad(lambda t: t.sum())(taugrad.tensor([1, 2]))
    x5, _ = pair((5,))
    with pytest.raises(ValueError, match=r"tangents 0 has shape \(2,\), expected \(5,\)"):
        func.jvp(f_vector, (x5,), (taugrad.zeros(2, dtype="float64"),))
    with pytest.raises(ValueError, match="repeats an argument"):
        func.grad(f_two, argnums=(0, 0))(x, x)
    with pytest.raises(TypeError, match="primals and tangents must be tuples"):
        func.jvp(f_vector, x, x)

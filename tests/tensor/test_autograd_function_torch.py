"""taugrad.autograd.Function with PyTorch's semantics: Tensors in forward and backward, ctx API, create_graph."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import taugrad


def legendre_fit(T, steps: int):
    """A cubic Legendre fit of sin, in the idiom of PyTorch's custom-Function tutorial."""

    class P3(T.autograd.Function):
        @staticmethod
        def forward(ctx, u):
            ctx.save_for_backward(u)
            return 0.5 * (5 * u ** 3 - 3 * u)

        @staticmethod
        def backward(ctx, grad_output):
            (u,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * u ** 2 - 1)

    x = T.linspace(-math.pi, math.pi, 200, dtype=T.float64)
    y = T.sin(x)
    a, b, c, d = (T.full((), v, dtype=T.float64, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
    for _ in range(steps):
        y_pred = a + b * P3.apply(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with T.no_grad():
            for p in (a, b, c, d):
                p -= 5e-5 * p.grad
                p.grad = None
    return loss.item(), [p.item() for p in (a, b, c, d)]


def test_legendre_tutorial_idiom_gives_torchs_numbers():
    got_loss, got = legendre_fit(taugrad, 60)
    want_loss, want = legendre_fit(torch, 60)
    assert got_loss == pytest.approx(want_loss, rel=1e-10)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)  # a and c stay ~0 (odd target)


def test_forward_and_backward_receive_tensors_and_ctx_works_as_torch():
    seen = {}

    class Scale(taugrad.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, factor):
            seen["forward"] = (type(x).__name__, taugrad.is_grad_enabled())
            ctx.factor = factor
            ctx.save_for_backward(x, k)
            return x * k * factor

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = type(g).__name__
            seen["needs"] = ctx.needs_input_grad
            x, k = ctx.saved_tensors
            return g * k * ctx.factor, (g * x * ctx.factor if ctx.needs_input_grad[1] else None), None

    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    k = taugrad.tensor([3.0, 4.0])
    Scale.apply(x, k, 2.0).sum().backward()
    assert seen == {"forward": ("Tensor", False), "backward": "Tensor", "needs": (True, False, False)}
    assert x.grad.tolist() == [6.0, 8.0]


def test_create_graph_differentiates_a_backward_written_in_tensor_ops():
    def program(T):
        class Cube(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x ** 2

        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64, requires_grad=True)
        (g,) = T.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        g.sum().backward()
        return g.detach(), x.grad

    (g1, h1), (g2, h2) = program(taugrad), program(torch)
    np.testing.assert_allclose(g1.numpy(), g2.numpy())
    np.testing.assert_allclose(h1.numpy(), h2.numpy())  # 6x


def test_once_differentiable_refuses_a_second_derivative():
    class Square(taugrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @taugrad.autograd.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    x = taugrad.tensor([1.0, 3.0], requires_grad=True)
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 6.0]
    (g,) = taugrad.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [2.0, 6.0]
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


def test_several_outputs_and_non_differentiable_ones_as_torch():
    def program(T):
        class SortedAndArg(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                values, order = T.sort(x)
                ctx.mark_non_differentiable(order)
                ctx.save_for_backward(order)
                return values, order, x * 2

            @staticmethod
            def backward(ctx, g_values, g_order, g_double):
                (order,) = ctx.saved_tensors
                grad = T.zeros_like(g_values)
                grad[order] = g_values
                return grad + 2 * g_double

        x = T.tensor([3.0, -1.0, 2.0], dtype=T.float64, requires_grad=True)
        values, order, double = SortedAndArg.apply(x)
        (values * T.tensor([1.0, 10.0, 100.0], dtype=T.float64)).sum().backward()
        return values.detach(), order, double.requires_grad, order.requires_grad, x.grad

    got, want = program(taugrad), program(torch)
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
    assert got[1].tolist() == want[1].tolist()
    assert got[2:4] == want[2:4] == (True, False)
    np.testing.assert_allclose(got[4].numpy(), want[4].numpy())


def test_saved_tensor_changed_in_place_raises():
    class Id(taugrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x

    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    out = Id.apply(y)
    y += 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        out.sum().backward()


def test_autograd_backward_matches_torch():
    def program(T):
        x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
        a, b = x ** 2, x.exp()
        T.autograd.backward([a, b], [T.ones(3, dtype=T.float64), T.tensor([1.0, 0.5, 0.0], dtype=T.float64)])
        return x.grad

    np.testing.assert_allclose(program(taugrad).numpy(), program(torch).numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "hvp"])
def test_autograd_functional_matches_torch(name):
    def program(T):
        F = T.autograd.functional
        x = T.tensor([0.5, -1.0, 2.0], dtype=T.float64)
        w = T.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], dtype=T.float64)
        v3 = T.tensor([1.0, -2.0, 0.5], dtype=T.float64)
        vec = lambda x: (w @ x).tanh()  # noqa: E731
        scal = lambda x: (x.sin() * x ** 2).sum()  # noqa: E731
        if name == "jacobian":
            return (F.jacobian(vec, x),) + F.jacobian(lambda a, b: (a * b).exp(), (x, v3))
        if name == "hessian":
            return (F.hessian(scal, x),)
        if name == "vjp":
            return F.vjp(vec, x, T.tensor([1.0, 3.0], dtype=T.float64))
        if name == "jvp":
            return F.jvp(vec, x, v3)
        return F.hvp(scal, x, v3)

    for got, want in zip(program(taugrad), program(torch)):
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)

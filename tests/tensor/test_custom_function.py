"""Custom ops (taugrad.Function) and taugrad.gradcheck on Tensors."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import taugrad
from taugrad import Tensor

from .helpers import FEW_EXAMPLES, shapes


class Cube(taugrad.Function):
    """y = x**3, dy/dx = 3 x**2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class ScaledAdd(taugrad.Function):
    """y = a + alpha * b with broadcasting; a non-Tensor argument gets no gradient."""

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.shapes = (a.shape, b.shape)
        ctx.alpha = alpha
        return a + alpha * b

    @staticmethod
    def backward(ctx, grad):
        shape_a, shape_b = ctx.shapes

        def sum_to(g, shape):
            g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
            return g.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)

        return sum_to(grad, shape_a), sum_to(grad * ctx.alpha, shape_b), None


class WrongCube(Cube):
    """Backward off by a factor of 2: gradcheck must catch it."""

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 6 * x ** 2


def float64(shape, seed):
    return Tensor(np.random.default_rng(seed).uniform(-2, 2, shape), requires_grad=True)


def test_custom_op_value_and_gradient_match_torch():
    data = np.array([[0.5, -1.5], [2.0, 0.25]])
    x = Tensor(data, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    y = Cube.apply(x)
    np.testing.assert_allclose(y.detach().numpy(), data ** 3)
    (y * Tensor(np.array([[1.0, 2.0], [3.0, 4.0]]))).sum().backward()
    (t ** 3 * torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_custom_op_composes_with_built_in_ops():
    x = float64((3,), 0)
    assert taugrad.gradcheck(lambda v: (Cube.apply(v.tanh()) * v).sum(), [x])


@FEW_EXAMPLES
@given(shape=shapes(max_dims=3, min_side=1), seed=st.integers(0, 1000))
def test_gradcheck_accepts_a_correct_custom_op(shape, seed):
    assert taugrad.gradcheck(Cube.apply, [float64(shape, seed)]) is True


def test_gradcheck_with_several_inputs_and_broadcasting():
    a, b = float64((2, 3), 1), float64((3,), 2)
    assert taugrad.gradcheck(lambda u, v: ScaledAdd.apply(u, v, 0.5), [a, b]) is True


def test_gradcheck_rejects_a_wrong_backward():
    with pytest.raises(taugrad.GradcheckError):
        taugrad.gradcheck(WrongCube.apply, [float64((2, 2), 3)])


def test_gradcheck_on_built_in_tensor_ops():
    a, b = float64((2, 3), 4), float64((3, 4), 5)
    assert taugrad.gradcheck(lambda u, v: (u @ v).tanh().logsumexp(dim=1), [a, b]) is True


def test_gradcheck_leaves_inputs_unchanged():
    x = float64((3,), 6)
    before = x.detach().numpy().copy()
    taugrad.gradcheck(Cube.apply, [x])
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None


def test_saved_values_are_released_after_backward():
    x = float64((3,), 7)
    y = Cube.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_a_backward_of_the_wrong_shape_is_a_clear_error():
    class BadShape(Cube):
        @staticmethod
        def backward(ctx, grad):
            return grad.sum()

    x = float64((3,), 8)
    with pytest.raises(RuntimeError, match="shape"):
        BadShape.apply(x).sum().backward()

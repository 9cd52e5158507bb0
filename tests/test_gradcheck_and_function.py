"""Audit of gradcheck/gradgradcheck, custom Functions and func transforms, against torch."""
import functools
import warnings

import numpy as np
import pytest
import torch

import taugrad
from taugrad import GradcheckError, Value, func, gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

DATA = np.array([0.3, -0.7, 1.1])


def both(data=DATA, requires_grad=True):
    """The same float64 numbers as a taugrad and a torch tensor."""
    return (
        taugrad.tensor(data, dtype="float64", requires_grad=requires_grad),
        torch.tensor(data, dtype=torch.float64, requires_grad=requires_grad),
    )


# --- gradcheck / gradgradcheck -------------------------------------------------


@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
def test_inputs_that_do_not_require_grad_are_skipped(check):
    x, tx = both()
    w, tw = both(DATA[::-1].copy(), requires_grad=False)
    ours, theirs = getattr(taugrad, check), getattr(torch.autograd, check)
    assert theirs(lambda a, b: (a * b).exp(), (tx, tw))
    assert ours(lambda a, b: (a * b).exp(), [x, w])


class Off(taugrad.Function):
    """3 x with a wrong backward (2 instead of 3)."""

    @staticmethod
    def forward(ctx, a):
        return a * 3

    @staticmethod
    def backward(ctx, g):
        return g * 2


WRONG = r"analytic 2\.0, numeric (3\.0|2\.99)"


def test_skipped_inputs_keep_their_position_in_messages():
    x, _ = both()
    w, _ = both(requires_grad=False)
    with pytest.raises(GradcheckError, match=r"input 1\[0\]: " + WRONG):
        gradcheck(lambda a, b: Off.apply(b).sum() + a.sum(), [w, x])


@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
def test_no_input_requiring_grad_is_a_clear_error(check):
    w, tw = both(requires_grad=False)
    with pytest.raises(ValueError):  # torch refuses too
        getattr(torch.autograd, check)(lambda a: a * 2, (tw,))
    with pytest.raises(ValueError, match=f"^{check}: at least one input must require grad$"):
        getattr(taugrad, check)(lambda a: a * 2, [w])


def test_output_that_does_not_depend_on_the_inputs_passes():
    x, tx = both()
    assert torch.autograd.gradcheck(lambda a: torch.ones(3, dtype=torch.float64), (tx,))
    assert gradcheck(lambda a: taugrad.tensor(np.ones(3), dtype="float64"), [x])
    assert gradcheck(lambda a: (a * 0).detach(), [x])


def test_tuple_output_checks_every_output():
    x, tx = both()
    assert torch.autograd.gradcheck(lambda a: (a.exp(), a * 2), (tx,))
    assert gradcheck(lambda a: (a.exp(), a * 2), [x])
    assert gradcheck(lambda a: [a.sin(), (a * a).sum()], [x])


def test_tuple_output_with_a_wrong_second_output_is_reported_for_that_output():
    x, _ = both()
    with pytest.raises(GradcheckError, match=r"output 1, input 0\[1\]: " + WRONG) as err:
        gradcheck(lambda a: (a.exp(), Off.apply(a).sum()), [x])
    assert "output 0" not in str(err.value)


def test_integer_outputs_are_not_checked():
    x, _ = both()
    assert gradcheck(lambda a: (a * 2, a.argmax()), [x])


@pytest.mark.parametrize("returned, name", [(lambda a: a.detach().numpy(), "ndarray"), (lambda a: 1.0, "float")])
def test_output_of_the_wrong_type_is_a_one_line_type_error(returned, name):
    x, _ = both()
    with pytest.raises(TypeError, match=f"^gradcheck: f returned {name}; expected a Tensor or a tuple/list of Tensors$"):
        gradcheck(returned, [x])
    with pytest.raises(TypeError, match=f"^gradcheck: output 1 of f is {name}; expected"):
        gradcheck(lambda a: (a * 2, returned(a)), [x])


def test_value_tuple_output():
    a, b = Value(0.3), Value(-0.4)
    assert gradcheck(lambda p, q: (p * q, (p + q).tanh()), [a, b])


def test_mixed_values_and_tensors_are_refused_clearly():
    x, _ = both()
    for check in (gradcheck, gradgradcheck):
        with pytest.raises(TypeError, match="inputs must be all Values or all Tensors"):
            check(lambda a, b: a, [Value(0.3), x])
        with pytest.raises(TypeError, match="inputs must be all Values or all Tensors"):
            check(lambda a, b: a, [x, Value(0.3)])


def test_failure_lines_print_plain_floats():
    x, _ = both()
    with pytest.raises(GradcheckError, match=r"input 0\[1\]: " + WRONG) as err:
        gradcheck(lambda a: Off.apply(a).sum(), [x])
    assert "np.float64" not in str(err.value)


# --- custom Function -------------------------------------------------------------


def _function(backward_result, forward=lambda a: a * 2):
    class Custom(taugrad.Function):
        @staticmethod
        def forward(ctx, a):
            return forward(a)

        @staticmethod
        def backward(ctx, g):
            return backward_result(g)

    return Custom


def test_complex_gradient_for_a_real_input_is_refused():
    class TorchCustom(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * (1 + 1j)

    _, tx = both()
    with pytest.raises(RuntimeError):  # torch refuses a complex gradient for a real input
        TorchCustom.apply(tx).sum().backward()
    x, _ = both()
    Custom = _function(lambda g: g * (1 + 1j))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way
        with pytest.raises(TypeError, match=r"Custom\.backward returned a complex gradient .* argument 0"):
            Custom.apply(x).sum().backward()


@pytest.mark.parametrize("bad, name", [([1.0, 1.0, 1.0], "list"), ("abc", "str")])
def test_backward_returning_a_non_array_names_what_it_got(bad, name):
    x, _ = both()
    Custom = _function(lambda g: bad)
    with pytest.raises(TypeError, match=f"must return a Tensor, an array or None .*got {name} for argument 0"):
        Custom.apply(x).sum().backward()


def test_integer_forward_result_does_not_require_grad():
    class TorchArgsort(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.argsort()

        @staticmethod
        def backward(ctx, g):
            return None

    x, tx = both()
    assert TorchArgsort.apply(tx).requires_grad is False
    for result in (np.argsort, lambda a: a > 0):
        out = _function(lambda g: None, forward=result).apply(x)
        assert out.requires_grad is False
        assert out.dtype.kind in "bi"


# --- func transforms ---------------------------------------------------------------


def _with_aux(a):
    return (a ** 2).sum(), a * 3


@pytest.mark.parametrize(
    "transform",
    [
        lambda f, x: func.grad(f, has_aux=True)(x)[1],
        lambda f, x: func.value_and_grad(f, has_aux=True)(x)[0][1],
        lambda f, x: func.grad_and_value(f, has_aux=True)(x)[1][1],
        lambda f, x: func.vjp(f, x, has_aux=True)[2],
        lambda f, x: func.jvp(f, (x,), (x,), has_aux=True)[2],
        lambda f, x: func.jacobian(f, has_aux=True)(x)[1],
    ],
    ids=["grad", "value_and_grad", "grad_and_value", "vjp", "jvp", "jacobian"],
)
def test_aux_comes_back_detached(transform):
    x, tx = both(requires_grad=False)
    t_aux = torch.func.grad(_with_aux, has_aux=True)(tx)[1]
    aux = transform(_with_aux, x)
    assert aux.requires_grad is t_aux.requires_grad is False
    assert not aux._prev
    np.testing.assert_allclose(aux.detach().numpy(), t_aux.detach().numpy())


def test_aux_in_a_container_is_detached_too():
    x, _ = both(requires_grad=False)
    _, aux = func.grad(lambda a: ((a ** 2).sum(), {"y": a * 3, "z": (a.exp(), 1)}), has_aux=True)(x)
    assert not aux["y"].requires_grad and not aux["z"][0].requires_grad and aux["z"][1] == 1


def test_keyword_arguments_are_passed_through_undifferentiated():
    def f(a, scale=1.0):
        return (a ** 2).sum() * scale

    x, tx = both(requires_grad=False)
    expected = torch.func.grad(f)(tx, scale=2.0).numpy()
    np.testing.assert_allclose(func.grad(f)(x, scale=2.0).detach().numpy(), expected)
    value, g = func.value_and_grad(f)(x, scale=2.0)
    np.testing.assert_allclose(g.detach().numpy(), expected)
    assert float(value.detach().numpy()) == pytest.approx(float(f(tx, scale=2.0)))
    np.testing.assert_allclose(func.grad_and_value(f)(x, scale=2.0)[0].detach().numpy(), expected)
    np.testing.assert_allclose(func.jacobian(f)(x, scale=2.0).detach().numpy(), expected)
    # torch.func.hessian itself takes no keywords: bind them for the reference
    expected_h = torch.func.hessian(functools.partial(f, scale=2.0))(tx).numpy()
    np.testing.assert_allclose(func.hessian(f)(x, scale=2.0).detach().numpy(), expected_h)

"""Edge cases where a plain NumPy formula gives the wrong number, each compared with torch.

Every test here failed before its fix: a gradient of the wrong shape, a nan
or inf where PyTorch gives a finite number, a dtype silently lost, or an
error from deep inside NumPy.
"""
import numpy as np
import pytest
import torch

import taugrad
from taugrad import Tensor


def _both(values, dtype=np.float64):
    """The same leaf in taugrad and torch."""
    array = np.asarray(values, dtype=dtype)
    return Tensor(array.copy(), requires_grad=True), torch.tensor(array.copy(), requires_grad=True)


def _same(ours, theirs, atol=0.0):
    np.testing.assert_allclose(np.asarray(ours.detach().numpy() if isinstance(ours, Tensor) else ours),
                               theirs.detach().numpy(), rtol=1e-6, atol=atol, equal_nan=True)
    assert np.shape(ours.detach().numpy() if isinstance(ours, Tensor) else ours) == tuple(theirs.shape)


@pytest.mark.parametrize("bound", [[0.0, 1.0, 0.2], [[0.7], [0.1]]])
def test_clamp_with_a_broadcasting_tensor_bound_sums_the_gradient_back(bound):
    x, tx = _both([0.5])
    x.clamp(min=Tensor(np.array(bound))).sum().backward()
    tx.clamp(min=torch.tensor(bound, dtype=torch.float64)).sum().backward()
    _same(x.grad, tx.grad)


@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"dim": 1, "correction": 0}])
def test_std_of_a_constant_slice_has_gradient_zero(kwargs):
    values = [[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]
    x, tx = _both(values)
    x.std(**kwargs).sum().backward()
    torch.std(tx, **kwargs).sum().backward()
    _same(x.grad, tx.grad)
    assert np.isfinite(x.grad.numpy()).all()


def test_std_gradient_zero_also_differentiates_twice():
    x, tx = _both([[2.0, 2.0], [1.0, 3.0]])
    (g,) = taugrad.grad(x.std(dim=1).sum(), [x], create_graph=True)
    (tg,) = torch.autograd.grad(tx.std(dim=1).sum(), [tx], create_graph=True)
    _same(g, tg)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    _same(x.grad, tx.grad, atol=1e-12)  # the true second derivative here is 0: rounding differs


@pytest.mark.parametrize("dtype, a, b", [
    (np.float32, 1e-30, 1e-30),
    (np.float32, 1e20, 1e20),
    (np.float64, 1e-200, 1e-200),
    (np.float32, 3.0, 1e-25),
])
def test_division_gradient_does_not_square_the_divisor(dtype, a, b):
    x, tx = _both([a], dtype)
    y, ty = _both([b], dtype)
    (x / y).sum().backward()
    (tx / ty).sum().backward()
    _same(x.grad, tx.grad)
    _same(y.grad, ty.grad)


def test_x_over_x_at_a_tiny_value_has_gradient_zero():
    x, tx = _both([1e-30], np.float32)
    (x / x).sum().backward()
    (tx / tx).sum().backward()
    _same(x.grad, tx.grad)


@pytest.mark.parametrize("value", [3e19, 1e-20])
def test_reflected_division_gradient_does_not_square(value):
    x, tx = _both([value], np.float32)
    (1.0 / x).sum().backward()
    (1.0 / tx).sum().backward()
    _same(x.grad, tx.grad)


def test_power_with_a_zero_tensor_exponent_has_gradient_zero_at_zero():
    x, tx = _both([0.0, 2.0, 0.0])
    e, te = _both([0.0, 0.0, 2.0])
    (x ** e).sum().backward()
    (tx ** te).sum().backward()
    _same(x.grad, tx.grad)
    _same(e.grad, te.grad)


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_max_of_everything_sends_a_nan_result_s_gradient_to_the_nan(reduce):
    x, tx = _both([1.0, np.nan, 3.0, np.nan])
    getattr(x, reduce)().backward()
    getattr(tx, reduce)().backward()
    _same(x.grad, tx.grad)


def test_amax_with_nan_keeps_pytorch_s_nan_gradient():
    x, tx = _both([1.0, np.nan, 3.0])
    x.amax().backward()
    tx.amax().backward()
    _same(x.grad, tx.grad)


@pytest.mark.parametrize("values, dtype", [([1, 2], np.int64), ([True, False], np.bool_), ([1, -3], np.int8)])
def test_erf_of_integers_is_floating(values, dtype):
    out = Tensor(np.array(values, dtype=dtype)).erf()
    assert out.dtype.kind == "f"
    expected = torch.erf(torch.from_numpy(np.array(values, dtype=dtype))).dtype  # float32
    assert str(out.dtype) == str(expected).replace("torch.", "taugrad.")
    np.testing.assert_allclose(out.detach().numpy(), torch.erf(torch.tensor(np.array(values, dtype=np.float64))).numpy(),
                               rtol=1e-3)


@pytest.mark.parametrize("make", [
    lambda: taugrad.tensor(np.float64(1 / 3)),
    lambda: taugrad.tensor([np.float64(1 / 3)]),
    lambda: Tensor(np.arange(3.0).sum() / 3),
])
def test_numpy_float64_scalars_keep_their_dtype(make):
    t = make()
    assert t.dtype == np.float64
    assert t.detach().numpy().ravel()[0] == np.float64(1 / 3) or t.detach().numpy().ravel()[0] == 1.0


def test_python_floats_still_become_float32():
    assert taugrad.tensor(1 / 3).dtype == np.float32
    assert taugrad.tensor([1.0, 2.0]).dtype == np.float32


def test_grad_with_the_same_input_twice():
    x, tx = _both([1.0, 2.0])
    a, b = taugrad.grad((x * 3).sum(), [x, x])
    ta, tb = torch.autograd.grad((tx * 3).sum(), [tx, tx])
    _same(a, ta)
    _same(b, tb)
    assert a.detach().numpy() is not b.detach().numpy()  # two results, never one array seen twice


def test_grad_with_the_same_interior_input_twice():
    x, tx = _both([1.0, 2.0])
    y, ty = x * 2, tx * 2
    a, b = taugrad.grad((y * y).sum(), [y, y])
    ta, tb = torch.autograd.grad((ty * ty).sum(), [ty, ty])
    _same(a, ta)
    _same(b, tb)


def test_grad_leaves_the_graph_behind_its_inputs_alone():
    # grad(loss, [h]) does not need the rules behind h, so (as in PyTorch)
    # they are neither run nor freed: a later backward through h still works
    x, tx = _both([1.0, 2.0])
    h, th = x.exp(), tx.exp()
    (g,) = taugrad.grad((h * h).sum(), [h])
    (tg,) = torch.autograd.grad((th * th).sum(), [th])
    _same(g, tg)
    (h * 3).sum().backward()
    (th * 3).sum().backward()
    _same(x.grad, tx.grad)


def test_clamp_in_place_takes_tensor_bounds():
    x = taugrad.tensor([1.0, 5.0, -2.0])
    x.clamp_(taugrad.tensor([2.0, 2.0, 2.0]), 4.0)
    expected = torch.tensor([1.0, 5.0, -2.0]).clamp_(torch.tensor([2.0, 2.0, 2.0]), torch.tensor(4.0))
    _same(x, expected)


def test_clamp_in_place_min_above_max_gives_max_as_pytorch():
    x = taugrad.tensor([1.0, 5.0])
    _same(x.clamp_(4.0, 2.0), torch.tensor([1.0, 5.0]).clamp_(4.0, 2.0))


@pytest.mark.parametrize("call, words", [
    (lambda: taugrad.tensor([1.0, 5.0]).clamp_(np.zeros(3)), "clamp_: bounds cannot broadcast to shape (2,)"),
    (lambda: taugrad.zeros(2).fill_(taugrad.zeros(3)), "fill_: the value must be a number or a 0-d tensor, got shape (3,)"),
])
def test_in_place_shape_errors_name_the_op(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == words


@pytest.mark.parametrize("shape, dim", [((3, 0), 0), ((0, 3), 0), ((0,), None), ((2, 0, 3), (0, 2))])
def test_logsumexp_of_empty_tensors_as_pytorch(shape, dim):
    x, tx = _both(np.zeros(shape))
    ours = x.logsumexp() if dim is None else x.logsumexp(dim=dim)
    theirs = torch.logsumexp(tx, dim=tuple(range(len(shape))) if dim is None else dim)
    _same(ours, theirs)
    ours.sum().backward()
    assert x.grad.shape == shape

"""torch Tensor methods taugrad gained: values, dtypes, gradients and errors against torch.

The op-table rows (op_table_methods.py, value_table_methods.py) check the maths on drawn
shapes; here are the cases they cannot draw: nan and inf inputs, integer dtypes, casts,
the arguments of ``new_*`` and the error messages.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad

METHODS = ("softmax log_softmax type_as new_zeros new_ones new_full new_empty new_tensor mm bmm dot mv "
           "reciprocal remainder fmod floor_divide nonzero count_nonzero nansum nanmean is_contiguous unflatten "
           "addmm lerp logaddexp xlogy hypot nan_to_num diff").split()


@pytest.mark.parametrize("name", METHODS)
def test_torch_method_exists(name):
    assert hasattr(torch.Tensor, name)
    assert callable(getattr(taugrad.Tensor, name))


def _pair(values, dtype="float64"):
    """The same leaf in both libraries."""
    return (taugrad.tensor(values, dtype=getattr(taugrad, dtype), requires_grad=True),
            torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True))


def _same(got, want):
    want = want.detach().numpy()
    got = np.asarray(got.detach().data)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, equal_nan=True)


WITH_NAN = [[1.0, float("nan"), -3.0, float("inf")], [float("nan"), float("nan"), 2.0, -float("inf")]]


@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce")  # inf + -inf in a sum (nan, as torch)
@pytest.mark.parametrize("fn", [
    lambda x: x.nansum(),
    lambda x: x.nansum(1),
    lambda x: x.nanmean(1, keepdim=True),  # (an all-nan column: torch's gradient is nan there, taugrad's 0)
    lambda x: x.nanmean(),
    lambda x: x.nan_to_num(),
    lambda x: x.nan_to_num(nan=1.5, posinf=9.0, neginf=-9.0),
    lambda x: x.float().nan_to_num(),
    lambda x: x.xlogy(x.abs()),
    lambda x: (x.nan_to_num() * 0).xlogy(x),
    lambda x: x.remainder(2.5) + x.fmod(-2.5),
    lambda x: x.softmax(1) + x.log_softmax(dim=0).exp(),
], ids=["nansum", "nansum_dim", "nanmean_keepdim", "nanmean", "nan_to_num", "nan_to_num_args",
        "nan_to_num_float32", "xlogy", "xlogy_zero", "remainder_fmod", "softmax"])
def test_nan_and_inf_inputs_match_torch(fn):
    a, b = _pair(WITH_NAN)
    got, want = fn(a), fn(b)
    _same(got, want)
    weights = 1.0 / (np.arange(got.numel(), dtype=np.float64).reshape(tuple(got.shape)) + 2.0)  # no overflow
    (got * taugrad.tensor(weights).to(got.dtype)).sum().backward()
    (want * torch.tensor(weights).to(want.dtype)).sum().backward()
    _same(a.grad, b.grad)


def test_softmax_dtype_casts_first_and_the_gradient_returns_to_the_input_dtype():
    a, b = _pair([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]], "float32")
    for name in ("softmax", "log_softmax"):
        a.grad = b.grad = None
        got, want = getattr(a, name)(1, dtype=taugrad.float64), getattr(b, name)(1, dtype=torch.float64)
        _same(got, want)
        (got * got).sum().backward()
        (want * want).sum().backward()
        _same(a.grad, b.grad)
    _same(taugrad.functional.softmax(a, dim=0, dtype=taugrad.float64), torch.softmax(b, 0, dtype=torch.float64))


def test_type_as_takes_the_dtype_and_passes_the_gradient():
    a, b = _pair([1.5, -2.25])
    got, want = a.type_as(taugrad.zeros(1)), b.type_as(torch.zeros(1))
    _same(got, want)
    (got * 3).sum().backward()
    (want * 3).sum().backward()
    _same(a.grad, b.grad)
    x = taugrad.tensor([1, 2])
    assert x.type_as(x) is x
    _same(x.type_as(taugrad.zeros(1, dtype=taugrad.float64)), torch.tensor([1, 2]).type_as(torch.zeros(1).double()))


@pytest.mark.parametrize("call", [
    lambda x: x.new_zeros(2, 3),
    lambda x: x.new_zeros((2, 3), dtype="int32"),
    lambda x: x.new_ones([4]),
    lambda x: x.new_full((2,), 3),
    lambda x: x.new_full((2,), 2.75),
    lambda x: x.new_empty(0, 2),
    lambda x: x.new_tensor([[1, 2]]),
    lambda x: x.new_tensor([1.9, -1.9]),
    lambda x: x.new_tensor(3.5, dtype="float16"),
])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16"])
def test_new_factories_take_the_dtype_of_self(call, dtype):
    a = taugrad.zeros(1, dtype=getattr(taugrad, dtype))
    b = torch.zeros(1, dtype=getattr(torch, dtype))
    got = call(_Named(a, taugrad))
    want = call(_Named(b, torch))
    assert got.dtype == getattr(taugrad, str(want.dtype).split(".")[-1])
    assert tuple(got.shape) == tuple(want.shape)
    assert not got.requires_grad and got.is_leaf
    if "empty" not in str(call.__code__.co_consts):
        np.testing.assert_array_equal(np.asarray(got.data), want.numpy())


class _Named:
    """``x`` whose ``new_*`` calls get a dtype named by a string turned into the library's dtype."""

    def __init__(self, x, lib):
        self.x, self.lib = x, lib

    def __getattr__(self, name):
        method = getattr(self.x, name)

        def call(*args, **kwargs):
            if isinstance(kwargs.get("dtype"), str):
                kwargs["dtype"] = getattr(self.lib, kwargs["dtype"])
            return method(*args, **kwargs)

        return call


def test_new_factories_requires_grad_and_a_leaf_input():
    x = taugrad.zeros(2, requires_grad=True)
    assert not x.new_zeros(3).requires_grad
    y = x.new_ones(3, requires_grad=True)
    assert y.requires_grad and y.is_leaf
    t = taugrad.tensor([1.0, 2.0], requires_grad=True)
    z = x.new_tensor(t)
    assert not z.requires_grad
    z.data[0] = 5.0  # a copy
    assert t.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("call, words", [
    (lambda L: L.zeros(2, 3).mm(L.zeros(4, 5)), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda L: L.zeros(2, 3).mm(L.zeros(3)), "mat2 must be a matrix"),
    (lambda L: L.zeros(3).mm(L.zeros(3, 3)), "self must be a matrix"),
    (lambda L: L.zeros(2, 3).bmm(L.zeros(2, 3)), "batch1 must be a 3D tensor"),
    (lambda L: L.zeros(2, 3, 4).bmm(L.zeros(4, 4)), "batch2 must be a 3D tensor"),
    (lambda L: L.zeros(3).dot(L.zeros(4)), "inconsistent tensor size"),
    (lambda L: L.zeros(3, 1).dot(L.zeros(3)), "1D tensors expected, but got 2D and 1D tensors"),
    (lambda L: L.zeros(2, 3).mv(L.zeros(4)), "size mismatch"),
    (lambda L: L.zeros(2, 3).mm(L.zeros(3, 2, dtype=L.float64)), "dtype"),
    (lambda L: L.zeros(3).addmm(L.zeros(2, 3), L.zeros(3, 2)), None),
    (lambda L: L.zeros(2, 6).unflatten(1, (4, 2)), None),
    (lambda L: L.tensor(1.0).diff(), None),
])
def test_errors_are_torchs(call, words):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises((ValueError, TypeError)) as info:
        call(taugrad)
    message = str(info.value)
    assert "\n" not in message
    if words is not None:
        assert words in message


def test_bmm_refuses_different_batches_that_matmul_would_broadcast():
    with pytest.raises(ValueError, match="bmm"):
        taugrad.zeros(1, 2, 3).bmm(taugrad.zeros(4, 3, 2))


@pytest.mark.parametrize("op", ["remainder", "fmod", "floor_divide"])
def test_integer_division_by_zero_is_refused(op):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(torch.tensor([5, 3]), op)(torch.tensor([1, 0]))
    with pytest.raises(ZeroDivisionError, match=op):
        getattr(taugrad.tensor([5, 3]), op)(taugrad.tensor([1, 0]))


@pytest.mark.parametrize("a, b", [([7, -7, 7, -7], [3, 3, -3, -3]), ([7.5, -7.5, 7.5, -7.5], [2.0, 2.0, -2.0, -2.0]),
                                  ([5, -5], 2.5), ([0.0, -0.0, 1.0], [float("inf"), 2.0, 0.0])])
def test_remainder_fmod_floor_divide_signs_and_dtypes(a, b):
    for op in ("remainder", "fmod", "floor_divide", "__mod__", "__floordiv__"):
        bt = taugrad.tensor(b) if isinstance(b, list) else b
        bw = torch.tensor(b) if isinstance(b, list) else b
        got, want = getattr(taugrad.tensor(a), op)(bt), getattr(torch.tensor(a), op)(bw)
        _same(got, want)
        np.testing.assert_array_equal(np.signbit(np.asarray(got.data)), np.signbit(want.numpy()), err_msg=op)


def test_floor_divide_records_no_gradient():
    x = taugrad.tensor([5.0, -5.0], requires_grad=True)
    assert not x.floor_divide(2.0).requires_grad


def test_nonzero_and_count_nonzero_of_edge_shapes():
    for values in ([[0, 1], [2, 0]], 3.0, 0.0, np.zeros((2, 0, 3)), [True, False, True]):
        a, b = taugrad.tensor(values), torch.tensor(values)
        _same(a.nonzero(), b.nonzero())
        got, want = a.nonzero(as_tuple=True), b.nonzero(as_tuple=True)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        _same(a.count_nonzero(), b.count_nonzero())


def test_is_contiguous_tells_the_layout_and_contiguous_copies_when_needed():
    x, tx = taugrad.zeros(3, 4).t(), torch.zeros(3, 4).t()
    assert x.is_contiguous() is tx.is_contiguous() is False
    assert x.contiguous().is_contiguous() and tx.contiguous().is_contiguous()


def test_diff_of_bools_and_high_order():
    a, b = taugrad.tensor([True, False, False, True]), torch.tensor([True, False, False, True])
    _same(a.diff(), b.diff())
    x, y = _pair([[1.0, 4.0, 9.0, 16.0, 25.0]])
    _same(x.diff(n=7), y.diff(n=7))
    _same(x.diff(n=2, prepend=taugrad.zeros(1, 2, dtype=taugrad.float64)),
          y.diff(n=2, prepend=torch.zeros(1, 2, dtype=torch.float64)))


def test_addmm_beta_zero_ignores_nan_in_input():
    m1, m2 = taugrad.ones(2, 3), taugrad.ones(3, 2)
    nan = taugrad.full((2, 2), float("nan"))
    _same(nan.addmm(m1, m2, beta=0), torch.full((2, 2), float("nan")).addmm(torch.ones(2, 3), torch.ones(3, 2), beta=0))


def test_reciprocal_and_integer_inputs_give_the_default_float():
    for values in ([1, 2, -4], [0.0, -0.0, 2.0], [True, False]):
        _same(taugrad.tensor(values).reciprocal(), torch.tensor(values).reciprocal())
    _same(taugrad.tensor([0, 1, 2]).xlogy(taugrad.tensor([0, 3, 4])), torch.tensor([0, 1, 2]).xlogy(torch.tensor([0, 3, 4])))


@pytest.mark.parametrize("name, args", [
    ("mm", ([[1.0, 2.0]], [[3.0], [4.0]])), ("dot", ([1.0, 2.0], [3.0, 4.0])), ("mv", ([[1.0, 2.0]], [3.0, 4.0])),
    ("bmm", ([[[1.0, 2.0]]], [[[3.0], [4.0]]])), ("addmm", ([[1.0]], [[1.0, 2.0]], [[3.0], [4.0]])),
    ("remainder", ([-5.0, 5.0], [3.0, -3.0])), ("fmod", ([-5.0, 5.0], [3.0, -3.0])),
    ("floor_divide", ([-5.0, 5.0], [3.0, -3.0])), ("reciprocal", ([2.0, -4.0],)),
    ("logaddexp", ([1.0, -2.0], [0.5, 3.0])), ("hypot", ([3.0, 5.0], [4.0, 12.0])), ("xlogy", ([0.0, 2.0], [0.0, 3.0])),
    ("nan_to_num", ([float("nan"), 1.0],)), ("lerp", ([0.0, 1.0], [2.0, 3.0], [0.25, 0.5])),
    ("nansum", ([1.0, float("nan")],)), ("nanmean", ([1.0, float("nan"), 3.0],)),
    ("count_nonzero", ([0.0, 1.0, 2.0],)), ("nonzero", ([[0.0, 1.0], [2.0, 0.0]],)), ("diff", ([1.0, 4.0, 9.0],)),
])
def test_the_methods_are_functions_too(name, args):
    """``taugrad.mm(a, b)`` as ``torch.mm(a, b)``: the same values from the module-level function."""
    ours = getattr(taugrad, name)(*(taugrad.tensor(a, dtype=taugrad.float64) for a in args))
    theirs = getattr(torch, name)(*(torch.tensor(a, dtype=torch.float64) for a in args))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_unflatten_function():
    ours = taugrad.unflatten(taugrad.arange(6), 0, (2, 3))
    assert ours.tolist() == torch.unflatten(torch.arange(6), 0, (2, 3)).tolist()


@pytest.mark.parametrize("shape, dim, sizes", [((0, 3, 1), -2, (3, -1)), ((0, 6), 1, (-1, 2)), ((4, 0), 0, (2, -1))])
def test_unflatten_infers_minus_one_on_an_empty_tensor_as_torch(shape, dim, sizes):
    ours = taugrad.zeros(*shape).unflatten(dim, sizes)
    assert ours.shape == tuple(torch.zeros(*shape).unflatten(dim, sizes).shape)

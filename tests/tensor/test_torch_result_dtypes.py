"""Result dtypes and edge values where NumPy's answer differs from PyTorch's, checked against torch.

Functions whose values are not integers give the default float dtype for
integer and bool tensors (NumPy: float64, or float16 for bool), mixed operands
promote as torch promotes (int64 with float32 is float32), ``logical_not`` is
logical for every dtype, ``sign(nan)`` is 0.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad

VALUES = {"int64": [3, -7, 0, 5], "bool": [True, False, True, True], "float32": [2.5, -0.0, float("nan"), -3.5]}

UNARY = ["exp2", "expm1", "log2", "log10", "rsqrt", "sinh", "cosh", "tan", "asin", "acos", "atan", "logical_not", "sign",
         "square"]
BINARY = ["atan2", "hypot", "logaddexp", "xlogy"]


def _result(tensor):
    return str(tensor.dtype).split(".")[-1], tensor.numpy().astype(np.float64)


def _same(ours, theirs):
    assert ours[0] == theirs[0], (ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("dtype", sorted(VALUES))
@pytest.mark.parametrize("name", UNARY)
def test_unary_result_dtype_and_values_are_torchs(name, dtype):
    def run(L):
        return _result(getattr(L.tensor(VALUES[dtype], dtype=getattr(L, dtype)), name)())

    _same(run(taugrad), run(torch))


@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int64", "float32"), ("float32", "int64"), ("bool", "int64"),
                                    ("bool", "bool")])
@pytest.mark.parametrize("name", BINARY)
def test_binary_result_dtype_follows_torch_promotion(name, dtypes):
    def run(L, as_float=False):
        a, b = (L.tensor(VALUES[d], dtype=getattr(L, d)) for d in dtypes)
        if as_float:
            a, b = a.float(), b.float()
        return _result(getattr(L, name)(a, b))

    try:
        theirs = run(torch)
    except NotImplementedError:  # torch has no integer hypot/logaddexp: taugrad computes in the default float
        theirs = run(torch, as_float=True)
    _same(run(taugrad), theirs)


@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("float32", "int64"), ("int64", "int64")])
def test_clamp_with_tensor_bounds_promotes_as_torch(dtypes):
    def run(L):
        x = L.tensor([3, -7, 0, 5], dtype=getattr(L, dtypes[0]))
        low = L.tensor([0, -1, 2, 9], dtype=getattr(L, dtypes[1]))
        return _result(L.clamp(x, min=low, max=low + 4))

    _same(run(taugrad), run(torch))


@pytest.mark.parametrize("exponent", [2, 3, 0, 2.0])
def test_a_bool_tensor_to_an_integer_power_is_int64_as_torch(exponent):
    def run(L):
        return _result(L.tensor([True, False]) ** exponent)

    _same(run(taugrad), run(torch))


def test_logical_not_and_bitwise_not_differ_on_integers():
    x = taugrad.tensor([3, 0, -1])
    assert taugrad.logical_not(x).tolist() == torch.logical_not(torch.tensor([3, 0, -1])).tolist() == [False, True, False]
    assert (~x).tolist() == x.bitwise_not().tolist() == (~torch.tensor([3, 0, -1])).tolist() == [-4, -1, 0]


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "bool"])
@pytest.mark.parametrize("dim", [None, 0])
def test_integer_sums_are_int64_as_torch(dtype, dim):
    def run(L):
        x = L.tensor([[3, 100], [0, 100]], dtype=getattr(L, dtype)) if dtype != "bool" else L.tensor([[True, False]] * 2)
        return _result(x.sum() if dim is None else x.sum(dim))

    _same(run(taugrad), run(torch))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("number", [-3, 300, 2.5])
def test_a_number_beside_a_small_integer_tensor_keeps_its_value(name, number):
    """xlogy(uint8, -3) computes with -3.0, as torch: cast through uint8 it would wrap to 253."""
    def run(L, as_float=False, as_tensor=False):
        x = L.tensor([3, 250, 0, 5], dtype=L.uint8)
        return _result(getattr(L, name)(x.float() if as_float else x, L.tensor(number) if as_tensor else number))

    try:
        theirs = run(torch)
    except TypeError:  # torch's atan2/hypot/logaddexp take no number: the number as a 0-d tensor
        try:
            theirs = run(torch, as_tensor=True)
        except NotImplementedError:  # and no integer tensor: its float answer
            theirs = run(torch, as_float=True, as_tensor=True)
    _same(run(taugrad), theirs)


def test_unique_keeps_every_nan_as_torch():
    def run(L):
        values, inverse, counts = L.unique(L.tensor([2.0, float("nan"), 1.0, float("nan"), 2.0]), return_inverse=True,
                                           return_counts=True)
        return [str(v) for v in values.tolist()], inverse.tolist(), counts.tolist()

    assert run(taugrad) == run(torch)

"""The result dtype of binary ops whose operands differ in rank and dtype, against torch.

torch's rule: dimensioned tensors, then 0-d tensors, then Python numbers,
each group counting only if its category (bool < integer < floating <
complex) is higher than the one before.  So float32 (2, 3) + float64 (3,) is
float64 (both dimensioned), float32 (2, 3) + float64 0-d is float32, and
int64 (2, 3) + float64 0-d is float32 (the default float dtype).  A table of
operand pairs, in both orders, through every binary arithmetic and
comparison op.
"""
import itertools

import numpy as np
import pytest
import torch

import taugrad

OPERANDS = [
    ("float32", (2, 3)), ("float64", (3,)), ("float64", ()), ("float32", ()), ("float16", (3,)), ("float16", ()),
    ("int64", (2, 3)), ("int64", ()), ("int32", (3,)), ("int32", ()), ("int16", (2, 3)), ("int8", ()),
    ("uint8", (3,)), ("uint8", ()), ("bool", (2, 3)), ("bool", ()),
]
NUMBERS = [2, -3, 2.5, True]
OPS = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt", "ge", "remainder", "floor_divide", "pow"]


def _values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":  # True: a bool divisor of 0 would be an integer division by zero
        return np.ones(shape, dtype=bool) if seed % 2 else rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return rng.integers(1, 5, size=shape).astype(dtype)
    return (rng.uniform(0.5, 3.0, size=shape)).astype(dtype)


def _call(lib, op, a, b):
    return getattr(lib, op)(a, b)


def _name(dtype):
    return str(dtype).split(".")[-1]


def _compare(op, a, b, ta, tb):
    try:
        theirs = _call(torch, op, ta, tb)
    except RuntimeError as error:  # what torch refuses (bool - bool, ...) taugrad must refuse too
        with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
            _call(taugrad, op, a, b)
        return str(error)
    ours = _call(taugrad, op, a, b)
    assert _name(ours.dtype) == _name(theirs.dtype), (op, a, b)
    assert tuple(ours.shape) == tuple(theirs.shape)
    tol = 1e-3 if _name(theirs.dtype) == "float16" else 1e-6
    np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64), rtol=tol,
                               atol=tol, err_msg=f"{op}")
    return None


@pytest.mark.parametrize("op", OPS)
def test_tensor_pairs_of_every_rank_and_dtype_give_torchs_dtype(op):
    for (da, sa), (db, sb) in itertools.product(OPERANDS, repeat=2):
        if op == "sub" and "bool" in (da, db):
            continue  # torch refuses bool subtraction (taugrad too, with its own message)
        a, b = _values(da, sa, 0), _values(db, sb, 1)
        _compare(op, taugrad.tensor(a), taugrad.tensor(b), torch.tensor(a), torch.tensor(b))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "eq", "lt", "pow", "remainder"])
def test_a_tensor_with_a_python_number_gives_torchs_dtype(op):
    for (dtype, shape), number in itertools.product(OPERANDS, NUMBERS):
        if op == "sub" and (dtype == "bool" or number is True):
            continue
        a = _values(dtype, shape, 2)
        _compare(op, taugrad.tensor(a), number, torch.tensor(a), number)


def test_the_example_of_the_report():
    a = np.ones((2, 3), dtype=np.float32)
    b = np.arange(3, dtype=np.float64)
    assert (taugrad.tensor(a) + taugrad.tensor(b)).dtype == taugrad.float64
    assert (taugrad.tensor(a) + taugrad.tensor(np.float64(2.0))).dtype == taugrad.float32
    assert (taugrad.tensor(np.array(3)) + 0.5).dtype == taugrad.float32  # int 0-d + a Python float
    assert (taugrad.tensor(np.array(3)) + taugrad.tensor(np.array(0.5))).dtype == taugrad.float64  # two 0-d
    assert _name((torch.tensor(np.array(3)) + 0.5).dtype) == "float32"
    assert _name((torch.tensor(np.array(3)) + torch.tensor(np.array(0.5))).dtype) == "float64"

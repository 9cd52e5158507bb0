"""dtype objects, the default dtype and type promotion, checked against PyTorch as the oracle."""
from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn as tnn

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
KINDS = ["tensor", "0-d", "python"]


def _values(name: str, shape: tuple) -> np.ndarray:
    """Small values every dtype holds exactly (no overflow, no division by zero)."""
    base = np.array([1, 2, 3, 1, 2, 3][: int(np.prod(shape, dtype=int)) or 1]).reshape(shape)
    return (base % 2 == 1) if name == "bool" else base.astype(name)


def _operand(L, name: str, kind: str):
    """One operand in library ``L``: a (2, 3) tensor, a 0-d tensor, or a Python number of that dtype's kind."""
    if kind == "python":
        return {"b": True, "u": 3, "i": 3, "f": 2.5}[np.dtype(name).kind]
    shape = (2, 3) if kind == "tensor" else ()
    array = _values(name, shape)
    return L.from_numpy(array.copy()) if array.ndim else L.tensor(array.item(), dtype=getattr(L, name))


def _pairs():
    for a, b in itertools.product(DTYPES, DTYPES):
        for kind in KINDS:
            if kind == "python" and b in ("uint8", "int8", "int32", "float16", "float32"):
                continue  # a Python number is int, float or bool: one per kind is enough
            yield a, b, kind


@pytest.mark.parametrize("op", ["add", "mul", "sub", "div"])
@pytest.mark.parametrize("a, b, kind", list(_pairs()))
def test_binary_promotion_matches_torch(a, b, kind, op):
    results = {}
    for L in (torch, taugrad):
        x, y = _operand(L, a, "tensor"), _operand(L, b, kind)
        try:
            z = getattr(x, op)(y) if op != "sub" else x - y
        except (RuntimeError, TypeError):
            z = None
        results[L.__name__] = z
    expected, got = results["torch"], results["taugrad"]
    if expected is None:  # torch refuses - with a bool operand
        if got is not None:  # taugrad computes it where the other operand is floating (1.0 - mask)
            assert got.is_floating_point(), f"{a} {op} {b} ({kind}): torch refuses, taugrad gives {got.dtype}"
        return
    assert got is not None, f"{a} {op} {b} ({kind}) refused; torch gives {expected.dtype}"
    assert str(got.dtype) == str(expected.dtype).replace("torch.", "taugrad."), (a, b, kind, op)
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), expected.double().numpy(), rtol=1e-3)


@pytest.mark.parametrize("a, b", [("int64", "float32"), ("float32", "int64"), ("int8", "float16"),
                                  ("bool", "int32"), ("uint8", "int8"), ("float32", "float64")])
def test_zero_dim_first_operand_matches_torch(a, b):
    """A 0-d tensor on the left meets a dimensioned one on the right."""
    x_t, y_t = _operand(torch, a, "0-d"), _operand(torch, b, "tensor")
    x, y = _operand(taugrad, a, "0-d"), _operand(taugrad, b, "tensor")
    assert str((x * y).dtype) == str((x_t * y_t).dtype).replace("torch.", "taugrad.")


def test_torch_promotion_rules_by_example():
    t = taugrad
    f32, f64 = t.ones(3), t.ones(3, dtype=t.float64)
    i64, i8 = t.ones(3, dtype=t.int64), t.ones(3, dtype=t.int8)
    assert (i64 * f32).dtype == t.float32  # NumPy: float64
    assert (t.tensor(2.0, dtype=t.float64) * f32).dtype == t.float32  # a 0-d tensor does not widen
    assert (f32 * t.tensor(2.0, dtype=t.float64)).dtype == t.float32
    assert (f32 * f64).dtype == t.float64  # two dimensioned tensors: normal promotion
    assert (i64 * 0.5).dtype == t.float32  # int tensor * Python float: the default dtype
    assert (i8 + i64).dtype == t.int64
    assert (t.tensor([True, False]) + t.ones(2, dtype=t.int32)).dtype == t.int32
    assert (t.tensor([True]) + 1).dtype == t.int64
    assert (i64 / 2).dtype == t.float32 and (i64 / i64).dtype == t.float32
    assert (i64 ** 2.0).dtype == t.float32 and (i64 ** 2).dtype == t.int64
    assert (2.0 ** i64).dtype == t.float32 and (1.0 - i64).dtype == t.float32 and (1.0 / i64).dtype == t.float32
    assert (t.ones(2, dtype=t.int8) + 1000).tolist() == (torch.ones(2, dtype=torch.int8) + 1000).tolist()


@pytest.mark.parametrize("fn", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "log1p", "erf"])
@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "bool"])
def test_float_functions_of_integer_tensors_give_the_default_dtype(fn, dtype):
    x = np.array([0, 1, 2, 3]).astype(dtype)
    expected = getattr(torch, fn)(torch.from_numpy(x.copy()))
    got = getattr(taugrad, fn)(taugrad.from_numpy(x.copy())) if hasattr(taugrad, fn) else getattr(
        taugrad.from_numpy(x.copy()), fn)()
    assert expected.dtype == torch.float32 and got.dtype is taugrad.float32
    np.testing.assert_allclose(np.asarray(got), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("op", ["where", "maximum", "cat", "clamp"])
def test_other_ops_promote_as_torch(op):
    def run(L):
        i, f = L.ones(3, dtype=L.int64), L.full((3,), 2.5, dtype=L.float64)
        cond = L.tensor([True, False, True])
        if op == "where":
            return L.where(cond, i, f), L.where(cond, i, 2.5)
        if op == "maximum":
            return L.maximum(i, f), L.maximum(i, L.ones(3))
        if op == "cat":
            return L.cat([i, L.ones(3)]), L.stack([i, f])
        return L.clamp(i, 0.5), L.clamp(i, 0, 2)

    for got, expected in zip(run(taugrad), run(torch)):
        assert str(got.dtype) == str(expected.dtype).replace("torch.", "taugrad.")
        np.testing.assert_array_equal(np.asarray(got), expected.numpy())


@pytest.mark.parametrize("a, b", [("float32", "float64"), ("float64", "float32"), ("float16", "float32")])
def test_gradients_have_their_inputs_dtype(a, b):
    """Mixed-dtype products: each input's gradient has that input's dtype, as torch."""
    for kind in ("tensor", "0-d"):
        shape = (2, 3) if kind == "tensor" else ()
        grads = {}
        for L in (torch, taugrad):
            x = L.tensor(np.full((2, 3), 1.5, dtype=a), requires_grad=True)
            y = L.tensor(np.full(shape, 0.25, dtype=b), requires_grad=True)
            (x * y + y / x).sum().backward()
            grads[L.__name__] = (x, y)
        for got, expected in zip(grads["taugrad"], grads["torch"]):
            assert str(got.grad.dtype) == str(expected.grad.dtype).replace("torch.", "taugrad.")
            assert got.grad.dtype == got.dtype
            np.testing.assert_allclose(np.asarray(got.grad, dtype=np.float64), expected.grad.double().numpy(),
                                       rtol=2e-3)


# ---------------------------------------------------------------------------
# dtype objects
# ---------------------------------------------------------------------------


def test_dtype_objects_as_torch():
    t = taugrad
    assert t.float is t.float32 and t.double is t.float64 and t.half is t.float16
    assert t.long is t.int64 and t.int is t.int32 and t.short is t.int16
    assert t.ones(2).dtype == t.float32 and t.ones(2).dtype is t.float32
    assert t.tensor([1, 2]).dtype == t.int64 and t.tensor([True]).dtype == t.bool
    assert str(t.float32) == repr(t.float32) == "taugrad.float32"
    assert t.float32 != t.float64 and t.float32 != "float32"  # as torch: a string is not a dtype
    assert t.float32 == np.float32 and t.float32 == np.dtype("float32")  # NumPy dtypes compare equal too
    assert t.float32.is_floating_point and not t.int64.is_floating_point and t.float32.itemsize == 4
    assert t.int8.is_signed and not t.uint8.is_signed
    assert {t.float32: 1}[t.ones(1).dtype] == 1
    assert pickle.loads(pickle.dumps(t.float64)) is t.float64
    assert np.zeros(2, dtype=t.float16).dtype == np.float16  # NumPy takes them as dtypes
    assert isinstance(t.float32, t.dtype)


@pytest.mark.parametrize("spec", [taugrad.float64, np.float64, "float64", "double", float])
def test_every_dtype_spelling_is_accepted(spec):
    t = taugrad
    made = [t.zeros(2, dtype=spec), t.tensor([1, 2], dtype=spec), t.ones(2).astype(spec), t.ones(2).to(dtype=spec),
            t.arange(3, dtype=spec), t.randn(2, dtype=spec), t.full((2,), 1.0, dtype=spec)]
    if not isinstance(spec, str):  # .to("double") is a device name to torch and here
        made.append(t.ones(2).to(spec))
    for m in made:
        assert m.dtype is t.float64


def test_bfloat16_without_ml_dtypes_is_a_clear_error():
    try:
        import ml_dtypes  # noqa: F401  (optional dependency: the test checks the path without it)
    except ImportError:
        with pytest.raises(TypeError, match="bfloat16 needs the optional package ml_dtypes"):
            taugrad.zeros(2, dtype=taugrad.bfloat16)
    else:
        assert taugrad.zeros(2, dtype=taugrad.bfloat16).dtype is taugrad.bfloat16


def test_bfloat16_is_a_storage_dtype_with_ml_dtypes():
    """With ml_dtypes, bfloat16 tensors hold torch's rounded values and convert both ways; gradients refuse it."""
    ml_dtypes = pytest.importorskip("ml_dtypes")  # in the test extra (through jax): present where the suite runs
    values = [1.0, 1.00390625, 3.14159, -2.5e-3, 65504.0]
    ours = taugrad.tensor(values, dtype=taugrad.bfloat16)
    theirs = torch.tensor(values, dtype=torch.bfloat16)
    assert ours.dtype is taugrad.bfloat16 and ours.numpy().dtype == np.dtype(ml_dtypes.bfloat16)
    assert ours.float().tolist() == theirs.float().tolist()  # the same round-to-nearest-even
    assert taugrad.tensor(np.array(values, dtype=ml_dtypes.bfloat16)).dtype is taugrad.bfloat16
    assert (ours * 2).float().tolist() == (theirs * 2).float().tolist()
    with pytest.raises(TypeError, match="only floating-point tensors can require gradients"):
        taugrad.tensor(values, dtype=taugrad.bfloat16, requires_grad=True)
    with pytest.raises(TypeError, match="^Linear: bfloat16 parameters are not supported"):
        taugrad.nn.Linear(2, 3, dtype=taugrad.bfloat16)


def test_unknown_dtype_is_one_line():
    with pytest.raises(TypeError, match="unknown dtype 'floaty'"):
        taugrad.zeros(2, dtype="floaty")


def test_default_dtype():
    t = taugrad
    assert t.get_default_dtype() is t.float32
    try:
        t.set_default_dtype(t.float64)
        assert t.tensor([1.0]).dtype is t.float64 and t.zeros(2).dtype is t.float64 and t.randn(2).dtype is t.float64
        assert (t.tensor([1, 2]) * 0.5).dtype is t.float64 and t.tensor([1, 2]).exp().dtype is t.float64
        assert t.arange(0.0, 1.0, 0.5).dtype is t.float64
        assert t.tensor([1, 2]).dtype is t.int64
        with pytest.raises(TypeError, match="only floating dtypes"):
            t.set_default_dtype(t.int64)
    finally:
        t.set_default_dtype(t.float32)
    assert t.tensor([1.0]).dtype is t.float32


def test_conversion_methods_match_torch():
    values = np.array([-1.5, 0.0, 2.7], dtype=np.float32)
    for method in ("float", "double", "half", "long", "int", "bool"):
        got, expected = getattr(taugrad.from_numpy(values.copy()), method)(), getattr(torch.from_numpy(values.copy()),
                                                                                         method)()
        assert str(got.dtype) == str(expected.dtype).replace("torch.", "taugrad."), method
        np.testing.assert_array_equal(np.asarray(got), expected.numpy())
    x = taugrad.ones(2)
    assert x.type() == "taugrad.FloatTensor" and torch.ones(2).type() == "torch.FloatTensor"
    assert x.type(taugrad.float64).dtype is taugrad.float64 and x.type("torch.LongTensor").dtype is taugrad.int64
    assert x.to(taugrad.int64).dtype is taugrad.int64
    assert x.is_floating_point() and not taugrad.tensor([1]).is_floating_point()


def test_float_conversion_keeps_the_graph_and_the_gradient_dtype():
    x = taugrad.ones(3, requires_grad=True)
    y = x.double()
    assert y.dtype is taugrad.float64 and y.grad_fn is not None
    (y * 2).sum().backward()
    assert x.grad.dtype is taugrad.float32
    np.testing.assert_array_equal(np.asarray(x.grad), [2.0, 2.0, 2.0])


# ---------------------------------------------------------------------------
# matmul and linear refuse mixed dtypes, as torch
# ---------------------------------------------------------------------------


def test_linear_layer_refuses_float64_input():
    torch_layer = torch.nn.Linear(2, 3)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch_layer(torch.ones(1, 2, dtype=torch.float64))
    layer = tnn.Linear(2, 3)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 must have the same dtype, but got taugrad\.float64 "
                                           r"\(input\) and taugrad\.float32 \(weight\)") as info:
        layer(taugrad.ones(1, 2, dtype=taugrad.float64))
    assert "\n" not in str(info.value) and isinstance(info.value, TypeError)


@pytest.mark.parametrize("a, b", [("float32", "float64"), ("int64", "float32"), ("float64", "float32")])
def test_matmul_refuses_mixed_dtypes_as_torch(a, b):
    with pytest.raises(RuntimeError):
        torch.ones(2, 2, dtype=getattr(torch, a)) @ torch.ones(2, 2, dtype=getattr(torch, b))
    with pytest.raises(RuntimeError, match=f"matmul: expected both operands to have the same dtype, but got "
                                           f"taugrad.{a} @ taugrad.{b}"):
        taugrad.ones(2, 2, dtype=getattr(taugrad, a)) @ taugrad.ones(2, 2, dtype=getattr(taugrad, b))


def test_linear_functional_refuses_mixed_dtypes():
    import taugrad.functional as F

    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(taugrad.ones(1, 2, dtype=taugrad.float64), taugrad.ones(3, 2))

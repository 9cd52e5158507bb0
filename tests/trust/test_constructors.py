"""The legacy constructors as torch has them: ``Tensor(...)`` and ``FloatTensor``/``LongTensor``/...

``torch.Tensor([1, 2, 3])`` is float32 (torch's default dtype), ``Tensor(4)``
an uninitialised 4-vector, ``Tensor(2, 3)`` a (2, 3) one; the typed
constructors convert, and ``isinstance(x, torch.FloatTensor)`` asks for the
dtype.  Each case runs in both libraries and compares shape, dtype and (where
they are specified) values.
"""
import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn

FORMS = [
    ("Tensor", ([1, 2, 3],)), ("Tensor", ([[1, 2], [3, 4]],)), ("Tensor", ([1.5, 2],)), ("Tensor", ([True, False],)),
    ("Tensor", ((2, 3),)), ("Tensor", ([],)), ("Tensor", (4,)), ("Tensor", (2, 3)), ("Tensor", ()), ("Tensor", (0,)),
    ("FloatTensor", ([1, 2],)), ("FloatTensor", (3,)), ("FloatTensor", (2, 2)), ("DoubleTensor", ([1.5],)),
    ("DoubleTensor", (2, 2)), ("LongTensor", ([1.7, 2],)), ("LongTensor", (3,)), ("IntTensor", ([1, 2],)),
    ("ShortTensor", ([1, 2],)), ("CharTensor", ([1, -2],)), ("ByteTensor", ([1, 2],)), ("BoolTensor", ([1, 0],)),
    ("HalfTensor", ([1, 2],)), ("FloatTensor", ()),
]


def _name(dtype):
    return str(dtype).split(".")[-1]


@pytest.mark.parametrize("name, args", FORMS, ids=[f"{n}{a}" for n, a in FORMS])
def test_legacy_constructors_give_torchs_shape_and_dtype(name, args):
    ours, theirs = getattr(taugrad, name)(*args), getattr(torch, name)(*args)
    assert isinstance(ours, taugrad.Tensor)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert _name(ours.dtype) == _name(theirs.dtype)
    if args and not all(type(a) is int for a in args):  # data given: the values are specified
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("array", [np.array([1, 2]), np.array([1.5, 2.5]), np.array([[1, 0]], dtype=np.uint8)])
@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"])
def test_typed_constructors_convert_arrays_as_torch(name, array):
    ours, theirs = getattr(taugrad, name)(array), getattr(torch, name)(array)
    assert _name(ours.dtype) == _name(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours[...] = 0  # a copy, as torch's: the array is untouched
    assert array.any()


def test_tensor_follows_the_default_dtype():
    previous = taugrad.get_default_dtype()
    taugrad.set_default_dtype(taugrad.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for args in (([1, 2],), (3,), (2, 2)):
            assert _name(taugrad.Tensor(*args).dtype) == _name(torch.Tensor(*args).dtype) == "float64"
    finally:
        taugrad.set_default_dtype(previous)
        torch.set_default_dtype(torch.float32)


def test_storing_a_fraction_into_a_legacy_tensor_keeps_it():
    for lib in (taugrad, torch):
        x = lib.Tensor([1, 2, 3])
        x[0] = 0.5
        assert x[0].item() == 0.5


def test_a_parameter_from_a_legacy_size_constructor_trains():
    for lib in (taugrad, torch):
        w = lib.nn.Parameter(lib.Tensor(3, 4))
        assert tuple(w.shape) == (3, 4) and w.requires_grad and _name(w.dtype) == "float32"
        with lib.no_grad():
            w.fill_(0.5)
        (w * 2).sum().backward()
        np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 4), 2.0, dtype=np.float32))
    assert isinstance(nn.Parameter(taugrad.Tensor(2)), nn.Parameter)


def test_tensor_of_a_tensor_shares_it_as_torch():
    for lib in (taugrad, torch):
        base = lib.tensor([1, 2])
        alias = lib.Tensor(base)
        assert _name(alias.dtype) == "int64"
        alias[0] = 7
        assert base[0].item() == 7


def test_isinstance_asks_for_the_dtype_as_torch():
    checks = [("zeros", (2,), {}), ("zeros", (2,), {"dtype": "float64"}), ("zeros", (2,), {"dtype": "int64"}),
              ("zeros", (2,), {"dtype": "bool"}), ("zeros", (2,), {"dtype": "int32"})]
    for fn, args, kwargs in checks:
        ours = getattr(taugrad, fn)(*args, **{k: getattr(taugrad, v) for k, v in kwargs.items()})
        theirs = getattr(torch, fn)(*args, **{k: getattr(torch, v) for k, v in kwargs.items()})
        for name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor", "HalfTensor"):
            assert isinstance(ours, getattr(taugrad, name)) == isinstance(theirs, getattr(torch, name)), (name, kwargs)
    assert not issubclass(taugrad.FloatTensor, taugrad.Tensor) and not issubclass(torch.FloatTensor, torch.Tensor)
    assert isinstance(3, taugrad.FloatTensor) is isinstance(3, torch.FloatTensor) is False
    assert str(taugrad.FloatTensor.dtype) == "taugrad.float32"


def test_type_names_and_conversions_go_through_the_legacy_types():
    for lib in (taugrad, torch):
        x = lib.zeros(2)
        assert x.type().split(".")[-1] == "FloatTensor"
        assert _name(x.type(lib.DoubleTensor).dtype) == "float64"
        assert x.type(lib.LongTensor).type().split(".")[-1] == "LongTensor"


@pytest.mark.parametrize("call, error", [
    (lambda lib: lib.Tensor(1.5), TypeError),
    (lambda lib: lib.Tensor(-1), RuntimeError),
    (lambda lib: lib.FloatTensor(2.0), TypeError),
    (lambda lib: lib.FloatTensor(lib.tensor([1, 2])), TypeError),
])
def test_what_torch_refuses_is_refused(call, error):
    for lib in (taugrad, torch):
        with pytest.raises(error):
            call(lib)

"""``repr`` of tensors under each default float dtype, as torch prints them.

Which dtype a repr names depends on the default: under
``set_default_dtype(float64)`` a float64 tensor hides its dtype and a float32
one shows it.  Every dtype is printed with values of several magnitudes,
empty and 0-d, under both defaults, and compared with torch's text.
"""
import numpy as np
import pytest
import torch

import taugrad

VALUES = [np.array([1.5, 2.25, -3.0]), np.array(2.5), np.array([[1e-5, 3.0], [1e5, 2.0]]), np.array([]),
          np.zeros((2, 0)), np.array([0.1, 123456.789, -7.0]), np.arange(12.0).reshape(3, 4) / 7]
DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "uint8", "bool"]


@pytest.fixture(params=["float64", "float32"])
def default(request):
    previous_torch, previous = torch.get_default_dtype(), taugrad.get_default_dtype()
    torch.set_default_dtype(getattr(torch, request.param))
    taugrad.set_default_dtype(getattr(taugrad, request.param))
    yield request.param
    torch.set_default_dtype(previous_torch)
    taugrad.set_default_dtype(previous)


def _same_text(ours, theirs):
    assert repr(ours).replace("taugrad.", "") == repr(theirs).replace("torch.", "")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index", range(len(VALUES)))
def test_repr_under_each_default_dtype_is_torchs(default, dtype, index):
    with np.errstate(all="ignore"):
        values = VALUES[index].astype(dtype)
    _same_text(taugrad.tensor(values), torch.tensor(values))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_repr_of_graph_tensors_and_parameters_under_each_default(default, dtype):
    values = np.array([[0.5, -1.25], [2.0, 3.5]], dtype=dtype)
    ours = taugrad.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    _same_text(ours, theirs)
    _same_text(ours * 2, theirs * 2)
    _same_text(taugrad.nn.Parameter(taugrad.tensor(values)), torch.nn.Parameter(torch.tensor(values)))


def test_the_default_is_restored_after_these_tests():
    assert taugrad.get_default_dtype() == taugrad.float32 and torch.get_default_dtype() == torch.float32

"""Tensor API that programs reach for: is_* flags, out= on the factory functions, torch.cross."""
import warnings

import numpy as np
import pytest
import torch

import taugrad

FLAGS = [n for n in dir(torch.Tensor) if n.startswith("is_") and n not in (
    "is_coalesced", "is_set_to", "is_shared")]  # sparse-only; storage identity; shared memory (multiprocessing)


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool"])
def test_every_is_flag_torch_has_answers_as_torch_on_the_cpu(dtype):
    t = torch.zeros(2, 3, dtype=getattr(torch, dtype))
    u = taugrad.zeros(2, 3, dtype=getattr(taugrad, dtype))
    other_t, other_u = torch.zeros(2, 3), taugrad.zeros(2, 3)
    for name in FLAGS:
        theirs, ours = getattr(t, name), getattr(u, name)
        assert callable(theirs) == callable(ours), name
        if callable(theirs):
            args_t, args_u = ((other_t,), (other_u,)) if name == "is_same_size" else ((), ())
            try:
                expected = theirs(*args_t)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    ours(*args_u)
                continue
            assert ours(*args_u) == expected, name
        else:
            assert ours == theirs, name


def test_is_nonzero_on_one_element():
    assert taugrad.tensor([0.5]).is_nonzero() is torch.tensor([0.5]).is_nonzero() is True
    with pytest.raises(RuntimeError, match="no values"):
        taugrad.zeros(0).is_nonzero()


@pytest.mark.parametrize("name,args", [
    ("zeros", (2, 3)), ("ones", (2, 3)), ("full", ((2, 3), 1.5)), ("arange", (6,)), ("linspace", (0.0, 1.0, 6)),
    ("logspace", (0.0, 1.0, 6)), ("eye", (3,)),
])
def test_factory_functions_write_into_out_as_torch(name, args):
    shape = {"arange": (6,), "linspace": (6,), "logspace": (6,), "eye": (3, 3)}.get(name, (2, 3))
    results = []
    for L in (taugrad, torch):
        out = L.empty(*shape, dtype=L.float64)
        got = getattr(L, name)(*args, out=out)
        assert got is out and out.dtype == L.float64
        results.append(out.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-15)


@pytest.mark.parametrize("name", ["rand", "randn", "randint", "randperm"])
def test_random_factories_fill_out_by_contract(name):
    args = {"rand": (50, 4), "randn": (50, 4), "randint": (0, 7, (50, 4)), "randperm": (200,)}[name]
    dtype = taugrad.int64 if name in ("randint", "randperm") else taugrad.float64
    out = taugrad.zeros(200 if name == "randperm" else (50, 4), dtype=dtype)
    taugrad.manual_seed(3)
    assert getattr(taugrad, name)(*args, out=out) is out
    first = out.numpy().copy()
    taugrad.manual_seed(3)
    getattr(taugrad, name)(*args, out=out)
    np.testing.assert_array_equal(first, out.numpy())  # deterministic under a seed
    if name == "rand":
        assert 0.0 <= first.min() and first.max() < 1.0 and abs(first.mean() - 0.5) < 0.1
    if name == "randint":
        assert set(np.unique(first)) <= set(range(7))
    if name == "randperm":
        assert sorted(first.tolist()) == list(range(200))


def test_out_refuses_what_torch_refuses():
    with pytest.raises(RuntimeError, match="does not match dtype of out parameter"):
        taugrad.zeros(2, out=taugrad.zeros(2), dtype=taugrad.float64)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        taugrad.ones(3, out=taugrad.zeros(3, requires_grad=True))


def test_cross_without_dim_takes_the_first_dim_of_length_3_with_torchs_warning():
    a = np.random.default_rng(1).normal(size=(3, 3, 2))
    b = np.random.default_rng(2).normal(size=(3, 3, 2))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        ours = taugrad.cross(taugrad.tensor(a), taugrad.tensor(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.cross(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("shapes,dim", [(((2, 4), (2, 4)), -1), (((2, 3), (3,)), -1), (((4, 3), (4, 3)), 0)])
def test_cross_errors_are_torchs(shapes, dim):
    a, b = (np.ones(s) for s in shapes)
    with pytest.raises(RuntimeError) as theirs:
        torch.linalg.cross(torch.tensor(a), torch.tensor(b), dim=dim)
    with pytest.raises(RuntimeError) as ours:
        taugrad.linalg.cross(taugrad.tensor(a), taugrad.tensor(b), dim=dim)
    assert str(ours.value) == str(theirs.value)

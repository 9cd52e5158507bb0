"""torch's top-level names that are other ops' aliases, methods or settings, called as torch code calls them."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad

A = np.random.default_rng(3).uniform(-1.5, 1.5, (3, 4))
B = np.random.default_rng(4).uniform(0.5, 1.5, (3, 4))

FUNCTIONS = {
    "multiply": lambda L, a, b: L.multiply(a, b),
    "multiply_method": lambda L, a, b: a.multiply(b),
    "subtract": lambda L, a, b: L.subtract(a, b, alpha=2) if L is torch else L.subtract(a, b, alpha=2),
    "subtract_method": lambda L, a, b: a.subtract(b),
    "absolute": lambda L, a, b: L.absolute(a) * b,
    "absolute_method": lambda L, a, b: a.absolute(),
    "concat": lambda L, a, b: L.concat([a, b], dim=1),
    "broadcast_to": lambda L, a, b: L.broadcast_to(a[:1], (2, 3, 4)),
    "fliplr": lambda L, a, b: L.fliplr(a) * b,
    "flipud_method": lambda L, a, b: a.flipud(),
    "ravel": lambda L, a, b: L.ravel(a.t()),
    "ravel_method": lambda L, a, b: a.ravel(),
    "sgn": lambda L, a, b: L.sgn(a) + a,
    "asinh": lambda L, a, b: L.asinh(a),
    "arccosh": lambda L, a, b: L.arccosh(b + 1.0),
    "atanh": lambda L, a, b: L.atanh(a * 0.5),
    "logit": lambda L, a, b: L.logit(b * 0.5),
    "logit_eps": lambda L, a, b: L.logit(b * 0.5, eps=0.3),
    "cosine_similarity": lambda L, a, b: L.cosine_similarity(a, b, dim=0),
    "pairwise_distance": lambda L, a, b: L.pairwise_distance(a, b, p=3.0),
    "pixel_shuffle": lambda L, a, b: L.pixel_shuffle(a.reshape(1, 4, 3, 1), 2),
    "pixel_unshuffle": lambda L, a, b: L.pixel_unshuffle(a.reshape(1, 1, 2, 6), 2),
    "selu": lambda L, a, b: L.selu(a),
    "celu": lambda L, a, b: L.celu(a, 0.5),
    "threshold": lambda L, a, b: L.threshold(a, 0.1, -2.0),
    "hardshrink": lambda L, a, b: L.hardshrink(a, 0.4),
    "prelu": lambda L, a, b: L.prelu(a, b[0, :1]),
    "std_mean": lambda L, a, b: L.stack(L.std_mean(a, 1)),
    "var_mean_keepdim": lambda L, a, b: L.cat(L.var_mean(a, dim=0, keepdim=True)),
    "var_mean_unbiased_positional": lambda L, a, b: L.stack(L.var_mean(a, False)),
    "std_mean_correction": lambda L, a, b: L.stack(L.std_mean(a, (0, 1), correction=0)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_and_gradients_are_torchs(name):
    f = FUNCTIONS[name]
    ta, tb = torch.tensor(A, requires_grad=True), torch.tensor(B, requires_grad=True)
    ga, gb = taugrad.tensor(A, requires_grad=True), taugrad.tensor(B, requires_grad=True)
    ty, gy = f(torch, ta, tb), f(taugrad, ga, gb)
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-14)
    w = np.random.default_rng(5).uniform(0.5, 1.5, tuple(ty.shape))
    (ty * torch.tensor(w)).sum().backward()
    (gy * taugrad.tensor(w)).sum().backward()
    for ours, theirs in ((ga, ta), (gb, tb)):
        if theirs.grad is None:
            assert ours.grad is None
        else:
            np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name", ["asinh_", "arcsinh_", "acosh_", "arccosh_", "atanh_", "arctanh_", "logit_",
                                  "arcsin_", "arctan_", "fix_", "negative_", "clip_"])
def test_inplace_functions_and_aliases_are_torchs(name):
    values = np.abs(A) * 0.3 + (1.2 if "cosh" in name else 0.05)
    args = (-0.5, 0.5) if name == "clip_" else ()
    results = []
    for lib in (torch, taugrad):
        leaf = lib.tensor(values, requires_grad=True)
        x = leaf.clone()
        out = getattr(lib, name)(x, *args)
        assert out is x
        name_of = type(x.grad_fn).__name__ if lib is torch else x.grad_fn.name()
        try:
            x.sum().backward()
        except NotImplementedError:  # torch has no rule for asinh_, acosh_, atanh_ in place
            assert lib is torch and name in ("asinh_", "arcsinh_", "acosh_", "arccosh_", "atanh_", "arctanh_")
        results.append((x.detach().numpy(), None if leaf.grad is None else leaf.grad.numpy(), name_of))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    if results[0][1] is not None:
        np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12)
    else:  # taugrad's gradient is the out-of-place function's
        out_of_place = taugrad.tensor(values, requires_grad=True)
        getattr(out_of_place, name.rstrip("_"))().sum().backward()
        np.testing.assert_allclose(results[1][1], out_of_place.grad.numpy(), rtol=1e-12)
        return  # torch's node there is its "not implemented" AsinhBackward1
    assert results[1][2] == results[0][2]


def test_sgn_in_place_is_a_method_as_in_torch():
    results = []
    for lib in (torch, taugrad):
        x = lib.tensor(A).sgn_()
        results.append(x.numpy())
        assert not hasattr(lib, "sgn_")
    np.testing.assert_array_equal(results[1], results[0])


def test_ravel_is_a_view_when_it_can_be_and_a_copy_when_not():
    for lib in (torch, taugrad):
        x = lib.arange(6.0).reshape(2, 3)
        flat = x.ravel()
        flat[0] = 10.0
        assert x[0, 0].item() == 10.0  # contiguous: a view
        flat_t = x.t().ravel()
        flat_t[1] = -1.0
        assert x[0, 1].item() == 1.0  # transposed: a copy
        assert flat_t.stride() == (1,)


def test_flip_left_right_needs_two_dims_as_torch():
    with pytest.raises(RuntimeError):
        torch.fliplr(torch.ones(3))
    with pytest.raises(ValueError, match="fliplr: input must be >= 2-d"):
        taugrad.fliplr(taugrad.ones(3))
    with pytest.raises(ValueError, match="flipud: input must be >= 1-d"):
        taugrad.flipud(taugrad.tensor(1.0))


def test_method_functions():
    for lib in (torch, taugrad):
        leaf = lib.ones(2, requires_grad=True)
        assert lib.detach(leaf).requires_grad is False
        assert lib.is_floating_point(leaf) and not lib.is_complex(leaf)
        assert not lib.is_floating_point(lib.tensor([1]))


def test_num_threads_set_the_blas_threads_and_read_back():
    import threadpoolctl  # in the test extra (scikit-learn needs it); the warning path is tested below
    before = taugrad.get_num_threads()
    try:
        taugrad.set_num_threads(1)
        assert taugrad.get_num_threads() == 1
        blas = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
        assert blas and set(blas) == {1}
    finally:
        taugrad.set_num_threads(before)


def test_num_threads_without_threadpoolctl_warns_and_remembers(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_threadpoolctl(name, *args, **kwargs):
        if name == "threadpoolctl":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    before = taugrad.get_num_threads()
    monkeypatch.setattr(builtins, "__import__", no_threadpoolctl)
    try:
        with pytest.warns(UserWarning, match="OPENBLAS_NUM_THREADS"):
            taugrad.set_num_threads(3)
        assert taugrad.get_num_threads() == 3
    finally:
        monkeypatch.undo()
        taugrad.set_num_threads(before)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_num_threads_refuses_what_torch_refuses(bad):
    with pytest.raises((RuntimeError, TypeError)):
        torch.set_num_threads(bad)
    with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
        taugrad.set_num_threads(bad)


def test_deterministic_and_precision_settings_read_back_as_torchs():
    for lib in (torch, taugrad):
        assert lib.are_deterministic_algorithms_enabled() is False
        lib.use_deterministic_algorithms(True, warn_only=True)
        try:
            assert lib.are_deterministic_algorithms_enabled() and lib.is_deterministic_algorithms_warn_only_enabled()
        finally:
            lib.use_deterministic_algorithms(False)
        assert not lib.is_deterministic_algorithms_warn_only_enabled()
        with pytest.raises(TypeError):
            lib.use_deterministic_algorithms(1)
        assert lib.get_float32_matmul_precision() == "highest"
        lib.set_float32_matmul_precision("high")
        try:
            assert lib.get_float32_matmul_precision() == "high"
            with pytest.warns(UserWarning, match="has no effect"):
                lib.set_float32_matmul_precision("fastest")
            assert lib.get_float32_matmul_precision() == "high"
        finally:
            lib.set_float32_matmul_precision("highest")
        assert lib.get_num_interop_threads() >= 1

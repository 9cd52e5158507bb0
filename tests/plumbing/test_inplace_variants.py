"""torch's in-place methods: every one whose out-of-place op taugrad has exists, with torch's values and gradients."""
import numpy as np
import pytest
import torch

import taugrad

#: in-place methods torch has whose out-of-place form taugrad has, which taugrad leaves out, and why
NOT_PROVIDED = {
    "detach_": "autograd, not elementwise: tested with the autograd API",
}

RNG = np.random.default_rng(0)
X = RNG.uniform(0.2, 0.9, size=(3, 4))   # inside every domain used below (asin, acos, log, rsqrt...)
Y = RNG.uniform(0.5, 1.5, size=(3, 4))
M = RNG.uniform(-1.0, 1.0, size=(4, 4))

#: method -> (args built from a library, differentiable?)
CASES = {
    "sin_": (lambda L: (), True), "cos_": (lambda L: (), True), "tan_": (lambda L: (), True),
    "asin_": (lambda L: (), True), "arcsin_": (lambda L: (), True), "acos_": (lambda L: (), True),
    "arccos_": (lambda L: (), True), "atan_": (lambda L: (), True), "arctan_": (lambda L: (), True),
    "sinh_": (lambda L: (), True), "cosh_": (lambda L: (), True),
    "atan2_": (lambda L: (L.tensor(Y),), True), "arctan2_": (lambda L: (L.tensor(Y),), True),
    "hypot_": (lambda L: (L.tensor(Y),), True), "exp2_": (lambda L: (), True), "expm1_": (lambda L: (), True),
    "log2_": (lambda L: (), True), "log10_": (lambda L: (), True), "log1p_": (lambda L: (), True),
    "rsqrt_": (lambda L: (), True), "reciprocal_": (lambda L: (), True), "erf_": (lambda L: (), True),
    "xlogy_": (lambda L: (L.tensor(Y),), True), "lerp_": (lambda L: (L.tensor(Y), 0.25), True),
    "deg2rad_": (lambda L: (), True), "rad2deg_": (lambda L: (), True), "frac_": (lambda L: (), True),
    "square_": (lambda L: (), True), "ceil_": (lambda L: (), True), "trunc_": (lambda L: (), True),
    "fix_": (lambda L: (), True), "sign_": (lambda L: (), True), "pow_": (lambda L: (2.5,), True),
    "fmod_": (lambda L: (0.3,), True), "remainder_": (lambda L: (0.3,), True),
    "floor_divide_": (lambda L: (0.3,), False), "nan_to_num_": (lambda L: (), True),
    "divide_": (lambda L: (L.tensor(Y),), True), "true_divide_": (lambda L: (L.tensor(Y),), True),
    "eq_": (lambda L: (L.tensor(np.round(X, 1)),), False), "ne_": (lambda L: (0.5,), False),
    "not_equal_": (lambda L: (0.5,), False), "lt_": (lambda L: (0.5,), False), "less_": (lambda L: (0.5,), False),
    "le_": (lambda L: (0.5,), False), "less_equal_": (lambda L: (0.5,), False), "gt_": (lambda L: (0.5,), False),
    "greater_": (lambda L: (0.5,), False), "ge_": (lambda L: (0.5,), False),
    "greater_equal_": (lambda L: (0.5,), False),
    "tril_": (lambda L: (1,), True), "triu_": (lambda L: (-1,), True),
    "cumsum_": (lambda L: (1,), True), "cumprod_": (lambda L: (0,), True),
    "addmm_": (lambda L: (L.tensor(X), L.tensor(M)), True),
    "logical_and_": (lambda L: (L.tensor(Y > 1),), False), "logical_or_": (lambda L: (L.tensor(Y > 1),), False),
    "logical_xor_": (lambda L: (L.tensor(Y > 1),), False), "logical_not_": (lambda L: (), False),
}
INT_CASES = {
    "bitwise_and_": lambda L: (L.tensor(np.arange(12).reshape(3, 4) % 5),),
    "bitwise_or_": lambda L: (L.tensor(np.arange(12).reshape(3, 4) % 5),),
    "bitwise_xor_": lambda L: (L.tensor(np.arange(12).reshape(3, 4) % 5),),
    "bitwise_not_": lambda L: (),
}
SHAPE_CASES = {
    "unsqueeze_": lambda: (1,), "squeeze_": lambda: (), "t_": lambda: (), "transpose_": lambda: (0, 1),
    "swapaxes_": lambda: (1, 0), "swapdims_": lambda: (0, 1),
}


def test_every_torch_inplace_method_with_an_out_of_place_op_here_exists():
    names = [n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("_")]
    missing = sorted(n for n in names if hasattr(taugrad.Tensor, n[:-1]) and not hasattr(taugrad.Tensor, n)
                     and n not in NOT_PROVIDED)
    assert not missing, f"in-place methods torch has and taugrad lacks: {missing}"


@pytest.mark.parametrize("method", sorted(CASES))
def test_inplace_values_and_gradients_match_torch(method):
    make_args, differentiable = CASES[method]
    results = []
    for L in (taugrad, torch):
        x = L.tensor(X.copy())
        out = getattr(x, method)(*make_args(L))
        assert out is x
        values = x.numpy().copy()
        grad = None
        if differentiable:
            w = L.tensor(X.copy(), requires_grad=True)
            y = w * 1.5
            getattr(y, method)(*make_args(L))
            (y * L.tensor(Y)).sum().backward()
            grad = w.grad.numpy()
        results.append((values, grad))
    (v1, g1), (v2, g2) = results
    np.testing.assert_allclose(v1, v2, rtol=1e-12, atol=1e-12)
    if differentiable:
        np.testing.assert_allclose(g1, g2, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", sorted(INT_CASES))
def test_integer_inplace_matches_torch(method):
    values = []
    for L in (taugrad, torch):
        x = L.tensor(np.arange(12).reshape(3, 4))
        getattr(x, method)(*INT_CASES[method](L))
        values.append(x.numpy())
    np.testing.assert_array_equal(values[0], values[1])


def test_floating_function_in_place_on_an_integer_tensor_is_refused():
    with pytest.raises(RuntimeError):
        torch.arange(4).sin_()
    with pytest.raises(TypeError, match="sin_: the result is floating"):
        taugrad.arange(4).sin_()


@pytest.mark.parametrize("method", sorted(SHAPE_CASES))
def test_shape_changes_in_place_keep_memory_and_gradients(method):
    seen = []
    for L in (taugrad, torch):
        x = L.tensor(X[:1].copy() if method == "squeeze_" else X.copy())
        view_before = x.numpy()
        getattr(x, method)(*SHAPE_CASES[method]())
        assert np.shares_memory(x.numpy(), view_before)
        w = L.tensor(X[:1].copy() if method == "squeeze_" else X.copy(), requires_grad=True)
        y = w * 2.0
        getattr(y, method)(*SHAPE_CASES[method]())
        weights = L.tensor(np.arange(float(y.numel())).reshape(tuple(y.shape)))
        (y * weights).sum().backward()
        seen.append((tuple(x.shape), tuple(x.stride()), w.grad.numpy(), y.grad_fn.name()))
    assert seen[0][0] == seen[1][0]
    assert seen[0][1] == seen[1][1]
    np.testing.assert_allclose(seen[0][2], seen[1][2])
    # the in-place form shows the grad_fn of the out-of-place op (whose name the op tables compare with torch's)
    out_of_place = getattr(taugrad.tensor(X[:1] if method == "squeeze_" else X, requires_grad=True) * 2.0,
                           method[:-1])(*SHAPE_CASES[method]())
    assert seen[0][3] == out_of_place.grad_fn.name()


def test_shape_change_in_place_on_a_leaf_that_requires_grad_is_refused():
    with pytest.raises(RuntimeError, match="leaf"):
        taugrad.ones(2, requires_grad=True).unsqueeze_(0)

"""torch API that ordinary code reaches for: inference_mode, finfo/iinfo, set_printoptions and the
in-place forms of elementwise functions and indexed updates, checked against torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad

X0 = np.array([[0.5, -1.25, 2.0], [0.3, 1.5, -0.7]])
WEIGHTS = np.arange(6.0).reshape(2, 3)


# ---------------------------------------------------------------------------
# inference_mode
# ---------------------------------------------------------------------------


def test_inference_mode_as_context_manager_records_no_graph():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    with taugrad.inference_mode():
        assert not taugrad.is_grad_enabled() and taugrad.is_inference_mode_enabled()
        y = x * 2
    assert not y.requires_grad
    assert taugrad.is_grad_enabled() and not taugrad.is_inference_mode_enabled()


def test_inference_mode_false_leaves_grad_mode_alone():
    with taugrad.inference_mode(False):
        assert taugrad.is_grad_enabled() and not taugrad.is_inference_mode_enabled()
    with taugrad.no_grad(), taugrad.inference_mode(False):
        assert not taugrad.is_grad_enabled()


@pytest.mark.parametrize("form", ["bare", "called"])
def test_inference_mode_as_decorator(form):
    def body():
        return taugrad.is_grad_enabled(), taugrad.is_inference_mode_enabled()

    fn = taugrad.inference_mode(body) if form == "bare" else taugrad.inference_mode()(body)
    assert fn() == (False, True)
    assert taugrad.is_grad_enabled()


def test_inference_mode_restores_after_an_error():
    with pytest.raises(ZeroDivisionError):
        with taugrad.inference_mode():
            1 / 0
    assert taugrad.is_grad_enabled() and not taugrad.is_inference_mode_enabled()


# ---------------------------------------------------------------------------
# finfo / iinfo
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_finfo_matches_torch(name):
    ours, theirs = taugrad.finfo(getattr(taugrad, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field


def test_finfo_default_is_the_default_dtype_and_integers_are_refused():
    assert taugrad.finfo().dtype == "float32"
    assert taugrad.finfo(taugrad.float).eps == torch.finfo(torch.float).eps
    with pytest.raises(TypeError, match="finfo"):
        taugrad.finfo(taugrad.int32)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(name):
    ours, theirs = taugrad.iinfo(getattr(taugrad, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.max, ours.min, ours.dtype) == (theirs.bits, theirs.max, theirs.min, theirs.dtype)


def test_iinfo_refuses_floats():
    with pytest.raises(TypeError, match="iinfo"):
        taugrad.iinfo(taugrad.float32)


# ---------------------------------------------------------------------------
# set_printoptions
# ---------------------------------------------------------------------------


@pytest.fixture
def restore_printing():
    yield
    taugrad.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


PRINT_CASES = [
    (dict(precision=2), [1.23456, 2.0]),
    (dict(precision=2), [1e-5, 1.0]),
    (dict(sci_mode=True), [1.5, 2.0]),
    (dict(sci_mode=False), [1e-5, 2.0e3]),
    (dict(sci_mode=False), [1e10, 1.0]),
    (dict(threshold=5, edgeitems=1, precision=3), list(np.arange(10.0) + 1e-5)),
    (dict(linewidth=20), list(np.arange(10.0))),
    (dict(profile="short"), [[1.123, 2.0, 3, 4, 5], [1, 2, 3, 4, 5]]),
    (dict(profile="full"), list(np.arange(1200.0) / 7)),
]


@pytest.mark.parametrize("options,values", PRINT_CASES)
def test_set_printoptions_prints_as_torch(restore_printing, options, values):
    taugrad.set_printoptions(**options)
    torch.set_printoptions(**options)
    assert repr(taugrad.tensor(values, dtype=taugrad.float32)) == repr(torch.tensor(values, dtype=torch.float32))


def test_set_printoptions_default_profile_restores(restore_printing):
    taugrad.set_printoptions(precision=1, sci_mode=True)
    taugrad.set_printoptions(profile="default")
    assert repr(taugrad.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"


def test_set_printoptions_refuses_an_unknown_profile():
    with pytest.raises(ValueError, match="profile"):
        taugrad.set_printoptions(profile="long")


# ---------------------------------------------------------------------------
# in-place functions: values, version, gradient, leaf refusal
# ---------------------------------------------------------------------------

IN_PLACE = [
    ("abs_", ()), ("exp_", ()), ("log_", ()), ("sqrt_", ()), ("sigmoid_", ()), ("tanh_", ()), ("neg_", ()),
    ("floor_", ()), ("round_", ()), ("clamp_min_", (0.2,)), ("clamp_max_", (0.4,)),
    ("addcmul_", ("t1", "t2")), ("addcdiv_", ("t1", "t2")),
    ("index_add_", (1, "idx", "t1")), ("index_fill_", (1, "idx", -2.0)), ("scatter_add_", (0, "sidx", "t1")),
]


def _run_in_place(L, method, args, view: bool):
    """w (leaf) -> y = w * 1.5 (or a view of it) changed in place; the loss weights every element."""
    w = L.tensor(X0, requires_grad=True)
    t1 = L.tensor(X0 + 3.0, requires_grad=True)
    t2 = L.tensor(X0 * 2 + 5.0, requires_grad=True)
    named = {"t1": t1, "t2": t2, "idx": L.tensor([2, 0]), "sidx": L.tensor([[1, 0, 1], [1, 1, 0]])}
    if method in ("index_add_",):
        named["t1"] = t1[:, :2]
    base = w * 1.5
    y = base[1:] if view else base
    if view:  # the view's operands must fit its shape
        named = {k: (v[1:] if k in ("t1", "t2") else v) for k, v in named.items()}
        named["sidx"] = L.tensor([[0, 0, 0]])  # the view has one row
        if method == "index_add_":
            named["t1"] = t1[1:, :2]
    version = y._version
    out = getattr(y, method)(*(named.get(a, a) if isinstance(a, str) else a for a in args))
    assert out is y
    bumped = y._version > version
    (base * L.tensor(WEIGHTS)).sum().backward()
    grads = [None if t.grad is None else np.asarray(t.grad) for t in (w, t1, t2)]
    return np.asarray(base.detach()), grads, bumped


@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("method,args", IN_PLACE, ids=[m for m, _ in IN_PLACE])
def test_in_place_values_version_and_gradient_match_torch(method, args, view):
    ours, theirs = _run_in_place(taugrad, method, args, view), _run_in_place(torch, method, args, view)
    np.testing.assert_allclose(ours[0], theirs[0], equal_nan=True)
    assert ours[2] and theirs[2]
    for mine, want in zip(ours[1], theirs[1]):
        assert (mine is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(mine, want, equal_nan=True)


@pytest.mark.parametrize("method,args", IN_PLACE, ids=[m for m, _ in IN_PLACE])
def test_in_place_on_a_leaf_that_requires_grad_is_refused(method, args):
    x = taugrad.tensor(X0, requires_grad=True)
    named = {"t1": taugrad.tensor(X0 + 3.0), "t2": taugrad.tensor(X0 + 5.0), "idx": taugrad.tensor([2, 0]),
             "sidx": taugrad.tensor([[1, 0, 1]])}
    if method == "index_add_":
        named["t1"] = named["t1"][:, :2]
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(x, method)(*(named.get(a, a) if isinstance(a, str) else a for a in args))
    with taugrad.no_grad():  # allowed there, as an optimizer step
        getattr(x, method)(*(named.get(a, a) if isinstance(a, str) else a for a in args))


def test_in_place_function_twice_differentiable():
    a = taugrad.tensor([0.3, 0.7], dtype=taugrad.float64, requires_grad=True)
    y = a * 1.0
    y.log_()
    (g,) = taugrad.autograd.grad(y.sum(), a, create_graph=True)
    (h,) = taugrad.autograd.grad(g.sum(), a)
    np.testing.assert_allclose(g.detach().numpy(), 1 / np.array([0.3, 0.7]))
    np.testing.assert_allclose(h.numpy(), -1 / np.array([0.3, 0.7]) ** 2)


@pytest.mark.parametrize("method", ["sqrt_", "neg_", "abs_", "tanh_"])
def test_changing_a_saved_output_in_place_raises(method):
    """exp saved its output; changing that output in place makes backward raise, as in torch."""
    for L in (torch, taugrad):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = x.exp()
        getattr(y, method)()
        with pytest.raises(RuntimeError):
            y.sum().backward()


def test_a_function_in_place_after_a_reader_keeps_its_gradient():
    """log_ on a tensor that mul already read (but did not save) leaves mul's gradient right, as torch."""
    results = []
    for L in (torch, taugrad):
        x = L.tensor([0.5, 1.5], requires_grad=True)
        y = x * 2.0
        z = y * 3.0  # reads the constant only
        y.log_()
        (z.sum() + y.sum()).backward()
        results.append(np.asarray(x.grad))
    np.testing.assert_allclose(results[1], results[0])


def test_float_function_in_place_of_an_integer_tensor_is_refused():
    with pytest.raises(TypeError, match="exp_"):
        taugrad.tensor([1, 2]).exp_()
    x = taugrad.tensor([-1, 2])
    assert x.abs_().tolist() == [1, 2] and x.neg_().tolist() == [-1, -2]


_MIXED_DTYPE_WRITES = {
    "scatter": lambda L, x, s: x.scatter(0, L.tensor([0]), s),
    "scatter_": lambda L, x, s: x.scatter_(0, L.tensor([0]), s),
    "scatter_add": lambda L, x, s: x.scatter_add(0, L.tensor([0]), s),
    "scatter_add_": lambda L, x, s: x.scatter_add_(0, L.tensor([0]), s),
    "index_add": lambda L, x, s: x.index_add(0, L.tensor([0]), s),
    "index_add_": lambda L, x, s: x.index_add_(0, L.tensor([0]), s),
}


@pytest.mark.parametrize("name", sorted(_MIXED_DTYPE_WRITES))
@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float32", "float64"), ("int64", "float32")])
def test_writing_another_dtype_is_refused_as_torch(name, dtypes):
    """PyTorch casts nothing here, up or down: the written tensor must have self's dtype."""
    def call(L):
        x = L.zeros(3, dtype=getattr(L, dtypes[0]))
        return _MIXED_DTYPE_WRITES[name](L, x, L.ones(1, dtype=getattr(L, dtypes[1])))

    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(TypeError, match=f"{name}: self .* must have the same dtype"):
        call(taugrad)


@pytest.mark.parametrize("alpha", [1.7, -1.5, 2.5, 2])
@pytest.mark.parametrize("inplace", [False, True])
def test_index_add_casts_alpha_to_an_integer_tensors_type_as_torch(alpha, inplace):
    def run(L):
        x = L.zeros(3, dtype=L.int64)
        args = (0, L.tensor([0, 2]), L.tensor([3, -5]))
        out = x.index_add_(*args, alpha=alpha) if inplace else x.index_add(*args, alpha=alpha)
        return out.tolist()

    assert run(taugrad) == run(torch)


@pytest.mark.parametrize("value", [0.5, 2.7, -1.5, 3])
@pytest.mark.parametrize("self_dtype", ["int64", "float32"])
@pytest.mark.parametrize("inplace", [False, True])
def test_addcmul_value_takes_no_part_in_promotion_as_torch(value, self_dtype, inplace):
    """On integer tensors torch casts a float value to an integer first (0.5 scales by 0)."""
    def run(L):
        x = L.tensor([1, 2], dtype=getattr(L, self_dtype))
        t1, t2 = L.tensor([3, 4]), L.tensor([5, -6])
        out = x.addcmul_(t1, t2, value=value) if inplace else L.addcmul(x, t1, t2, value=value)
        return str(out.dtype).split(".")[-1], out.tolist()

    (ours_dtype, ours), (theirs_dtype, theirs) = run(taugrad), run(torch)
    assert ours_dtype == theirs_dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)  # float32 rounding may differ in the last bit


def test_meshgrid_refuses_mixed_dtypes_as_torch():
    with pytest.raises(RuntimeError):
        torch.meshgrid(torch.arange(3), torch.arange(2.0), indexing="ij")
    with pytest.raises(TypeError, match="meshgrid: expects all tensors to have the same dtype"):
        taugrad.meshgrid(taugrad.arange(3), taugrad.arange(2.0), indexing="ij")


@pytest.mark.parametrize("call", [
    lambda L: L.where(L.tensor([[1, 0], [2, 0]])),
    lambda L: L.atleast_2d(L.zeros(()), L.zeros(3)),
    lambda L: L.atleast_3d([L.zeros(3), L.zeros(2, 3)]),
    lambda L: (L.scalar_tensor(3), L.scalar_tensor(2, dtype=L.int64), L.scalar_tensor(True)),
    lambda L: (L.tril_indices(3, 4, 1), L.triu_indices(4, 3, -1), L.tril_indices(0, 3), L.triu_indices(2, 5, -3)),
    lambda L: (L.clone(L.tensor([1, 2])),),
    lambda L: (L.searchsorted(L.tensor([1, 3]), 2), L.searchsorted(L.tensor([1.0, 5, 5]), L.tensor([5.0]), side="right"),
               L.searchsorted(L.tensor([1, 3]), L.tensor([2]), out_int32=True)),
])
def test_small_torch_functions_match_torch(call):
    def run(L):
        out = call(L)
        out = out if isinstance(out, (tuple, list)) else (out,)
        return [(str(t.dtype).split(".")[-1], tuple(t.shape), t.tolist()) for t in out]

    assert run(taugrad) == run(torch)

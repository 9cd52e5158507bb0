"""Margin, embedding and likelihood losses (taugrad.nn.functional.margin_loss) and their nn modules, against torch.

Values and the gradients of every differentiable input in float64 to 1e-10 relative, for each reduction,
with the options' variants; the deprecated size_average/reduce; modules' outputs and reprs; bad input."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import taugrad.functional as F
import taugrad.nn as nn
from taugrad.tensors.core.node import Tensor

from margin_loss_cases import margin_loss_cases

RTOL = 1e-10
REDUCTIONS = ["mean", "sum", "none"]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _signs(rng, *shape):
    return rng.choice([-1.0, 1.0], size=shape)


def _compare(ours_fn, theirs_fn, arrays, grads, rtol=RTOL):
    """Call both with tensors built from ``arrays`` (``grads[i]``: input i requires grad); compare value and grads."""
    ours = [Tensor(a.copy(), requires_grad=g) for a, g in zip(arrays, grads)]
    theirs = [torch.tensor(a.copy(), requires_grad=g) for a, g in zip(arrays, grads)]
    out, ref = ours_fn(*ours), theirs_fn(*theirs)
    assert tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_allclose(out._data, ref.detach().numpy(), rtol=RTOL, atol=0)
    w = _rng(9).normal(size=tuple(ref.shape))
    (out * Tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    checked = 0
    for number, (a, b, g) in enumerate(zip(ours, theirs, grads)):
        if not g:
            continue
        assert b.grad is not None and a.grad is not None, f"input {number}"
        np.testing.assert_allclose(a.grad._data, b.grad.numpy(), rtol=rtol, atol=1e-300, err_msg=f"input {number}")
        checked += 1
    assert checked == sum(grads)


def _both(name, **kwargs):
    """(ours, theirs) callables of the function ``name`` with ``kwargs`` (Tensor-valued kwargs converted)."""
    ours_kw = {k: (Tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    theirs_kw = {k: (torch.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    return (lambda *a: getattr(F, name)(*a, **ours_kw)), (lambda *a: getattr(TF, name)(*a, **theirs_kw))


CASES = margin_loss_cases()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, kwargs, arrays, grads", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_loss_matches_torch(name, kwargs, arrays, grads, reduction):
    ours, theirs = _both(name, reduction=reduction, **kwargs)
    _compare(ours, theirs, arrays, grads)


def test_gaussian_var_clamp_passes_gradient_as_torch():
    """var below eps is clamped to eps for the value, but its gradient is the formula's at eps (not 0)."""
    r = _rng(2)
    var = np.array([1e-9, 0.0, 0.5, 2e-7])
    _compare(*_both("gaussian_nll_loss", eps=1e-6), [r.normal(size=4), r.normal(size=4), var], [True, True, True])


def test_gaussian_float_var_matches_torch():
    r = _rng(3)
    x, y = r.normal(size=(3, 4)), r.normal(size=(3, 4))
    ours = F.gaussian_nll_loss(Tensor(x, requires_grad=True), Tensor(y), 0.7)
    np.testing.assert_allclose(ours._data, TF.gaussian_nll_loss(torch.tensor(x), torch.tensor(y), 0.7).numpy(),
                               rtol=RTOL)


def test_cosine_embedding_zero_vector_matches_torch():
    """PyTorch's 1e-12 on each squared norm: a zero vector gives cosine 0 and a finite gradient.

    That gradient is ~1e5 and divides by sqrt(1e-12 * |b|^2), so rounding order alone moves it ~1e-9 relative:
    rtol 1e-8 here (a wrong eps, e.g. 1e-8 or none, is off by orders of magnitude or nan)."""
    r = _rng(4)
    a = r.normal(size=(3, 4))
    a[1] = 0.0
    _compare(*_both("cosine_embedding_loss"), [a, r.normal(size=(3, 4)), np.array([1.0, 1.0, -1.0])],
             [True, True, False], rtol=1e-8)


def test_poisson_full_target_gradient_at_zero_count_is_zero_not_torchs_nan():
    """torch's masked_fill of log(0) leaves nan in the target's gradient where the count is 0; here it is 0."""
    x = Tensor(np.array([0.3, -0.2, 0.1]), requires_grad=True)
    y = Tensor(np.array([0.0, 1.0, 3.0]), requires_grad=True)
    F.poisson_nll_loss(x, y, full=True, reduction="sum").backward()
    ty = torch.tensor(y._data.copy(), requires_grad=True)
    TF.poisson_nll_loss(torch.tensor(x._data.copy()), ty, full=True, reduction="sum").backward()
    assert np.isnan(ty.grad[0].item())
    np.testing.assert_allclose(y.grad._data, [-0.3, 0.2, ty.grad[2].item()], rtol=RTOL)
    np.testing.assert_allclose(y.grad._data[1:], ty.grad.numpy()[1:], rtol=RTOL)


def test_hinge_embedding_other_targets_get_both_terms():
    r = _rng(5)
    _compare(*_both("hinge_embedding_loss"), [r.normal(size=6), np.array([1.0, -1.0, 0.0, 2.0, 1.0, -1.0])],
             [True, False])


@pytest.mark.parametrize("size_average, reduce", [(None, False), (False, True), (True, None), (False, None)])
def test_deprecated_size_average_and_reduce(size_average, reduce):
    r = _rng(6)
    kw = {"size_average": size_average, "reduce": reduce}
    x, y, t = r.normal(size=5), r.normal(size=5), _signs(r, 5)
    _compare(*_both("margin_ranking_loss", **kw), [x, y, t], [True, True, False])
    _compare(*_both("soft_margin_loss", **kw), [x, t], [True, False])
    _compare(*_both("multi_margin_loss", **kw), [r.normal(size=(4, 3)), np.array([0, 2, 1, 1])], [True, False])
    _compare(*_both("poisson_nll_loss", **kw), [x, np.abs(y)], [True, False])


def _module_cases():
    r = _rng(7)
    n, c = 4, 3
    x = lambda *s: r.normal(size=s)  # noqa: E731
    weight = r.uniform(0.5, 2, size=c)
    return [
        ("MarginRankingLoss", {"margin": 0.2}, [x(n), x(n), _signs(r, n)]),
        ("HingeEmbeddingLoss", {"margin": 0.5}, [x(n, c), _signs(r, n, c)]),
        ("SoftMarginLoss", {}, [x(n, c), _signs(r, n, c)]),
        ("MultiLabelSoftMarginLoss", {"weight": weight}, [x(n, c), r.integers(0, 2, (n, c)).astype(float)]),
        ("CosineEmbeddingLoss", {"margin": 0.1}, [x(n, c), x(n, c), _signs(r, n)]),
        ("PoissonNLLLoss", {"log_input": False, "full": True, "eps": 1e-4},
         [r.uniform(0.5, 2, (n, c)), r.integers(0, 5, (n, c)).astype(float)]),
        ("GaussianNLLLoss", {"full": True, "eps": 1e-3}, [x(n, c), x(n, c), r.uniform(0.1, 1, (n, c))]),
        ("TripletMarginLoss", {"margin": 2.0, "p": 1.0, "swap": True}, [x(n, c), x(n, c), x(n, c)]),
        ("MultiMarginLoss", {"p": 2, "margin": 0.9, "weight": weight}, [x(n, c), r.integers(0, c, n)]),
    ]


MODULES = _module_cases()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, kwargs, arrays", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_torch(name, kwargs, arrays, reduction):
    ours_kw = {k: (Tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    theirs_kw = {k: (torch.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    ours, theirs = getattr(nn, name)(reduction=reduction, **ours_kw), getattr(torch.nn, name)(reduction=reduction,
                                                                                              **theirs_kw)
    assert repr(ours) == repr(theirs)
    grads = [a.dtype.kind == "f" for a in arrays]
    _compare(ours, theirs, arrays, [grads[0]] + [False] * (len(arrays) - 1))


@pytest.mark.parametrize("name", [m[0] for m in MODULES])
def test_module_repr_and_defaults_match_torch(name):
    ours, theirs = getattr(nn, name)(), getattr(torch.nn, name)()
    assert repr(ours) == repr(theirs)
    for attribute in ("margin", "p", "eps", "swap", "full", "log_input", "reduction"):
        if hasattr(theirs, attribute):
            assert getattr(ours, attribute) == getattr(theirs, attribute), attribute


def test_weighted_modules_keep_weight_as_buffer():
    w = np.array([1.0, 2.0, 3.0])
    for name in ("MultiLabelSoftMarginLoss", "MultiMarginLoss"):
        assert set(getattr(nn, name)(weight=Tensor(w)).state_dict()) == set(
            getattr(torch.nn, name)(weight=torch.tensor(w)).state_dict())


@pytest.mark.parametrize("call, error, words", [
    (lambda: F.margin_ranking_loss(Tensor(np.ones(3)), Tensor(np.ones((3, 1))), Tensor(np.ones(3))),
     ValueError, "margin_ranking_loss"),
    (lambda: F.hinge_embedding_loss(Tensor(np.array([1, 2])), Tensor(np.ones(2))), TypeError, "hinge_embedding_loss"),
    (lambda: F.soft_margin_loss(Tensor(np.ones(3)), Tensor(np.ones(4))), ValueError, "soft_margin_loss"),
    (lambda: F.multilabel_soft_margin_loss(Tensor(np.ones((2, 3))), Tensor(np.ones((2, 4)))), ValueError,
     "multilabel_soft_margin_loss"),
    (lambda: F.cosine_embedding_loss(Tensor(np.ones((2, 3))), Tensor(np.ones((2, 3))), Tensor(np.ones((2, 1)))),
     ValueError, "cosine_embedding_loss"),
    (lambda: F.poisson_nll_loss(Tensor(np.ones(3)), Tensor(np.ones(3)), reduction="avg"), ValueError,
     "poisson_nll_loss"),
    (lambda: F.gaussian_nll_loss(Tensor(np.ones((2, 3))), Tensor(np.ones((2, 3))), Tensor(np.ones((3, 2)))),
     ValueError, "gaussian_nll_loss"),
    (lambda: F.gaussian_nll_loss(Tensor(np.ones(3)), Tensor(np.ones(3)), Tensor(-np.ones(3))), ValueError,
     "gaussian_nll_loss"),
    (lambda: F.triplet_margin_loss(Tensor(np.ones((2, 3))), Tensor(np.ones(3)), Tensor(np.ones(3))), ValueError,
     "triplet_margin_loss"),
    (lambda: F.triplet_margin_loss(Tensor(np.ones(3)), Tensor(np.ones(3)), Tensor(np.ones(3)), margin=0), ValueError,
     "triplet_margin_loss"),
    (lambda: F.multi_margin_loss(Tensor(np.ones((2, 3))), Tensor(np.array([0, 3]))), ValueError, "multi_margin_loss"),
    (lambda: F.multi_margin_loss(Tensor(np.ones((2, 3))), Tensor(np.array([0.0, 1.0]))), TypeError,
     "multi_margin_loss"),
    (lambda: F.multi_margin_loss(Tensor(np.ones((2, 3))), Tensor(np.array([0, 1])), p=3), ValueError,
     "multi_margin_loss"),
])
def test_bad_input_is_a_one_line_error_naming_the_function(call, error, words):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert words in message and "\n" not in message

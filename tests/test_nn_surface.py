"""The torch.nn surface real code uses, against torch: losses, activations, containers, Module methods,
printing, init, nn.utils, attention.  Values and gradients in float64 to 1e-10 relative."""
import math

import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn as nn
import taugrad.nn.functional as F
from taugrad.tensors.core.node import Tensor

RTOL = 1e-10


def _pair(array, grad=True):
    return Tensor(array.copy(), requires_grad=grad), torch.tensor(array.copy(), requires_grad=grad)


def _check(ours, theirs, inputs):
    """Same value, and the same gradients of sum(out * w) for each input pair."""
    np.testing.assert_allclose(ours._data, theirs.detach().numpy(), rtol=RTOL, atol=1e-12)
    w = np.random.default_rng(9).normal(size=theirs.shape)
    (ours * Tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    for number, (a, b) in enumerate(inputs):
        if b.grad is None:
            assert a.grad is None or not np.any(a.grad._data), f"input {number}"
            continue
        np.testing.assert_allclose(a.grad._data, b.grad.numpy(), rtol=RTOL, atol=1e-12, err_msg=f"input {number}")


RNG = np.random.default_rng(0)
X = RNG.normal(size=(6, 5)) * 2
Y = RNG.normal(size=(6, 5))
P = 1 / (1 + np.exp(-RNG.normal(size=(6, 5))))
Q = RNG.uniform(size=(6, 5))
REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, ours, theirs, a, b", [
    ("MSELoss", lambda r: nn.MSELoss(reduction=r), lambda r: torch.nn.MSELoss(reduction=r), X, Y),
    ("L1Loss", lambda r: nn.L1Loss(reduction=r), lambda r: torch.nn.L1Loss(reduction=r), X, Y),
    ("SmoothL1Loss", lambda r: nn.SmoothL1Loss(reduction=r, beta=0.7),
     lambda r: torch.nn.SmoothL1Loss(reduction=r, beta=0.7), X, Y),
    ("SmoothL1Loss-0", lambda r: nn.SmoothL1Loss(reduction=r, beta=0.0),
     lambda r: torch.nn.SmoothL1Loss(reduction=r, beta=0.0), X, Y),
    ("HuberLoss", lambda r: nn.HuberLoss(reduction=r, delta=1.5), lambda r: torch.nn.HuberLoss(reduction=r, delta=1.5),
     X, Y),
    ("BCELoss", lambda r: nn.BCELoss(reduction=r), lambda r: torch.nn.BCELoss(reduction=r), P, Q),
    ("BCELoss-weight", lambda r: nn.BCELoss(weight=np.arange(1.0, 6.0), reduction=r),
     lambda r: torch.nn.BCELoss(weight=torch.arange(1.0, 6.0, dtype=torch.float64), reduction=r), P, Q),
    ("BCEWithLogitsLoss", lambda r: nn.BCEWithLogitsLoss(reduction=r), lambda r: torch.nn.BCEWithLogitsLoss(reduction=r),
     X, Q),
    ("BCEWithLogitsLoss-pos", lambda r: nn.BCEWithLogitsLoss(reduction=r, pos_weight=np.linspace(0.5, 3, 5),
                                                             weight=np.linspace(1, 2, 5)),
     lambda r: torch.nn.BCEWithLogitsLoss(reduction=r, pos_weight=torch.linspace(0.5, 3, 5, dtype=torch.float64),
                                          weight=torch.linspace(1, 2, 5, dtype=torch.float64)), X, Q),
    ("KLDivLoss", lambda r: nn.KLDivLoss(reduction=r), lambda r: torch.nn.KLDivLoss(reduction=r),
     np.log(Q), P),
    ("KLDivLoss-log", lambda r: nn.KLDivLoss(reduction=r, log_target=True),
     lambda r: torch.nn.KLDivLoss(reduction=r, log_target=True), np.log(Q), np.log(P)),
])
def test_loss_modules_match_torch(name, ours, theirs, a, b, reduction):
    x, tx = _pair(a)
    y, ty = _pair(b)
    _check(ours(reduction)(x, y), theirs(reduction)(tx, ty), [(x, tx), (y, ty)])


def test_kl_div_batchmean_matches_torch():
    x, tx = _pair(np.log(Q))
    y, ty = _pair(P)
    _check(F.kl_div(x, y, reduction="batchmean"), torch.nn.functional.kl_div(tx, ty, reduction="batchmean"),
           [(x, tx), (y, ty)])


def test_kl_div_with_zero_targets_matches_torch():
    """Zero targets contribute 0 (y log y -> 0), with the input's gradient -y = 0 there."""
    x, tx = _pair(np.log(Q))
    y = np.where(P > 0.5, P, 0.0)
    _check(F.kl_div(x, y, reduction="sum"), torch.nn.functional.kl_div(tx, torch.tensor(y), reduction="sum"), [(x, tx)])


def test_binary_cross_entropy_rejects_probabilities_outside_0_1():
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(Tensor(np.array([0.5, 1.5])), Tensor(np.array([0.0, 1.0])))


LOGITS = RNG.normal(size=(7, 4)) * 3
TARGETS = np.array([0, 3, 1, 1, 2, 0, 3])
WEIGHT = np.array([0.5, 2.0, 1.0, 3.0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(weight=WEIGHT),
    dict(ignore_index=1),
    dict(ignore_index=-100, targets=np.array([0, -100, 1, 1, -100, 0, 3])),
    dict(label_smoothing=0.2),
    dict(weight=WEIGHT, ignore_index=3, label_smoothing=0.1),
], ids=["plain", "weight", "ignore", "ignore-default", "smoothing", "all"])
def test_cross_entropy_options_match_torch(kwargs, reduction):
    kwargs = dict(kwargs)
    targets = kwargs.pop("targets", TARGETS)
    x, tx = _pair(LOGITS)
    ours_kwargs = dict(kwargs, reduction=reduction)
    theirs_kwargs = dict(kwargs, reduction=reduction)
    if "weight" in kwargs:
        theirs_kwargs["weight"] = torch.tensor(kwargs["weight"])
    _check(nn.CrossEntropyLoss(**ours_kwargs)(x, targets),
           torch.nn.CrossEntropyLoss(**theirs_kwargs)(tx, torch.tensor(targets)), [(x, tx)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing, weighted", [(0.0, False), (0.3, False), (0.0, True), (0.25, True)])
def test_cross_entropy_with_probability_targets_matches_torch(reduction, smoothing, weighted):
    x, tx = _pair(LOGITS)
    p = np.exp(RNG.normal(size=LOGITS.shape))
    y, ty = _pair(p / p.sum(axis=1, keepdims=True))
    weight = (WEIGHT, torch.tensor(WEIGHT)) if weighted else (None, None)
    _check(F.cross_entropy(x, y, weight=weight[0], reduction=reduction, label_smoothing=smoothing),
           torch.nn.functional.cross_entropy(tx, ty, weight=weight[1], reduction=reduction, label_smoothing=smoothing),
           [(x, tx), (y, ty)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_spatial_with_weight_and_ignore_matches_torch(reduction):
    logits = RNG.normal(size=(2, 4, 3, 2))
    targets = RNG.integers(0, 4, size=(2, 3, 2))
    targets[0, 1, 1] = 2
    x, tx = _pair(logits)
    _check(F.cross_entropy(x, targets, weight=WEIGHT, ignore_index=2, reduction=reduction),
           torch.nn.functional.cross_entropy(tx, torch.tensor(targets), weight=torch.tensor(WEIGHT), ignore_index=2,
                                             reduction=reduction), [(x, tx)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_with_weight_and_ignore_index_matches_torch(reduction):
    x, tx = _pair(LOGITS)
    _check(nn.NLLLoss(weight=WEIGHT, ignore_index=0, reduction=reduction)(F.log_softmax(x, dim=1), TARGETS),
           torch.nn.NLLLoss(weight=torch.tensor(WEIGHT), ignore_index=0, reduction=reduction)(
               torch.log_softmax(tx, dim=1), torch.tensor(TARGETS)), [(x, tx)])


@pytest.mark.parametrize("kwargs", [dict(), dict(weight=WEIGHT), dict(label_smoothing=0.2)], ids=["plain", "weight",
                                                                                                   "smoothing"])
def test_cross_entropy_with_every_target_ignored_is_nan_with_zero_gradient_as_torch(kwargs):
    x, tx = _pair(LOGITS)
    ours = F.cross_entropy(x, np.full(7, -100), **kwargs)
    theirs_kwargs = dict(kwargs, weight=torch.tensor(kwargs["weight"])) if "weight" in kwargs else kwargs
    theirs = torch.nn.functional.cross_entropy(tx, torch.full((7,), -100), **theirs_kwargs)
    assert math.isnan(float(ours._data)) and math.isnan(theirs.item())
    ours.backward()
    theirs.backward()
    np.testing.assert_array_equal(x.grad._data, tx.grad.numpy())


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [dict(), dict(weight=WEIGHT), dict(label_smoothing=0.2)], ids=["plain", "weight",
                                                                                                   "smoothing"])
def test_an_ignored_row_with_a_masked_logit_counts_nowhere_as_torch(kwargs, reduction):
    """A row whose target is ignored adds 0 even where its logits hold -inf (a mask), not -inf * 0 = nan."""
    logits = LOGITS.copy()
    logits[1, 0] = logits[4, 2] = -np.inf
    targets = np.array([0, -100, 1, 1, -100, 0, 3])
    x, tx = _pair(logits)
    theirs_kwargs = dict(kwargs, weight=torch.tensor(kwargs["weight"])) if "weight" in kwargs else kwargs
    _check(F.cross_entropy(x, targets, reduction=reduction, **kwargs),
           torch.nn.functional.cross_entropy(tx, torch.tensor(targets), reduction=reduction, **theirs_kwargs),
           [(x, tx)])


@pytest.mark.parametrize("make", [lambda x: F.rrelu(x, 0.1, 0.3, training=True),
                                  lambda x: nn.RReLU(0.1, 0.3)(x)], ids=["functional", "module-training"])
def test_rrelu_in_training_draws_a_slope_per_element_in_its_bounds_and_differentiates_by_it(make):
    """As torch: x where x > 0, else a x with a ~ U(lower, upper), and the gradient there is that a."""
    rng = np.random.default_rng(12)
    data = rng.normal(size=(200, 5))
    data[0, :2] = 0.0  # at 0 torch takes the random slope's side
    x = Tensor(data, requires_grad=True)
    out = make(x)
    out.sum().backward()
    negative = data <= 0
    np.testing.assert_array_equal(out._data[~negative], data[~negative])
    np.testing.assert_array_equal(x.grad._data[~negative], 1.0)
    slopes = x.grad._data[negative]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.04  # spread over the interval
    np.testing.assert_allclose(out._data[negative], data[negative] * slopes, rtol=1e-15)
    theirs = torch.nn.functional.rrelu(torch.tensor(data), 0.1, 0.3, training=True).numpy()
    np.testing.assert_array_equal(theirs[~negative], data[~negative])
    assert np.all((theirs[negative & (data < 0)] >= 0.3 * data[negative & (data < 0)]))


def test_cross_entropy_plain_case_stays_one_fused_node():
    x = Tensor(LOGITS, requires_grad=True)
    loss = F.cross_entropy(x, TARGETS)
    assert loss._prev == (x,)  # one node straight on the logits


ACTIVATIONS = [
    ("SiLU", lambda m: m.SiLU()),
    ("LeakyReLU", lambda m: m.LeakyReLU(0.2)),
    ("ELU", lambda m: m.ELU(alpha=0.7)),
    ("Softplus", lambda m: m.Softplus()),
    ("Softplus-beta", lambda m: m.Softplus(beta=2.0, threshold=3.0)),
    ("Hardtanh", lambda m: m.Hardtanh(-0.5, 1.5)),
    ("ReLU6", lambda m: m.ReLU6()),
    ("Softsign", lambda m: m.Softsign()),
    ("LogSigmoid", lambda m: m.LogSigmoid()),
    ("Softmax", lambda m: m.Softmax(dim=0)),
    ("LogSoftmax", lambda m: m.LogSoftmax(dim=1)),
    ("Tanh", lambda m: m.Tanh()),
    ("Sigmoid", lambda m: m.Sigmoid()),
    ("ReLU", lambda m: m.ReLU()),
    ("Identity", lambda m: m.Identity()),
    ("SELU", lambda m: m.SELU()),
    ("CELU", lambda m: m.CELU(alpha=0.6)),
    ("Mish", lambda m: m.Mish()),
    ("Hardswish", lambda m: m.Hardswish()),
    ("Hardsigmoid", lambda m: m.Hardsigmoid()),
    ("GLU", lambda m: m.GLU()),
    ("GLU-0", lambda m: m.GLU(dim=0)),
    ("Softmin", lambda m: m.Softmin(dim=1)),
    ("Threshold", lambda m: m.Threshold(1.5, -2.0)),
    ("Softshrink", lambda m: m.Softshrink()),
    ("Softshrink-3", lambda m: m.Softshrink(3.0)),
    ("Hardshrink", lambda m: m.Hardshrink(1.0)),
    ("Tanhshrink", lambda m: m.Tanhshrink()),
    ("RReLU-eval", lambda m: m.RReLU(0.1, 0.3).eval()),
]
# kinks and branch points included: 0, the hardtanh bounds, the softplus threshold, big values
SPECIAL = np.array([-800.0, -40.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 1.7, 3.0, 6.0, 40.0, 800.0])


@pytest.mark.parametrize("name, make", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_modules_match_torch_values_and_gradients(name, make):
    data = np.concatenate([X.ravel(), SPECIAL]).reshape(-1, 2)
    x, tx = _pair(data)
    ours = make(nn)(x)
    _check(ours, make(torch.nn)(tx), [(x, tx)])
    assert repr(make(nn)) == repr(make(torch.nn))


@pytest.mark.parametrize("name, ours, theirs", [
    ("normalize", lambda x: F.normalize(x, dim=1), lambda x: torch.nn.functional.normalize(x, dim=1)),
    ("normalize-p1", lambda x: F.normalize(x, p=1, dim=0), lambda x: torch.nn.functional.normalize(x, p=1, dim=0)),
    ("layer_norm", lambda x: F.layer_norm(x, (5,)), lambda x: torch.nn.functional.layer_norm(x, (5,))),
    ("silu", F.silu, torch.nn.functional.silu),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.1), lambda x: torch.nn.functional.leaky_relu(x, 0.1)),
    ("pad", lambda x: F.pad(x, (1, 2, 0, 1)), lambda x: torch.nn.functional.pad(x, (1, 2, 0, 1))),
    ("selu", F.selu, torch.nn.functional.selu),
    ("celu", F.celu, torch.nn.functional.celu),
    ("celu-alpha", lambda x: F.celu(x, alpha=2.5), lambda x: torch.nn.functional.celu(x, alpha=2.5)),
    ("celu-negative-alpha", lambda x: F.celu(x, -0.7), lambda x: torch.nn.functional.celu(x, -0.7)),
    ("mish", F.mish, torch.nn.functional.mish),
    ("hardswish", F.hardswish, torch.nn.functional.hardswish),
    ("hardsigmoid", F.hardsigmoid, torch.nn.functional.hardsigmoid),
    ("glu", lambda x: F.glu(x[:, 1:]), lambda x: torch.nn.functional.glu(x[:, 1:])),
    ("glu-dim0", lambda x: F.glu(x, 0), lambda x: torch.nn.functional.glu(x, 0)),
    ("glu-dim-2", lambda x: F.glu(x, dim=-2), lambda x: torch.nn.functional.glu(x, dim=-2)),
    ("softmin", lambda x: F.softmin(x, dim=1), lambda x: torch.nn.functional.softmin(x, dim=1)),
    ("softmin-0", lambda x: F.softmin(x, 0), lambda x: torch.nn.functional.softmin(x, 0)),
    ("softmin-legacy", F.softmin, torch.nn.functional.softmin),  # no dim: 1 for a 2-d input
    ("softmin-dtype", lambda x: F.softmin(x.float(), -1, dtype=taugrad.float64),
     lambda x: torch.nn.functional.softmin(x.float(), -1, dtype=torch.float64)),
    ("threshold", lambda x: F.threshold(x, 0.3, -1.5), lambda x: torch.nn.functional.threshold(x, 0.3, -1.5)),
    ("threshold-kw", lambda x: F.threshold(x, threshold=-1.0, value=4.0),
     lambda x: torch.nn.functional.threshold(x, threshold=-1.0, value=4.0)),
    ("softshrink", F.softshrink, torch.nn.functional.softshrink),
    ("softshrink-lambd", lambda x: F.softshrink(x, lambd=1.7), lambda x: torch.nn.functional.softshrink(x, lambd=1.7)),
    ("softshrink-0", lambda x: F.softshrink(x, 0.0), lambda x: torch.nn.functional.softshrink(x, 0.0)),
    ("hardshrink", F.hardshrink, torch.nn.functional.hardshrink),
    ("hardshrink-lambd", lambda x: F.hardshrink(x, lambd=1.7), lambda x: torch.nn.functional.hardshrink(x, lambd=1.7)),
    ("hardshrink-negative", lambda x: F.hardshrink(x, -1.0), lambda x: torch.nn.functional.hardshrink(x, -1.0)),
    ("tanhshrink", F.tanhshrink, torch.nn.functional.tanhshrink),
    ("rrelu", F.rrelu, torch.nn.functional.rrelu),
    ("rrelu-bounds", lambda x: F.rrelu(x, 0.2, 0.6, training=False),
     lambda x: torch.nn.functional.rrelu(x, 0.2, 0.6, training=False)),
])
def test_functional_forms_match_torch(name, ours, theirs):
    x, tx = _pair(X)
    _check(ours(x), theirs(tx), [(x, tx)])


#: each new activation's kinks and branch points exactly: 0, +-lambd (0.5 and 1.2), +-3, the thresholds, overflow
KINKS = np.array([-800.0, -40.0, -3.5, -3.0, -2.5, -1.2, -1.0, -0.7, -0.5, -0.25, 0.0, 0.25, 0.5, 0.7, 1.0, 1.2,
                  2.5, 3.0, 3.5, 40.0, 800.0])


@pytest.mark.parametrize("name, ours, theirs", [
    ("selu", F.selu, torch.nn.functional.selu),
    ("celu", lambda x: F.celu(x, 0.5), lambda x: torch.nn.functional.celu(x, 0.5)),
    ("mish", F.mish, torch.nn.functional.mish),
    ("hardswish", F.hardswish, torch.nn.functional.hardswish),
    ("hardsigmoid", F.hardsigmoid, torch.nn.functional.hardsigmoid),
    ("threshold", lambda x: F.threshold(x, 0.7, -2.0), lambda x: torch.nn.functional.threshold(x, 0.7, -2.0)),
    ("threshold-0", lambda x: F.threshold(x, 0.0, 0.5), lambda x: torch.nn.functional.threshold(x, 0.0, 0.5)),
    ("softshrink", F.softshrink, torch.nn.functional.softshrink),
    ("softshrink-1.2", lambda x: F.softshrink(x, 1.2), lambda x: torch.nn.functional.softshrink(x, 1.2)),
    ("softshrink-0", lambda x: F.softshrink(x, 0.0), lambda x: torch.nn.functional.softshrink(x, 0.0)),
    ("hardshrink", F.hardshrink, torch.nn.functional.hardshrink),
    ("hardshrink-1.2", lambda x: F.hardshrink(x, 1.2), lambda x: torch.nn.functional.hardshrink(x, 1.2)),
    ("hardshrink-0", lambda x: F.hardshrink(x, 0.0), lambda x: torch.nn.functional.hardshrink(x, 0.0)),
    ("tanhshrink", F.tanhshrink, torch.nn.functional.tanhshrink),
    ("rrelu", F.rrelu, torch.nn.functional.rrelu),
])
def test_new_activations_at_their_kinks_match_torch(name, ours, theirs):
    """Value and gradient exactly at each kink follow PyTorch's side (hardswish: 0 at -3, 1 at 3; softshrink and
    hardshrink: 0 at +-lambd; threshold: 0 at the threshold; selu/celu/rrelu: the negative side at 0)."""
    x, tx = _pair(KINKS)
    _check(ours(x), theirs(tx), [(x, tx)])


def test_hardsigmoid_gradient_is_torchs_float32_sixth():
    """PyTorch's hardsigmoid backward uses 1/6 rounded to float32 even in float64; the value is the exact (x+3)/6."""
    x = Tensor(np.array([-1.0, 0.5, 2.0]), requires_grad=True)
    y = F.hardsigmoid(x)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad._data, np.full(3, float(np.float32(1 / 6))))
    np.testing.assert_array_equal(y._data, (x._data + 3) / 6)


def _hessian_vector(lib_grad, xs, fn, r, v):
    out = fn(*xs)
    (g,) = lib_grad((out * r).sum(), xs[:1], create_graph=True)
    phi = (g * v).sum()
    if not phi.requires_grad:  # the gradient is constant in x (piecewise linear): H v = 0
        return np.zeros(v.shape)
    (hv,) = lib_grad(phi, xs[:1])
    return hv.detach().numpy()


@pytest.mark.parametrize("name, ours, theirs, shapes", [
    ("selu", F.selu, torch.nn.functional.selu, [(4, 6)]),
    ("celu", lambda x: F.celu(x, 0.7), lambda x: torch.nn.functional.celu(x, 0.7), [(4, 6)]),
    ("mish", F.mish, torch.nn.functional.mish, [(4, 6)]),
    ("hardswish", F.hardswish, torch.nn.functional.hardswish, [(4, 6)]),
    ("glu", lambda x: F.glu(x, 0), lambda x: torch.nn.functional.glu(x, 0), [(4, 6)]),
    ("softmin", lambda x: F.softmin(x, 1), lambda x: torch.nn.functional.softmin(x, 1), [(4, 6)]),
    ("softshrink", F.softshrink, torch.nn.functional.softshrink, [(4, 6)]),
    ("tanhshrink", F.tanhshrink, torch.nn.functional.tanhshrink, [(4, 6)]),
    ("cosine_similarity", F.cosine_similarity, torch.nn.functional.cosine_similarity, [(4, 6), (4, 6)]),
    ("pairwise_distance", F.pairwise_distance, torch.nn.functional.pairwise_distance, [(4, 6), (6,)]),
    ("pairwise_distance-p3", lambda a, b: F.pairwise_distance(a, b, 3.0),
     lambda a, b: torch.nn.functional.pairwise_distance(a, b, 3.0), [(4, 6), (4, 6)]),
])
def test_second_derivatives_of_new_functions_match_torch(name, ours, theirs, shapes):
    """Hessian-vector products (double backward) against torch's, away from kinks."""
    rng = np.random.default_rng(5)
    arrays = [rng.normal(size=s) * 1.5 for s in shapes]
    arrays[0] = np.where(np.abs(np.abs(arrays[0]) - 0.5) < 0.05, 0.8, arrays[0])  # off softshrink's kinks
    r = rng.normal(size=np.shape(theirs(*[torch.tensor(a) for a in arrays])))
    v = rng.normal(size=shapes[0])
    ours_hv = _hessian_vector(taugrad.grad, [Tensor(a, requires_grad=True) for a in arrays], ours, Tensor(r), Tensor(v))
    theirs_hv = _hessian_vector(torch.autograd.grad, [torch.tensor(a, requires_grad=True) for a in arrays], theirs,
                                torch.tensor(r), torch.tensor(v))
    np.testing.assert_allclose(ours_hv, theirs_hv, rtol=1e-9, atol=1e-12)


#: pairs of shapes, broadcasting included, and near-zero vectors (whose norm is below eps)
DISTANCE_INPUTS = [
    ("same", RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5))),
    ("broadcast-row", RNG.normal(size=(4, 5)), RNG.normal(size=(1, 5))),
    ("broadcast-vector", RNG.normal(size=(3, 4, 5)), RNG.normal(size=(5,))),
    ("broadcast-both", RNG.normal(size=(3, 1, 5)), RNG.normal(size=(4, 1))),
    ("near-zero", np.array([[1e-9, 2e-9, 0.0], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [3e-3, -4e-3, 1e-3]]),
     np.array([[1.0, 2.0, 3.0], [1e-9, 0.0, 0.0], [1.0, 1.0, 1.0], [1e-3, 1e-3, -2e-3]])),
    ("equal", np.arange(12.0).reshape(4, 3), np.arange(12.0).reshape(4, 3)),
]


@pytest.mark.parametrize("kwargs", [dict(), dict(dim=-1), dict(dim=0), dict(eps=1e-2), dict(dim=-1, eps=0.05)],
                         ids=["plain", "last", "first", "eps", "last-eps"])
@pytest.mark.parametrize("name, a, b", DISTANCE_INPUTS, ids=[d[0] for d in DISTANCE_INPUTS])
def test_cosine_similarity_matches_torch(name, a, b, kwargs):
    x1, t1 = _pair(a)
    x2, t2 = _pair(b)
    _check(F.cosine_similarity(x1, x2, **kwargs), torch.nn.functional.cosine_similarity(t1, t2, **kwargs),
           [(x1, t1), (x2, t2)])


@pytest.mark.parametrize("kwargs", [dict(), dict(p=1.0), dict(p=3.0, keepdim=True), dict(p=float("inf")),
                                    dict(p=0.5, eps=1e-3), dict(eps=0.0), dict(p=-1.0)],
                         ids=["plain", "p1", "p3-keepdim", "inf", "p0.5", "eps0", "p-1"])
@pytest.mark.parametrize("name, a, b", DISTANCE_INPUTS, ids=[d[0] for d in DISTANCE_INPUTS])
def test_pairwise_distance_matches_torch(name, a, b, kwargs):
    x1, t1 = _pair(a)
    x2, t2 = _pair(b)
    _check(F.pairwise_distance(x1, x2, **kwargs), torch.nn.functional.pairwise_distance(t1, t2, **kwargs),
           [(x1, t1), (x2, t2)])


@pytest.mark.parametrize("make", [
    lambda m: m.SELU(), lambda m: m.SELU(inplace=True), lambda m: m.CELU(), lambda m: m.CELU(0.5, True),
    lambda m: m.Mish(), lambda m: m.Mish(True), lambda m: m.Hardswish(), lambda m: m.Hardswish(True),
    lambda m: m.Hardsigmoid(), lambda m: m.Hardsigmoid(inplace=True), lambda m: m.GLU(), lambda m: m.GLU(0),
    lambda m: m.Softmin(), lambda m: m.Softmin(-1), lambda m: m.Threshold(0.1, 20),
    lambda m: m.Threshold(0.1, 20.0, True), lambda m: m.Softshrink(), lambda m: m.Softshrink(1),
    lambda m: m.Hardshrink(), lambda m: m.Hardshrink(lambd=0.3), lambda m: m.Tanhshrink(), lambda m: m.RReLU(),
    lambda m: m.RReLU(0.1, 0.3, True), lambda m: m.CosineSimilarity(), lambda m: m.CosineSimilarity(0, 1e-3),
    lambda m: m.PairwiseDistance(), lambda m: m.PairwiseDistance(3, 0.1, True),
])
def test_new_module_reprs_match_torch(make):
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    assert repr(nn.Sequential(ours)) == repr(torch.nn.Sequential(theirs))
    for name in ("inplace", "alpha", "dim", "threshold", "value", "lambd", "lower", "upper", "eps", "norm", "keepdim"):
        assert getattr(ours, name, None) == getattr(theirs, name, None), name


@pytest.mark.parametrize("make, a, b", [
    (lambda m: m.CosineSimilarity(), DISTANCE_INPUTS[3][1], DISTANCE_INPUTS[3][2]),
    (lambda m: m.CosineSimilarity(dim=-1, eps=0.01), DISTANCE_INPUTS[4][1], DISTANCE_INPUTS[4][2]),
    (lambda m: m.PairwiseDistance(), DISTANCE_INPUTS[1][1], DISTANCE_INPUTS[1][2]),
    (lambda m: m.PairwiseDistance(1.5, 1e-3, True), DISTANCE_INPUTS[2][1], DISTANCE_INPUTS[2][2]),
])
def test_distance_modules_match_torch(make, a, b):
    x1, t1 = _pair(a)
    x2, t2 = _pair(b)
    _check(make(nn)(x1, x2), make(torch.nn)(t1, t2), [(x1, t1), (x2, t2)])


def test_softmin_module_without_dim_uses_torchs_legacy_choice():
    for shape in [(5,), (3, 4), (2, 3, 4), (2, 2, 3, 2)]:
        data = RNG.normal(size=shape)
        np.testing.assert_allclose(nn.Softmin()(Tensor(data))._data,
                                   torch.nn.Softmin()(torch.tensor(data)).numpy(), rtol=RTOL)


def test_new_functions_reject_bad_input_in_one_line():
    ints = Tensor(np.array([1, 2, 3, 4]))
    for name in ("selu", "celu", "mish", "hardswish", "hardsigmoid", "glu", "softmin", "softshrink", "hardshrink",
                 "tanhshrink", "rrelu"):
        with pytest.raises(TypeError, match=f"^{name}: needs a floating tensor"):
            getattr(F, name)(ints)
    with pytest.raises(TypeError, match="^threshold: needs a floating tensor"):
        F.threshold(ints, 1, 0)
    for name in ("cosine_similarity", "pairwise_distance"):
        with pytest.raises(TypeError, match=f"^{name}: needs a floating tensor"):
            getattr(F, name)(ints, ints)
        with pytest.raises(ValueError, match=rf"^{name}: shapes \(2, 3\) and \(2, 4\) cannot broadcast"):
            getattr(F, name)(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(IndexError, match="^cosine_similarity: dim 1 out of range"):
        F.cosine_similarity(np.ones(3), np.ones(3))  # the default dim=1 on vectors, as torch
    with pytest.raises(ValueError, match="^glu: .*dimension -1 has size 5"):
        F.glu(X)
    with pytest.raises(ValueError, match="^glu: a 0-d tensor"):
        F.glu(Tensor(np.array(1.0)))
    with pytest.raises(ZeroDivisionError, match="^celu: alpha cannot be 0"):
        F.celu(X, alpha=0.0)
    with pytest.raises(ValueError, match="^softshrink: lambd must be non-negative"):
        F.softshrink(X, -0.5)
    # torch refuses the same inputs
    with pytest.raises(RuntimeError):
        torch.nn.functional.glu(torch.tensor(X))
    with pytest.raises(RuntimeError):
        torch.nn.functional.celu(torch.tensor(X), alpha=0.0)
    with pytest.raises(RuntimeError):
        torch.nn.functional.softshrink(torch.tensor(X), -0.5)
    with pytest.raises(IndexError):
        torch.nn.functional.cosine_similarity(torch.ones(3), torch.ones(3))


def test_embedding_and_one_hot_match_torch():
    w, tw = _pair(RNG.normal(size=(6, 3)))
    idx = np.array([[0, 5, 2], [2, 2, 4]])
    _check(F.embedding(idx, w, padding_idx=2), torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=2),
           [(w, tw)])
    np.testing.assert_array_equal(F.one_hot(idx, 6)._data, torch.nn.functional.one_hot(torch.tensor(idx), 6).numpy())


def _sdpa_inputs(L=4, S=5, E=3):
    return [_pair(RNG.normal(size=(2, 2, n, E))) for n in (L, S, S)]


@pytest.mark.parametrize("kwargs", [dict(), dict(is_causal=True), dict(scale=0.3), dict(mask="bool"),
                                    dict(mask="float")])
def test_scaled_dot_product_attention_matches_torch(kwargs):
    kwargs = dict(kwargs)
    (q, tq), (k, tk), (v, tv) = _sdpa_inputs(4, 4 if kwargs.get("is_causal") else 5)
    mask = kwargs.pop("mask", None)
    ours_kwargs, theirs_kwargs = dict(kwargs), dict(kwargs)
    if mask == "bool":
        m = RNG.uniform(size=(4, 5)) > 0.3
        m[:, 0] = True
        ours_kwargs["attn_mask"], theirs_kwargs["attn_mask"] = m, torch.tensor(m)
    elif mask == "float":
        m = RNG.normal(size=(2, 1, 4, 5))
        ours_kwargs["attn_mask"], theirs_kwargs["attn_mask"] = Tensor(m), torch.tensor(m)
    _check(F.scaled_dot_product_attention(q, k, v, **ours_kwargs),
           torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **theirs_kwargs),
           [(q, tq), (k, tk), (v, tv)])


@pytest.mark.parametrize("heads", [(8, 2, 2), (4, 4, 1), (6, 3, 3), (4, 4, 4)], ids=str)
@pytest.mark.parametrize("is_causal", [False, True])
def test_grouped_query_attention_matches_torch(heads, is_causal):
    """enable_gqa: key/value heads each shared by a group of consecutive query heads."""
    hq, hk, hv = heads
    (q, tq), (k, tk), (v, tv) = (_pair(RNG.normal(size=(2, h, 5, n))) for h, n in ((hq, 4), (hk, 4), (hv, 3)))
    _check(F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=True),
           torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=is_causal, enable_gqa=True),
           [(q, tq), (k, tk), (v, tv)])


def test_grouped_query_attention_refuses_heads_that_do_not_divide():
    q, k = Tensor(np.ones((1, 6, 2, 4))), Tensor(np.ones((1, 4, 2, 4)))
    with pytest.raises(ValueError, match=r"the 4 heads of key must divide the query's 6 heads \(enable_gqa\)"):
        F.scaled_dot_product_attention(q, k, k, enable_gqa=True)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", [None, "padding", "causal", "float"])
def test_multihead_attention_loads_torch_weights_and_matches(batch_first, masks):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first).double()
    ours = nn.MultiheadAttention(8, 2, batch_first=batch_first, dtype=np.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.load_state_dict(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    shape = (3, 4, 8) if batch_first else (4, 3, 8)
    (q, tq), (k, tk) = _pair(RNG.normal(size=shape)), _pair(RNG.normal(size=shape))
    kwargs_ours, kwargs_theirs = {}, {}
    if masks == "padding":
        pad = np.zeros((3, 4), bool)
        pad[1, 2:] = True
        kwargs_ours["key_padding_mask"], kwargs_theirs["key_padding_mask"] = pad, torch.tensor(pad)
    elif masks == "causal":
        causal = np.triu(np.ones((4, 4), bool), 1)
        kwargs_ours.update(attn_mask=causal, is_causal=True)
        kwargs_theirs.update(attn_mask=torch.tensor(causal), is_causal=True)
    elif masks == "float":
        m = RNG.normal(size=(6, 4, 4))
        kwargs_ours["attn_mask"], kwargs_theirs["attn_mask"] = m, torch.tensor(m)
    out, weights = ours(q, k, k, **kwargs_ours)
    tout, tweights = theirs(tq, tk, tk, **kwargs_theirs)
    np.testing.assert_allclose(weights._data, tweights.detach().numpy(), rtol=RTOL, atol=1e-12)
    _check(out, tout, [(q, tq), (k, tk)])
    for (name, p), tp in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad._data, tp.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


def test_multihead_attention_unbatched_and_per_head_weights():
    torch.manual_seed(1)
    theirs = torch.nn.MultiheadAttention(4, 2).double()
    ours = nn.MultiheadAttention(4, 2, dtype=np.float64)
    ours.load_state_dict(theirs.state_dict())
    x = RNG.normal(size=(3, 4))
    out, w = ours(x, x, x, average_attn_weights=False)
    tout, tw = theirs(*(torch.tensor(x),) * 3, average_attn_weights=False)
    np.testing.assert_allclose(out._data, tout.detach().numpy(), rtol=RTOL)
    np.testing.assert_allclose(w._data, tw.detach().numpy(), rtol=RTOL)


# ---------------------------------------------------------------------------
# containers, Module methods, printing
# ---------------------------------------------------------------------------


def _build(self, lib):
    """The same layers, containers and buffers in either library."""
    if True:
        self.layers = lib.ModuleDict({"inp": lib.Linear(4, 8), "act": lib.LeakyReLU(0.2)})
        self.heads = lib.ModuleList([lib.Linear(8, 2) for _ in range(3)] + [lib.Dropout(0.1)])
        self.scales = lib.ParameterList([lib.Parameter(taugrad.ones(2) if lib is nn else torch.ones(2))])
        self.extra = lib.ParameterDict({"shift": lib.Parameter(taugrad.zeros(2) if lib is nn else torch.zeros(2))})
        self.register_buffer("running", taugrad.zeros(3) if lib is nn else torch.zeros(3))
        self.register_buffer("scratch", taugrad.zeros(1) if lib is nn else torch.zeros(1), persistent=False)
        self.tail = lib.Sequential(lib.Flatten(), lib.Unflatten(1, (2, 1)), lib.Softmax(dim=1), lib.ELU(),
                                   lib.Hardtanh(), lib.SiLU(), lib.ReLU(inplace=True), lib.GELU(), lib.Identity(),
                                   lib.LayerNorm(8), lib.Embedding(10, 3))


class Block(nn.Module):
    def __init__(self, lib):
        super().__init__()
        _build(self, lib)


class TorchBlock(torch.nn.Module):
    def __init__(self, lib):
        super().__init__()
        _build(self, lib)


def test_printing_and_names_match_torch():
    ours, theirs = Block(nn), TorchBlock(torch.nn)
    ours_lines = [line for line in repr(ours).split("\n") if "Parameter containing" not in line]
    theirs_lines = [line for line in repr(theirs).split("\n") if "Parameter containing" not in line]
    assert ours_lines[0] == "Block(" and theirs_lines[0] == "TorchBlock("
    assert ours_lines[1:] == theirs_lines[1:]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert len(list(ours.children())) == len(list(theirs.children()))
    assert [type(m).__name__ for m in ours.modules()][1:] == [type(m).__name__ for m in theirs.modules()][1:]


def test_state_dict_from_torch_loads_into_the_twin():
    ours, theirs = Block(nn), TorchBlock(torch.nn)
    ours.load_state_dict(theirs.state_dict())
    np.testing.assert_array_equal(ours.heads[2].weight._data, theirs.heads[2].weight.detach().numpy())


def test_non_persistent_buffer_is_a_buffer_but_not_in_the_state_dict():
    block = Block(nn)
    assert "scratch" in dict(block.named_buffers()) and "scratch" not in block.state_dict()


def test_module_helpers():
    block = Block(nn)
    seen = []
    block.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Block" and "Linear" in seen
    assert all(p._data.dtype == np.float64 for p in block.double().parameters())
    assert block.running._data.dtype == np.float64
    assert all(p._data.dtype == np.float16 for p in block.half().parameters())
    assert all(p._data.dtype == np.float32 for p in block.float().parameters())
    block.requires_grad_(False)
    assert not any(p.requires_grad for p in block.parameters())
    block.eval()
    assert not any(m.training for m in block.modules())
    block.train()
    assert all(m.training for m in block.modules())


def test_containers_behave_like_torch_ones():
    d = nn.ModuleDict({"a": nn.Linear(2, 2)})
    d["train"] = nn.ReLU()  # a key that is also a method name, as torch allows
    assert list(d.keys()) == ["a", "train"] and "train" in d and len(d) == 2
    assert isinstance(d.pop("a"), nn.Linear) and list(d) == ["train"]
    plist = nn.ParameterList([Tensor(np.ones(2)), np.zeros(3)])
    assert all(isinstance(p, nn.Parameter) for p in plist) and len(list(plist.parameters())) == 2
    plist.append(Tensor(np.ones(1)))
    assert [n for n, _ in plist.named_parameters()] == ["0", "1", "2"]
    pdict = nn.ParameterDict({"w": Tensor(np.ones(2))})
    pdict["b"] = Tensor(np.zeros(2))
    assert list(pdict.keys()) == ["w", "b"] and isinstance(pdict["b"], nn.Parameter)
    assert [n for n, _ in pdict.named_parameters()] == ["w", "b"]
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    assert isinstance(ml[1:], nn.ModuleList) and len(ml[1:]) == 1


def test_tied_weights_are_counted_once_everywhere():
    a, b = nn.Linear(3, 3), nn.Linear(3, 3)
    b.weight = a.weight
    model = nn.Sequential(a, b)
    ta, tb = torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)
    tb.weight = ta.weight
    tmodel = torch.nn.Sequential(ta, tb)
    assert len(list(model.parameters())) == len(list(tmodel.parameters())) == 3
    assert list(model.state_dict()) == list(tmodel.state_dict())
    assert len(taugrad.optim.SGD(model.parameters(), lr=0.1).param_groups[0]["params"]) == 3


# ---------------------------------------------------------------------------
# init and nn.utils
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("linear",), ("conv_transpose2d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("selu",)])
def test_calculate_gain_matches_torch(args):
    assert nn.init.calculate_gain(*args) == pytest.approx(torch.nn.init.calculate_gain(*args), rel=1e-15)


def _std_within(samples, expected, n):
    """The sample standard deviation is within 5 standard errors of ``expected``."""
    assert abs(samples.std() - expected) < 5 * expected / math.sqrt(2 * n)


@pytest.mark.parametrize("fn, kwargs, std", [
    ("kaiming_normal_", dict(), math.sqrt(2 / 300)),
    ("kaiming_normal_", dict(a=0.3, mode="fan_out", nonlinearity="leaky_relu"), math.sqrt(2 / 1.09 / 200)),
    ("kaiming_uniform_", dict(nonlinearity="relu"), math.sqrt(2 / 300)),
    ("xavier_uniform_", dict(gain=2.0), 2.0 * math.sqrt(2 / 500)),
    ("xavier_normal_", dict(), math.sqrt(2 / 500)),
    ("normal_", dict(mean=0.0, std=0.3), 0.3),
])
def test_init_distributions_have_torchs_spread(fn, kwargs, std):
    w = Tensor(np.zeros((200, 300)))
    getattr(nn.init, fn)(w, **kwargs, generator=np.random.default_rng(0))
    _std_within(w._data, std, w._data.size)
    t = torch.empty(200, 300, dtype=torch.float64)
    getattr(torch.nn.init, fn)(t, **kwargs)
    assert abs(t.std().item() - std) < 5 * std / math.sqrt(2 * t.numel())  # the formula is torch's too


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments():
    w = Tensor(np.zeros(200_000))
    nn.init.trunc_normal_(w, mean=1.0, std=2.0, a=0.0, b=3.0, generator=np.random.default_rng(0))
    assert w._data.min() >= 0.0 and w._data.max() <= 3.0
    t = torch.nn.init.trunc_normal_(torch.empty(200_000, dtype=torch.float64), 1.0, 2.0, 0.0, 3.0)
    assert abs(w._data.mean() - t.mean().item()) < 0.02 and abs(w._data.std() - t.std().item()) < 0.02


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    grads = [RNG.normal(size=s) for s in [(3, 4), (5,), (2, 2)]]
    ours = [Tensor(np.zeros(g.shape), requires_grad=True) for g in grads]
    theirs = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for p, q, g in zip(ours, theirs, grads):
        p.grad, q.grad = Tensor(g.copy()), torch.tensor(g.copy())
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert float(total._data) == pytest.approx(ttotal.item(), rel=RTOL)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad._data, q.grad.numpy(), rtol=RTOL)


def test_clip_grad_value_and_parameter_vectors_match_torch():
    g = RNG.normal(size=(4, 3)) * 3
    p, q = Tensor(np.zeros((4, 3)), requires_grad=True), torch.zeros(4, 3, dtype=torch.float64, requires_grad=True)
    p.grad, q.grad = Tensor(g.copy()), torch.tensor(g.copy())
    nn.utils.clip_grad_value_([p], 1.0)
    torch.nn.utils.clip_grad_value_([q], 1.0)
    np.testing.assert_array_equal(p.grad._data, q.grad.numpy())
    model, tmodel = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    tmodel.load_state_dict({k: torch.tensor(v._data.copy()) for k, v in model.state_dict().items()})
    vec = nn.utils.parameters_to_vector(model.parameters())
    np.testing.assert_array_equal(vec._data, torch.nn.utils.parameters_to_vector(tmodel.parameters()).detach().numpy())
    nn.utils.vector_to_parameters(Tensor(np.arange(8.0)), model.parameters())
    assert model.bias._data.tolist() == [6.0, 7.0]
    nn.utils.vector_to_parameters(Tensor(np.arange(8.0)), [model.weight])  # longer than needed: fine, as torch
    assert model.weight._data.ravel().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(ValueError, match="8 elements"):
        nn.utils.vector_to_parameters(Tensor(np.arange(8.0)), [model.weight, model.weight])

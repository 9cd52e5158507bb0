"""The torch.nn surface real code uses, against torch: losses, activations, containers, Module methods,
printing, init, nn.utils, attention.  Values and gradients in float64 to 1e-10 relative."""
import math

import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn as nn
import taugrad.nn.functional as F
from taugrad.tensors.node import Tensor

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


def test_cross_entropy_with_every_target_ignored_is_nan_as_torch():
    ours = F.cross_entropy(Tensor(LOGITS), np.full(7, -100))
    theirs = torch.nn.functional.cross_entropy(torch.tensor(LOGITS), torch.full((7,), -100))
    assert math.isnan(float(ours._data)) and math.isnan(theirs.item())


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
])
def test_functional_forms_match_torch(name, ours, theirs):
    x, tx = _pair(X)
    _check(ours(x), theirs(tx), [(x, tx)])


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
    with pytest.raises(ValueError, match="8 elements"):
        nn.utils.vector_to_parameters(Tensor(np.arange(8.0)), [model.weight])

"""nn.functional cases that gave other numbers than torch, each against torch float64 from the same NumPy values."""
import warnings

import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn.functional as F
from taugrad import nn

TF = torch.nn.functional
RNG = np.random.default_rng(6)


def _pair(v, grad=True):
    return taugrad.tensor(v, requires_grad=grad), torch.tensor(v, requires_grad=grad)


def _close(g, t, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


# -- softmax without dim: torch's implicit dim, with its warning ---------------------------------------------


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_without_dim_uses_torchs_implicit_dim_and_warns(name, ndim):
    shape = (2, 3, 4, 5)[:ndim]
    g, t = _pair(RNG.normal(size=shape))
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name}"):
        gy = getattr(F, name)(g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ty = getattr(TF, name)(t)
    _close(gy, ty)
    w = RNG.normal(size=shape)
    (gy * taugrad.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    _close(g.grad, t.grad)


@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax", "Softmin"])
def test_softmax_modules_without_dim(name):
    v = RNG.normal(size=(2, 3, 4))
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        gy = getattr(nn, name)()(taugrad.tensor(v))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ty = getattr(torch.nn, name)()(torch.tensor(v))
    _close(gy, ty)


# -- scaled_dot_product_attention ---------------------------------------------------------------------------------


def _sdpa(L, S, **kw):
    q, k, v = RNG.normal(size=(2, L, 4)), RNG.normal(size=(2, S, 4)), RNG.normal(size=(2, S, 3))
    gq, tq = _pair(q)
    gk, tk = _pair(k)
    gv, tv = _pair(v)
    gmask = kw.pop("mask", None)
    tkw, gkw = dict(kw), dict(kw)
    if gmask is not None:
        gkw["attn_mask"], tkw["attn_mask"] = taugrad.tensor(gmask), torch.tensor(gmask)
    go = F.scaled_dot_product_attention(gq, gk, gv, **gkw)
    to = TF.scaled_dot_product_attention(tq, tk, tv, **tkw)
    _close(go, to)
    w = RNG.normal(size=to.shape)
    (go * taugrad.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    for g, t in ((gq, tq), (gk, tk), (gv, tv)):
        assert np.isfinite(g.grad.numpy()).all()
        _close(g.grad, t.grad)
    return go


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_fully_masked_query_row_gives_zero_and_finite_gradients(kind):
    allowed = np.ones((2, 3, 5), dtype=bool)
    allowed[0, 1, :] = False          # a padding query: it may attend no key
    allowed[1, :, 4] = False
    mask = allowed if kind == "bool" else np.where(allowed, 0.0, -np.inf)
    out = _sdpa(3, 5, mask=mask)
    assert (out.detach().numpy()[0, 1] == 0).all()


@pytest.mark.parametrize("L, S", [(3, 5), (5, 3), (4, 4)])
def test_sdpa_causal_mask_is_aligned_top_left(L, S):
    _sdpa(L, S, is_causal=True)


# -- normalize at an all-zero vector ------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [2.0, 1.0, float("inf"), 3.0])
def test_normalize_gradient_at_zero_is_finite_as_torch(p):
    v = RNG.normal(size=(3, 4))
    v[1] = 0.0
    g, t = _pair(v)
    w = RNG.normal(size=(3, 4))
    (F.normalize(g, p=p, dim=1) * taugrad.tensor(w)).sum().backward()
    (TF.normalize(t, p=p, dim=1) * torch.tensor(w)).sum().backward()
    assert np.isfinite(g.grad.numpy()).all()
    _close(g.grad, t.grad, rtol=1e-9)


def test_normalize_behind_a_relu_that_zeroes_a_row_reaches_the_weights_finite():
    x = RNG.normal(size=(4, 3))
    w = RNG.normal(size=(5, 3))
    b = np.full(5, -100.0)
    b[:2] = 0.0                        # rows pass through the ReLU only where the bias is 0
    x[2] = -np.abs(x[2])
    results = []
    for tensor, f in ((taugrad.tensor, F), (torch.tensor, TF)):
        wt = tensor(w, requires_grad=True)
        h = f.relu(tensor(x) @ wt.T + tensor(b))
        h = h * tensor(np.array([1.0, 1.0, 1.0, 0.0])[:, None])  # the last row all zero
        (f.normalize(h, dim=1) ** 2 * tensor(np.arange(5.0))).sum().backward()
        results.append(wt.grad.numpy())
    assert np.isfinite(results[0]).all()
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9, atol=1e-12)


# -- mse_loss and the elementwise regression losses: broadcast targets, legacy reductions --------------------------


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses_broadcast_a_target_of_another_shape_with_a_warning(name, reduction):
    g, t = _pair(RNG.normal(size=(4, 1)))
    y = RNG.normal(size=4)
    with pytest.warns(UserWarning, match="different to the input size"):
        gl = getattr(F, name)(g, taugrad.tensor(y), reduction=reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tl = getattr(TF, name)(t, torch.tensor(y), reduction=reduction)
    _close(gl, tl)
    gl.sum().backward()
    tl.sum().backward()
    _close(g.grad, t.grad)


LEGACY = [(None, None), (True, None), (False, None), (None, False), (False, True), (True, False), (False, False)]


@pytest.mark.parametrize("size_average, reduce", LEGACY)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy", "kl_div",
                                  "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy"])
def test_legacy_size_average_and_reduce(name, size_average, reduce):
    if name in ("nll_loss", "cross_entropy"):
        v, y = RNG.normal(size=(5, 3)), RNG.integers(0, 3, size=5)
        if name == "nll_loss":
            v = v - np.log(np.exp(v).sum(1, keepdims=True))
        gy, ty = taugrad.tensor(y), torch.tensor(y)
    else:
        v, y = RNG.uniform(0.1, 0.9, size=(5, 3)), RNG.uniform(0.1, 0.9, size=(5, 3))
        gy, ty = taugrad.tensor(y), torch.tensor(y)
    g, t = _pair(v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tl = getattr(TF, name)(t, ty, size_average=size_average, reduce=reduce)
        gl = getattr(F, name)(g, gy, size_average=size_average, reduce=reduce)
    _close(gl, tl)
    gl.sum().backward()
    tl.sum().backward()
    _close(g.grad, t.grad)


def test_mse_loss_weight():
    g, t = _pair(RNG.normal(size=(3, 4)))
    y, w = RNG.normal(size=(3, 4)), RNG.uniform(0.5, 2, size=(3, 4))
    for reduction in ("mean", "sum", "none"):
        gl = F.mse_loss(g, taugrad.tensor(y), reduction=reduction, weight=taugrad.tensor(w))
        tl = TF.mse_loss(t, torch.tensor(y), reduction=reduction, weight=torch.tensor(w))
        _close(gl, tl)


# -- embedding called as the function with a negative padding_idx ----------------------------------------------------


@pytest.mark.parametrize("padding_idx", [-1, -3, 2, None])
def test_embedding_function_padding_idx_gradient(padding_idx):
    idx = np.array([[0, 4, 2], [4, 4, 1]])
    g, t = _pair(RNG.normal(size=(5, 3)))
    gy = F.embedding(taugrad.tensor(idx), g, padding_idx=padding_idx)
    ty = TF.embedding(torch.tensor(idx), t, padding_idx=padding_idx)
    _close(gy, ty)
    w = RNG.normal(size=ty.shape)
    (gy * taugrad.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    _close(g.grad, t.grad)


# -- pad with negative widths: a crop, as torch ----------------------------------------------------------------


@pytest.mark.parametrize("widths", [(-1, 2), (1, -2, -1, 0), (-1, -1), (0, 0, -2, 3), (-2, -1, 1, 1, 0, -1)])
def test_pad_negative_widths_crop(widths):
    g, t = _pair(RNG.normal(size=(2, 3, 5)))
    gy, ty = F.pad(g, widths, value=1.5), TF.pad(t, widths, value=1.5)
    _close(gy, ty)
    w = RNG.normal(size=ty.shape)
    (gy * taugrad.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    _close(g.grad, t.grad)


# -- interpolate: bicubic, area, nearest-exact -----------------------------------------------------------------


INTERPOLATIONS = [
    ("bicubic", (1, 2, 5, 4), dict(size=(7, 9))),
    ("bicubic", (1, 2, 5, 4), dict(size=(3, 2), align_corners=True)),
    ("bicubic", (2, 1, 4, 6), dict(scale_factor=1.5)),
    ("bicubic", (2, 1, 4, 6), dict(scale_factor=(2.0, 0.5), align_corners=False)),
    ("bicubic", (2, 1, 4, 6), dict(scale_factor=1.7, recompute_scale_factor=True)),
    ("area", (1, 2, 7, 5), dict(size=(3, 2))),
    ("area", (1, 2, 7), dict(size=4)),
    ("area", (1, 2, 6, 6), dict(scale_factor=0.5)),
    ("area", (1, 2, 3, 4), dict(size=(5, 9))),
    ("nearest-exact", (1, 2, 5, 4), dict(size=(7, 3))),
    ("nearest-exact", (1, 2, 5), dict(scale_factor=2.5)),
    ("nearest-exact", (1, 2, 5, 4), dict(scale_factor=(0.6, 1.5), recompute_scale_factor=True)),
]


@pytest.mark.parametrize("mode, shape, kw", INTERPOLATIONS)
def test_interpolate_modes(mode, shape, kw):
    g, t = _pair(RNG.normal(size=shape))
    gy, ty = F.interpolate(g, mode=mode, **kw), TF.interpolate(t, mode=mode, **kw)
    _close(gy, ty)
    w = RNG.normal(size=ty.shape)
    (gy * taugrad.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    _close(g.grad, t.grad)


# -- torch's argument names ------------------------------------------------------------------------------------


def test_functions_take_torchs_argument_names():
    v, y = RNG.normal(size=(4, 3)), RNG.integers(0, 3, size=4)
    for name, kw in (("cross_entropy", {}), ("nll_loss", {}), ("sigmoid", None), ("tanh", None)):
        if kw is None:
            g, t = getattr(F, name)(input=taugrad.tensor(v)), getattr(TF, name)(input=torch.tensor(v))
        else:
            g = getattr(F, name)(input=taugrad.tensor(v), target=taugrad.tensor(y))
            t = getattr(TF, name)(input=torch.tensor(v), target=torch.tensor(y))
        _close(g, t)
    assert isinstance(nn.Identity(54, unused_argument1=0.1), nn.Identity)
    x = taugrad.tensor(RNG.normal(size=(1, 1, 4, 4)))
    _close(F.interpolate(x, size=(2, 2), mode="bilinear", antialias=False),
           TF.interpolate(torch.tensor(x.numpy()), size=(2, 2), mode="bilinear", antialias=False))

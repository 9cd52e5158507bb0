"""Transformer modules against torch.nn in float64: torch's parameter names, the same values and gradients
(inputs and every parameter), with masks, norm_first, activations, batch_first and bias=False.

Compared with dropout 0 in training mode (torch's plain path, not its inference fast path)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import taugrad as tg
from taugrad import nn

RNG = np.random.default_rng(11)
D, H, FF = 8, 2, 16


def tgt(a, grad=False):
    a = np.asarray(a)
    return tg.tensor(a if a.dtype == np.bool_ else a.astype(np.float64), requires_grad=grad)


def tht(a, grad=False):
    a = np.asarray(a)
    return torch.tensor(a if a.dtype == np.bool_ else a.astype(np.float64), requires_grad=grad)


def close(a, b, tol=1e-10):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def load(ours, theirs):
    assert list(ours.state_dict().keys()) == list(theirs.state_dict().keys())
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours


def activation_pair(kind):
    if kind == "module":
        return nn.Tanh(), torch.nn.Tanh()
    if kind == "function":
        return tg.nn.functional.silu, torch.nn.functional.silu
    return kind, kind


def layer_pair(cls, activation="relu", **kwargs):
    torch.manual_seed(0)
    act_o, act_t = activation_pair(activation)
    theirs = getattr(torch.nn, cls)(D, H, FF, dropout=0.0, activation=act_t, **kwargs).double()
    ours = getattr(nn, cls)(D, H, FF, dropout=0.0, activation=act_o, dtype=tg.float64, **kwargs)
    return load(ours, theirs), theirs


def run_and_compare(ours, theirs, args_o, args_t, kwargs_o, kwargs_t, leaves_o, leaves_t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_t = theirs(*args_t, **kwargs_t)
    out_o = ours(*args_o, **kwargs_o)
    close(out_o, out_t)
    w = RNG.standard_normal(tuple(out_t.shape))
    (out_o * tgt(w)).sum().backward()
    (out_t * tht(w)).sum().backward()
    for a, b in zip(leaves_o, leaves_t):
        close(a.grad, b.grad)
    for (name, p), (name_t, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == name_t
        assert q.grad is not None, name
        close(p.grad, q.grad)


def seq(L, N, batch_first):
    return RNG.standard_normal((N, L, D) if batch_first else (L, N, D))


def masks(kind, L, N, S=None):
    """(ours, theirs) keyword pairs for the encoder-layer masks of one kind."""
    S = L if S is None else S
    if kind == "none":
        return {}
    if kind == "causal":
        m = torch.nn.Transformer.generate_square_subsequent_mask(L).double().numpy()
        return dict(src_mask=m, is_causal=True)
    if kind == "bool":
        m = RNG.random((L, S)) < 0.3
        np.fill_diagonal(m, False)
        return dict(src_mask=m)
    if kind == "padding":
        kpm = np.zeros((N, S), dtype=bool)
        kpm[0, -2:] = True
        return dict(src_key_padding_mask=kpm)
    if kind == "float+padding":
        kpm = np.zeros((N, S), dtype=bool)
        kpm[1, -1] = True
        return dict(src_mask=RNG.standard_normal((L, S)), src_key_padding_mask=kpm)
    raise ValueError(kind)


def convert(kw, f):
    return {k: (f(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu", "module", "function"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer(norm_first, activation, batch_first):
    ours, theirs = layer_pair("TransformerEncoderLayer", activation, norm_first=norm_first, batch_first=batch_first)
    x = seq(5, 3, batch_first)
    xo, xt = tgt(x, True), tht(x, True)
    run_and_compare(ours, theirs, [xo], [xt], {}, {}, [xo], [xt])


@pytest.mark.parametrize("kind", ["causal", "bool", "padding", "float+padding"])
def test_encoder_layer_masks(kind):
    ours, theirs = layer_pair("TransformerEncoderLayer", bias=False, layer_norm_eps=1e-3)
    x = seq(5, 3, False)
    kw = masks(kind, 5, 3)
    xo, xt = tgt(x, True), tht(x, True)
    run_and_compare(ours, theirs, [xo], [xt], convert(kw, tgt), convert(kw, tht), [xo], [xt])


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_with_masks(norm_first, batch_first):
    ours, theirs = layer_pair("TransformerDecoderLayer", "gelu", norm_first=norm_first, batch_first=batch_first)
    L, S, N = 4, 6, 2
    t, m = seq(L, N, batch_first), seq(S, N, batch_first)
    to, tt, mo, mt = tgt(t, True), tht(t, True), tgt(m, True), tht(m, True)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L).double().numpy()
    kpm = np.zeros((N, L), dtype=bool)
    kpm[1, -1] = True
    mkpm = np.zeros((N, S), dtype=bool)
    mkpm[0, :2] = True
    kw = dict(tgt_mask=causal, memory_mask=RNG.standard_normal((L, S)), tgt_key_padding_mask=kpm,
              memory_key_padding_mask=mkpm, tgt_is_causal=True)
    run_and_compare(ours, theirs, [to, mo], [tt, mt], convert(kw, tgt), convert(kw, tht), [to, mo], [tt, mt])


def test_encoder_and_decoder_stacks():
    torch.manual_seed(1)
    layer_t = torch.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, norm_first=True)
    theirs = torch.nn.TransformerEncoder(layer_t, 3, norm=torch.nn.LayerNorm(D), enable_nested_tensor=False).double()
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, norm_first=True), 3,
                                 norm=nn.LayerNorm(D)).double()
    load(ours, theirs)
    assert "layers.2.self_attn.in_proj_weight" in ours.state_dict()
    # the copies are independent: changing one layer leaves the others
    assert ours.layers[0].linear1.weight is not ours.layers[1].linear1.weight
    x = seq(5, 2, False)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5).double().numpy()
    xo, xt = tgt(x, True), tht(x, True)
    run_and_compare(ours, theirs, [xo], [xt], dict(mask=tgt(causal), is_causal=True),
                    dict(mask=tht(causal), is_causal=True), [xo], [xt])

    dec_t = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0), 2).double()
    dec_o = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, H, FF, dropout=0.0), 2).double()
    load(dec_o, dec_t)
    t, m = seq(3, 2, False), seq(5, 2, False)
    to, tt, mo, mt = tgt(t, True), tht(t, True), tgt(m, True), tht(m, True)
    run_and_compare(dec_o, dec_t, [to, mo], [tt, mt], {}, {}, [to, mo], [tt, mt])


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(batch_first):
    torch.manual_seed(2)
    kw = dict(d_model=D, nhead=H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FF, dropout=0.0,
              batch_first=batch_first)
    theirs = torch.nn.Transformer(**kw).double()
    ours = load(nn.Transformer(**kw, dtype=tg.float64), theirs)
    S, L, N = 6, 4, 2
    s, t = seq(S, N, batch_first), seq(L, N, batch_first)
    so, st, to, tt = tgt(s, True), tht(s, True), tgt(t, True), tht(t, True)
    causal_o = nn.Transformer.generate_square_subsequent_mask(L, dtype=tg.float64)
    causal_t = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    close(causal_o, causal_t)
    skpm = np.zeros((N, S), dtype=bool)
    skpm[1, -2:] = True
    masks_np = dict(src_key_padding_mask=skpm, memory_key_padding_mask=skpm)
    kw_o = dict(convert(masks_np, tgt), tgt_mask=causal_o, tgt_is_causal=True)
    kw_t = dict(convert(masks_np, tht), tgt_mask=causal_t, tgt_is_causal=True)
    run_and_compare(ours, theirs, [so, to], [st, tt], kw_o, kw_t, [so, to], [st, tt])


def test_initialisation_and_names():
    tg.manual_seed(0)
    model = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32)
    theirs = torch.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                                  dim_feedforward=32)
    ours_keys = [(k, tuple(v.shape)) for k, v in model.state_dict().items()]
    their_keys = [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert ours_keys == their_keys
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6.0 / (16 + 32))  # Xavier-uniform, re-drawn by the Transformer
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    # weights move to torch too
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in model.state_dict().items()})


def test_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(D, H, activation="tanh")
    model = nn.Transformer(d_model=D, nhead=H, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=FF)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(tg.zeros(3, 2, D), tg.zeros(3, 4, D))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(tg.zeros(3, 2, D), tg.zeros(3, 2, D + 1))
    layer = nn.TransformerEncoderLayer(D, H, FF)
    with pytest.raises(ValueError, match="is_causal"):
        layer(tg.zeros(3, 2, D), is_causal=True)


def test_dropout_in_training_only():
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.5)
    x = tg.tensor(RNG.standard_normal((4, 2, D)).astype(np.float32))
    a, b = layer(x).detach().numpy(), layer(x).detach().numpy()
    assert not np.allclose(a, b)
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())

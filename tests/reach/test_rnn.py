"""Recurrent layers and cells against torch.nn in float64: same weights (state dicts both ways), same values,
same gradients for the input, the initial states and every weight, and second order on a small case."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import taugrad as tg
from taugrad import nn
from taugrad.nn.utils import rnn as rnn_utils

RNG = np.random.default_rng(7)


def tgt(a, grad=False):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def tht(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def pair(cls_name, *args, **kwargs):
    """A torch module and the taugrad one with torch's weights (loaded from its state dict)."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls_name)(*args, **kwargs).double()
    ours = getattr(nn, cls_name)(*args, dtype=tg.float64, **kwargs)
    assert list(ours.state_dict().keys()) == list(theirs.state_dict().keys())
    for (k, a), (k2, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert tuple(a.shape) == tuple(b.shape), k
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def close(a, b, tol=1e-10):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def check_grads(ours, theirs, our_leaves, their_leaves):
    for a, b in zip(our_leaves, their_leaves):
        close(a.grad, b.grad)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert q.grad is not None, name
        close(p.grad, q.grad)


def flat(out):
    """Every tensor of a recurrent layer's result, in order."""
    if isinstance(out, (rnn_utils.PackedSequence, torch.nn.utils.rnn.PackedSequence)):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def backward_with(outs_ours, outs_theirs):
    """Backpropagate the same random upstream gradient through both results."""
    loss_o, loss_t = 0, 0
    for a, b in zip(flat(outs_ours), flat(outs_theirs)):
        close(a, b)
        w = RNG.standard_normal(tuple(b.shape))
        loss_o = loss_o + (a * tgt(w)).sum()
        loss_t = loss_t + (b * tht(w)).sum()
    loss_o.backward()
    loss_t.backward()


CONFIGS = [
    ("RNN", dict()),
    ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bidirectional=True, bias=False)),
    ("LSTM", dict()),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=3, num_layers=2)),
    ("LSTM", dict(proj_size=2, bidirectional=True, bias=False)),
    ("GRU", dict()),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(bias=False, num_layers=2)),
]


def _hidden(theirs, batch, cell=False):
    directions = 2 if theirs.bidirectional else 1
    size = theirs.hidden_size if cell or not theirs.proj_size else theirs.proj_size
    return RNG.standard_normal((theirs.num_layers * directions, batch, size))


@pytest.mark.parametrize("name, kwargs", CONFIGS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_layer_values_and_gradients(name, kwargs, batch_first, with_state):
    ours, theirs = pair(name, 4, 6, batch_first=batch_first, **kwargs)
    T, B = 5, 3
    x = RNG.standard_normal((B, T, 4) if batch_first else (T, B, 4))
    xo, xt = tgt(x, True), tht(x, True)
    leaves_o, leaves_t = [xo], [xt]
    if with_state:
        h = _hidden(theirs, B)
        ho, ht = tgt(h, True), tht(h, True)
        leaves_o.append(ho)
        leaves_t.append(ht)
        if name == "LSTM":
            c = _hidden(theirs, B, cell=True)
            co, ct = tgt(c, True), tht(c, True)
            leaves_o.append(co)
            leaves_t.append(ct)
            out_o, out_t = ours(xo, (ho, co)), theirs(xt, (ht, ct))
        else:
            out_o, out_t = ours(xo, ho), theirs(xt, ht)
    else:
        out_o, out_t = ours(xo), theirs(xt)
    backward_with(out_o, out_t)
    check_grads(ours, theirs, leaves_o, leaves_t)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_input(name):
    ours, theirs = pair(name, 3, 4, num_layers=2)
    x = RNG.standard_normal((6, 3))
    xo, xt = tgt(x, True), tht(x, True)
    out_o, out_t = ours(xo), theirs(xt)
    assert tuple(flat(out_o)[0].shape) == (6, 4)
    backward_with(out_o, out_t)
    check_grads(ours, theirs, [xo], [xt])


def test_weights_move_both_ways_and_init_bounds():
    tg.manual_seed(3)
    ours = nn.LSTM(5, 8, num_layers=2, bidirectional=True, proj_size=3)
    bound = 1 / math.sqrt(8)
    for name, p in ours.named_parameters():
        a = p.detach().numpy()
        assert a.dtype == np.float32
        assert np.abs(a).max() <= bound and np.abs(a).max() > 0.8 * bound, name
        assert a.std() > 0.4 * bound  # uniform on (-k, k): std k / sqrt(3)
    theirs = torch.nn.LSTM(5, 8, num_layers=2, bidirectional=True, proj_size=3)
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in ours.state_dict().items()})
    x = RNG.standard_normal((4, 2, 5)).astype(np.float32)
    close(ours(x)[0], theirs(torch.tensor(x))[0], tol=1e-5)
    names = [n for n, _ in ours.named_parameters()]
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert names[5] == "weight_ih_l0_reverse"
    assert tuple(ours.weight_hh_l1.shape) == (32, 3) and tuple(ours.weight_ih_l1.shape) == (32, 6)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_second_order(name):
    ours, theirs = pair(name, 2, 3, num_layers=2, bidirectional=True)
    x = RNG.standard_normal((3, 2, 2))
    xo, xt = tgt(x, True), tht(x, True)
    out_o, out_t = ours(xo)[0], theirs(xt)[0]
    w = RNG.standard_normal(tuple(out_t.shape))
    (go,) = tg.autograd.grad((out_o * tgt(w)).sum(), [xo], create_graph=True)
    (gt,) = torch.autograd.grad((out_t * tht(w)).sum(), [xt], create_graph=True)
    close(go, gt)
    (go ** 2).sum().backward()
    (gt ** 2).sum().backward()
    close(xo.grad, xt.grad)
    check_grads(ours, theirs, [], [])


@pytest.mark.parametrize("cell, states", [("RNNCell", 1), ("LSTMCell", 2), ("GRUCell", 1)])
@pytest.mark.parametrize("kwargs", [dict(), dict(bias=False)])
def test_cells(cell, states, kwargs):
    torch.manual_seed(1)
    theirs = getattr(torch.nn, cell)(4, 5, **kwargs).double()
    ours = getattr(nn, cell)(4, 5, dtype=tg.float64, **kwargs)
    assert list(ours.state_dict().keys()) == list(theirs.state_dict().keys())
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal((3, 4))
    hs = [RNG.standard_normal((3, 5)) for _ in range(states)]
    xo, xt = tgt(x, True), tht(x, True)
    ho, ht = [tgt(h, True) for h in hs], [tht(h, True) for h in hs]
    arg_o = tuple(ho) if states == 2 else ho[0]
    arg_t = tuple(ht) if states == 2 else ht[0]
    backward_with(ours(xo, arg_o), theirs(xt, arg_t))
    check_grads(ours, theirs, [xo] + ho, [xt] + ht)
    # no state: zeros; unbatched: 1-D
    close(flat(ours(tgt(x)))[0], flat(theirs(tht(x)))[0])
    close(flat(ours(tgt(x[0])))[0], flat(theirs(tht(x[0])))[0])


def test_rnn_cell_relu():
    torch.manual_seed(2)
    theirs = torch.nn.RNNCell(3, 4, nonlinearity="relu").double()
    ours = nn.RNNCell(3, 4, nonlinearity="relu", dtype=tg.float64)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal((5, 3))
    close(ours(tgt(x)), theirs(tht(x)))
    assert repr(ours) == repr(theirs)


# ---------------------------------------------------------------------------
# packed sequences
# ---------------------------------------------------------------------------


def test_pad_sequence_and_back():
    seqs = [RNG.standard_normal((n, 2)) for n in (3, 5, 1)]
    for batch_first in (False, True):
        for side in ("right", "left"):
            ours = rnn_utils.pad_sequence([tgt(s) for s in seqs], batch_first=batch_first, padding_value=-1.5,
                                          padding_side=side)
            theirs = torch.nn.utils.rnn.pad_sequence([tht(s) for s in seqs], batch_first=batch_first,
                                                     padding_value=-1.5, padding_side=side)
            close(ours, theirs)
    padded = rnn_utils.pad_sequence([tgt(s) for s in seqs], batch_first=True)
    back = rnn_utils.unpad_sequence(padded, [3, 5, 1], batch_first=True)
    for a, s in zip(back, seqs):
        close(a, s)


@pytest.mark.parametrize("enforce_sorted, lengths", [(True, [5, 3, 3, 1]), (False, [2, 5, 1, 4])])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_round_trip(enforce_sorted, lengths, batch_first):
    T, B = 5, 4
    x = RNG.standard_normal((B, T, 3) if batch_first else (T, B, 3))
    xo, xt = tgt(x, True), tht(x, True)
    po = rnn_utils.pack_padded_sequence(xo, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    pt = torch.nn.utils.rnn.pack_padded_sequence(xt, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    close(po.data, pt.data)
    assert po.batch_sizes.numpy().tolist() == pt.batch_sizes.tolist()
    assert po.batch_sizes.dtype == tg.int64
    for a, b in ((po.sorted_indices, pt.sorted_indices), (po.unsorted_indices, pt.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.numpy().tolist() == b.tolist()
    for total in (None, 7):
        (uo, lo), (ut, lt) = (rnn_utils.pad_packed_sequence(po, batch_first=batch_first, padding_value=0.5,
                                                             total_length=total),
                              torch.nn.utils.rnn.pad_packed_sequence(pt, batch_first=batch_first, padding_value=0.5,
                                                                     total_length=total))
        close(uo, ut)
        assert lo.numpy().tolist() == lt.tolist()
    w = RNG.standard_normal(tuple(ut.shape))
    (uo * tgt(w)).sum().backward()
    (ut * tht(w)).sum().backward()
    close(xo.grad, xt.grad)


def test_pack_errors():
    x = tgt(RNG.standard_normal((4, 2, 3)))
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn_utils.pack_padded_sequence(x, [2, 4])
    with pytest.raises(RuntimeError, match="greater than 0"):
        rnn_utils.pack_padded_sequence(x, [2, 0], enforce_sorted=False)
    packed = rnn_utils.pack_padded_sequence(x, [4, 2])
    with pytest.raises(ValueError, match="total_length"):
        rnn_utils.pad_packed_sequence(packed, total_length=3)


def test_pack_sequence_and_unpack():
    seqs = [RNG.standard_normal((n, 2)) for n in (2, 4, 3)]
    po = rnn_utils.pack_sequence([tgt(s) for s in seqs], enforce_sorted=False)
    pt = torch.nn.utils.rnn.pack_sequence([tht(s) for s in seqs], enforce_sorted=False)
    close(po.data, pt.data)
    for a, s in zip(rnn_utils.unpack_sequence(po), seqs):
        close(a, s)
    with pytest.raises(RuntimeError, match="enforce_sorted"):
        rnn_utils.pack_sequence([tgt(s) for s in seqs])


@pytest.mark.parametrize("name, kwargs", [
    ("RNN", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=2, bidirectional=True)),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(batch_first=True)),
])
@pytest.mark.parametrize("enforce_sorted, lengths", [(True, [6, 4, 4, 1]), (False, [3, 6, 1, 5])])
def test_packed_sequence_through_layers(name, kwargs, enforce_sorted, lengths):
    ours, theirs = pair(name, 3, 4, **kwargs)
    batch_first = kwargs.get("batch_first", False)
    T, B = 6, 4
    x = RNG.standard_normal((B, T, 3) if batch_first else (T, B, 3))
    xo, xt = tgt(x, True), tht(x, True)
    po = rnn_utils.pack_padded_sequence(xo, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    pt = torch.nn.utils.rnn.pack_padded_sequence(xt, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    h = _hidden(theirs, B)
    ho, ht = tgt(h, True), tht(h, True)
    if name == "LSTM":
        c = _hidden(theirs, B, cell=True)
        co, ct = tgt(c, True), tht(c, True)
        out_o, out_t = ours(po, (ho, co)), theirs(pt, (ht, ct))
        leaves_o, leaves_t = [xo, ho, co], [xt, ht, ct]
    else:
        out_o, out_t = ours(po, ho), theirs(pt, ht)
        leaves_o, leaves_t = [xo, ho], [xt, ht]
    assert isinstance(out_o[0], rnn_utils.PackedSequence)
    padded_o, _ = rnn_utils.pad_packed_sequence(out_o[0], batch_first=batch_first)
    padded_t, _ = torch.nn.utils.rnn.pad_packed_sequence(out_t[0], batch_first=batch_first)
    close(padded_o, padded_t)
    backward_with(out_o, out_t)
    check_grads(ours, theirs, leaves_o, leaves_t)
    # without an initial state too
    close(flat(ours(po))[1], flat(theirs(pt))[1])


def test_dropout_between_layers():
    ours, theirs = pair("LSTM", 3, 4, num_layers=3, dropout=0.5)
    x = RNG.standard_normal((5, 2, 3))
    close(ours.eval()(tgt(x))[0], theirs.eval()(tht(x))[0])  # evaluation: no dropout
    ours.train()
    tg.manual_seed(0)
    a = ours(tgt(x))[0].detach().numpy()
    b = ours(tgt(x))[0].detach().numpy()
    plain = ours.eval()(tgt(x))[0].detach().numpy()
    assert not np.allclose(a, b) and not np.allclose(a, plain)
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)


def test_errors_match_torch():
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number"):
        nn.LSTM(3, 4, dropout=1.5)
    m = nn.LSTM(3, 4, num_layers=2, dtype=tg.float64)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. Expected 3, got 5"):
        m(tgt(np.zeros((2, 1, 5))))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 1, 4\), got \[1, 1, 4\]"):
        m(tgt(np.zeros((2, 1, 3))), (tgt(np.zeros((1, 1, 4))), tgt(np.zeros((2, 1, 4)))))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D"):
        m(tgt(np.zeros(3)))
    with pytest.raises(RuntimeError, match="sequence length to be larger than 0"):
        m(tgt(np.zeros((0, 1, 3))))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        m(tg.zeros(2, 1, 3))

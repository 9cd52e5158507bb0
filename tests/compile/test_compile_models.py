"""Compiled convolutional and attention steps equal eager ones bit for bit; a replay's peak is no higher."""
from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import taugrad
import taugrad.functional as F
from taugrad import nn, optim
from taugrad.tensors.ops.conv import _WORKSPACES

from .steps import train_step as _cnn_step

STEPS = 12


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3), nn.ReLU(), nn.Flatten(), nn.Linear(6 * 2 * 2, 3))


def _layouts_cnn():
    """One convolution in each buffered layout: batch-last (1 channel), image (8 channels on 16x16) and
    per-sample (8 channels on 8x8); their padded copies and columns come from buffers reused across
    eager steps, which a capture must make afresh."""
    return nn.Sequential(nn.Conv2d(1, 8, 5, padding=2), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))


def _layouts_batches(n):
    rng = np.random.default_rng(7)
    return [(taugrad.tensor(rng.standard_normal((2, 1, 16, 16)).astype(np.float32)),
             taugrad.tensor(rng.integers(0, 3, 2))) for _ in range(n)]


class _Attention(nn.Module):
    """One causal self-attention block over token embeddings, with dropout, as in a small GPT."""

    def __init__(self, vocab: int = 11, width: int = 16, length: int = 6) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(length, width)
        self.norm = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(width, vocab)
        self.heads = 2

    def forward(self, idx):
        b, t = idx.shape
        x = self.tokens(idx) + self.positions(taugrad.arange(t))
        q, k, v = self.qkv(self.norm(x)).split(x.shape[-1], dim=-1)
        shape = (b, t, self.heads, x.shape[-1] // self.heads)
        q, k, v = (z.view(*shape).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (shape[-1] ** -0.5)
        att = F.softmax(att.masked_fill(taugrad.tril(taugrad.ones(t, t)) == 0, float("-inf")), dim=-1)
        y = (self.drop(att) @ v).transpose(1, 2).reshape(b, t, -1)
        return self.head(x + y)


def _cnn_batches(n):
    rng = np.random.default_rng(5)
    return [(taugrad.tensor(rng.standard_normal((8, 1, 8, 8)).astype(np.float32)),
             taugrad.tensor(rng.integers(0, 3, 8))) for _ in range(n)]


def _token_batches(n):
    rng = np.random.default_rng(6)
    return [(taugrad.tensor(rng.integers(0, 11, (4, 6))), taugrad.tensor(rng.integers(0, 11, (4, 6))))
            for _ in range(n)]


def _gpt_step(model, opt, idx, targets):
    logits = model(idx)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


CASES = {
    "cnn-sgd-nesterov": (_cnn, lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
                         _cnn_step, _cnn_batches),
    "conv-layouts-sgd": (_layouts_cnn, lambda p: optim.SGD(p, lr=0.05, momentum=0.9), _cnn_step, _layouts_batches),
    "attention-adamw": (_Attention, lambda p: optim.AdamW(p, lr=3e-3), _gpt_step, _token_batches),
}


def _pair(name):
    make_model, make_opt, step, batches = CASES[name]
    taugrad.manual_seed(0)
    a = make_model()
    taugrad.manual_seed(0)
    b = make_model()
    return (a, make_opt(a.parameters())), (b, make_opt(b.parameters())), step, batches


@pytest.mark.parametrize("name", sorted(CASES))
def test_steps_equal_eager_bit_for_bit(name):
    (m1, o1), (m2, o2), step, batches = _pair(name)
    compiled = taugrad.compile(step)
    for i, (x, y) in enumerate(batches(STEPS)):
        taugrad.manual_seed(50 + i)  # the dropout masks: the same stream for both
        expected = step(m1, o1, x, y)
        taugrad.manual_seed(50 + i)
        got = compiled(m2, o2, x, y)
        assert np.array_equal(expected._data, got._data), f"step {i}"
        for (key, p), q in zip(m1.state_dict().items(), m2.state_dict().values()):
            assert np.array_equal(p._data, q._data), f"step {i}: {key}"
    assert compiled.stats["replays"] >= STEPS - 2


def _peak(fn, repeats: int = 3) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(repeats):
            fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", sorted(CASES))
def test_replay_peak_is_no_higher_than_eagers(name):
    (m1, o1), (m2, o2), step, batches = _pair(name)
    (x, y), = batches(1)
    compiled = taugrad.compile(step)
    for _ in range(3):  # warm both: optimizer state exists, the plan is built
        step(m1, o1, x, y)
        compiled(m2, o2, x, y)
    # eager convolutions reuse scratch buffers kept between steps (made before tracing starts, so not in
    # the peak); emptied first, eager's peak counts its scratch memory as the replay's does
    eager = _peak(lambda: (_WORKSPACES.clear(), step(m1, o1, x, y)))
    replayed = _peak(lambda: compiled(m2, o2, x, y))
    assert compiled.stats["replays"] >= 4
    assert replayed <= eager, f"replay peak {replayed} B > eager peak {eager} B"

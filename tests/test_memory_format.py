"""Memory formats as torch's: ``to``/``contiguous(memory_format=channels_last)``, ``is_contiguous(memory_format=)``,
``Module.to(memory_format=)``, and the layout a convolution block's results take, against torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad


def _both(a):
    return taugrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 1, 4, 4), (1, 3, 1, 1), (3, 4, 1, 6)])
def test_to_and_contiguous_channels_last_lay_out_as_torch(shape):
    a = np.random.default_rng(0).standard_normal(shape)
    ours, theirs = _both(a)
    for fmt in ("channels_last", "contiguous_format"):
        for make in (lambda L, t: t.to(memory_format=getattr(L, fmt)),
                     lambda L, t: t.contiguous(memory_format=getattr(L, fmt))):
            mine, want = make(taugrad, ours), make(torch, theirs)
            assert mine.stride() == want.stride()
            for ask in ("channels_last", "contiguous_format"):
                assert mine.is_contiguous(memory_format=getattr(taugrad, ask)) == \
                    want.is_contiguous(memory_format=getattr(torch, ask))
            np.testing.assert_array_equal(mine.detach().numpy(), a)
    mine, want = ours.to(memory_format=taugrad.channels_last), theirs.to(memory_format=torch.channels_last)
    (mine * mine).sum().backward()
    (want * want).sum().backward()
    if 1 not in shape:  # with a size-1 dim torch's leaf keeps the incoming gradient's strides (both hold)
        assert ours.grad.stride() == theirs.grad.stride()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())


def test_is_contiguous_channels_last_of_views_and_refusals():
    a = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    for index in (lambda t: t.permute(0, 2, 3, 1), lambda t: t[:, :, ::2], lambda t: t.transpose(2, 3)):
        mine = index(taugrad.tensor(a).to(memory_format=taugrad.channels_last))
        want = index(torch.tensor(a).to(memory_format=torch.channels_last))
        assert mine.stride() == want.stride()
        assert mine.is_contiguous(memory_format=taugrad.channels_last) == \
            want.is_contiguous(memory_format=torch.channels_last)
    assert not taugrad.zeros(2, 3).is_contiguous(memory_format=taugrad.channels_last)
    assert not torch.zeros(2, 3).is_contiguous(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="rank 4"):
        torch.zeros(2, 3).to(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="rank 4"):
        taugrad.zeros(2, 3).to(memory_format=taugrad.channels_last)


def _block(L):
    N = L.nn
    return N.Sequential(N.Conv2d(3, 8, 3, padding=1), N.BatchNorm2d(8), N.ReLU(), N.Conv2d(8, 8, 3),
                        N.MaxPool2d(2), N.Conv2d(8, 16, 1))


@pytest.mark.parametrize("how", ["input", "model", "neither"])
def test_a_block_keeps_the_format_torch_keeps(how):
    """A channels-last input or model gives channels-last results all the way, as torch; a default one
    contiguous results; the numbers and the gradients agree either way."""
    torch.manual_seed(0)
    theirs = _block(torch).double()
    ours = _block(taugrad).double()
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})
    a = np.random.default_rng(2).standard_normal((2, 3, 12, 12))
    results = []
    for L, model in ((taugrad, ours), (torch, theirs)):
        x = L.tensor(a, requires_grad=True)
        if how == "model":
            model.to(memory_format=L.channels_last)
        if how == "input":
            x = x.to(memory_format=L.channels_last)
        out = model(x)
        out.square().sum().backward()
        results.append((out, model[0].weight.grad, model[0].weight))
    for mine, want in zip(*results):
        assert mine.stride() == want.stride()
        np.testing.assert_allclose(mine.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-10)

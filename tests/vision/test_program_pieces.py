"""torch behaviours the pytorch/examples vision programs rely on, checked against torch.

mnist_hogwild flattens a convolution's output with ``x.view(-1, 320)``, so the
result of a convolution must be contiguous, as torch's is; mnist_rnn applies
``nn.Dropout2d`` to a 2-D (batch, features) tensor, which torch accepts with
a warning.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn.functional as F


@pytest.mark.parametrize("channels, out, size", [(1, 8, 28), (32, 64, 12), (3, 8, 20), (64, 3, 6)])
def test_convolution_results_are_contiguous_as_torchs(channels, out, size):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, channels, size, size)), rng.standard_normal((out, channels, 3, 3))
    ours = F.conv2d(taugrad.from_numpy(x), taugrad.from_numpy(w))
    theirs = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w))
    assert ours.is_contiguous() and ours.stride() == theirs.stride()
    flat = F.max_pool2d(ours, 2).view(2, -1)  # mnist_hogwild's x.view(-1, 320)
    np.testing.assert_allclose(flat.numpy(), torch.nn.functional.max_pool2d(theirs, 2).view(2, -1).numpy(),
                               rtol=1e-12, atol=1e-12)
    wt = rng.standard_normal((channels, out, 4, 4))
    up = F.conv_transpose2d(taugrad.from_numpy(x), taugrad.from_numpy(wt), stride=2, padding=1)
    up_t = torch.nn.functional.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(wt), stride=2, padding=1)
    assert up.is_contiguous() and up.stride() == up_t.stride()
    x1, w1 = rng.standard_normal((2, channels, size)), rng.standard_normal((out, channels, 3))
    assert F.conv1d(taugrad.from_numpy(x1), taugrad.from_numpy(w1)).stride() == \
        torch.nn.functional.conv1d(torch.from_numpy(x1), torch.from_numpy(w1)).stride()


def test_a_view_of_a_conv_output_trains_as_torch():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 2, 6, 6)), rng.standard_normal((4, 2, 3, 3))
    grads = []
    for lib in (taugrad, torch):
        weight = lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.conv2d(lib.tensor(x), weight).view(3, -1)
        (y * lib.tensor(np.arange(64.0))).sum().backward()
        grads.append(weight.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("shape", [(300, 7), (60, 5, 4)])
def test_dropout2d_of_2d_and_3d_inputs_masks_the_first_two_dims_with_torchs_warning(shape):
    x = np.ones(shape)
    taugrad.manual_seed(0)
    ours, our_warnings = _warned(lambda: F.dropout2d(taugrad.from_numpy(x), 0.5, True))
    theirs, their_warnings = _warned(lambda: torch.nn.functional.dropout2d(torch.from_numpy(x), 0.5, True))
    assert our_warnings == their_warnings and len(their_warnings) == 1
    for out in (ours.numpy(), theirs.numpy()):
        per_feature = out.reshape(shape[0] * shape[1], -1)
        assert np.all((per_feature == 0).all(1) | (per_feature == 2.0).all(1))  # whole (n, c) entries dropped
        assert 0.35 < (per_feature[:, 0] == 0).mean() < 0.65
    module = taugrad.nn.Dropout2d(0.5)
    assert tuple(module(taugrad.from_numpy(x)).shape) == shape
    assert np.array_equal(module.eval()(taugrad.from_numpy(x)).numpy(), x)


def test_dropout2d_of_4d_input_does_not_warn():
    _, caught = _warned(lambda: F.dropout2d(taugrad.ones(2, 3, 4, 4), 0.5, True))
    assert caught == []
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        F.dropout2d(taugrad.ones(5), 0.5, True)

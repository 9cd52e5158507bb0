"""The convolution's image layout (enough channels on a larger map: products on the (N, C, H, W) memory
itself) and the buffers its layouts reuse across steps, against torch in float64."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad
from taugrad.tensors.ops.conv import _layout

from conv_block_cases import assert_grads_match, conv_bn_relu_conv


@pytest.mark.parametrize("stride, padding, dilation", [(1, 1, 1), (1, 0, 1), ((1, 2), 2, 1), (1, 2, 2),
                                                       (1, (3, 1), (2, 1)), (1, 0, (1, 3))])
@pytest.mark.parametrize("needs", ["both", "weight", "input"])
def test_image_layout_agrees_with_torch(stride, padding, dilation, needs):
    """conv, BatchNorm, ReLU, conv, as in a ResNet block, with only the weight or only the input needing
    a gradient; every stride-1 case takes the input gradient as a convolution with the flipped kernel."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 8, 26, 25))
    w1, w2 = rng.standard_normal((6, 8, 3, 3)), rng.standard_normal((5, 6, 3, 3))
    outs, ours, theirs = conv_bn_relu_conv(x, w1, w2, needs, stride=stride, padding=padding, dilation=dilation)
    assert outs[0].shape == outs[1].shape
    assert _layout(8, outs[1].shape[2], outs[1].shape[3], 1, 3, 1, 3, 6) == "image"
    assert outs[0].is_contiguous() and outs[0].stride() == outs[1].stride()
    np.testing.assert_allclose(outs[0]._data, outs[1].detach().numpy(), rtol=1e-10, atol=1e-12)
    assert_grads_match(ours, theirs, strides=True)


def test_transposed_conv_in_the_image_layout():
    """conv_transpose2d at stride 1 onto a larger map: the input gradient of a convolution in the image
    layout, here as the forward."""
    rng = np.random.default_rng(6)
    y, w = rng.standard_normal((2, 8, 16, 16)), rng.standard_normal((8, 4, 3, 3))
    ours_y, ours_w = taugrad.tensor(y, requires_grad=True), taugrad.tensor(w, requires_grad=True)
    theirs_y, theirs_w = torch.tensor(y, requires_grad=True), torch.tensor(w, requires_grad=True)
    ours = taugrad.nn.functional.conv_transpose2d(ours_y, ours_w, padding=1)
    theirs = torch.nn.functional.conv_transpose2d(theirs_y, theirs_w, padding=1)
    np.testing.assert_allclose(ours._data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    ours.sin().sum().backward()
    theirs.sin().sum().backward()
    np.testing.assert_allclose(ours_y.grad._data, theirs_y.grad.numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ours_w.grad._data, theirs_w.grad.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("channels", [2, 8])  # the batch-last layout, the image layout
def test_reused_buffers_are_never_overwritten_while_a_graph_holds_them(channels):
    """Two graphs of the same shapes alive at once, and one backward twice (retain_graph): each keeps its
    own padded input for the weight gradient, however the buffers are reused in between."""
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((2, channels, 20, 20)) for _ in range(2)]
    w = rng.standard_normal((4, channels, 3, 3))
    ours_w, theirs_w = taugrad.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ours = [taugrad.nn.functional.conv2d(taugrad.tensor(x), ours_w, padding=1).square().sum() for x in xs]
    theirs = [torch.nn.functional.conv2d(torch.tensor(x), theirs_w, padding=1).square().sum() for x in xs]
    ours[1].backward(retain_graph=True)
    ours[0].backward()
    ours[1].backward()
    theirs[1].backward(retain_graph=True)
    theirs[0].backward()
    theirs[1].backward()
    np.testing.assert_allclose(ours_w.grad._data, theirs_w.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_float32_block_stays_float32_and_contiguous_as_torch():
    """A float32 conv-BN-ReLU-conv-BN + identity block: every result float32, laid out as torch's."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 16, 16, 16)).astype(np.float32)
    ws = [rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.1 for _ in range(2)]
    results = []
    for L in (taugrad, torch):
        F = L.nn.functional
        xx = L.tensor(x, requires_grad=True)
        a, b = (L.tensor(v, requires_grad=True) for v in ws)
        h = F.batch_norm(F.conv2d(xx, a, padding=1), None, None, training=True).relu()
        out = (F.batch_norm(F.conv2d(h, b, padding=1), None, None, training=True) + xx).relu()
        out.sum().backward()
        results.append((out, xx.grad, a.grad))
    for mine, want in zip(*results):
        assert mine.dtype == taugrad.float32 and mine.stride() == want.stride()
        np.testing.assert_allclose(mine.detach().numpy(), want.detach().numpy(), rtol=2e-4, atol=2e-4)

"""The convolution's per-sample layout (many channels on a map of 64 outputs or more: channels-last
columns, one product per sample, the result in torch's (N, C, H, W) memory) against torch in float64:
strides, padding, dilation and 1x1 kernels, each gradient alone and both, through BatchNorm and ReLU
as in a ResNet stage.  Gradients have torch's strides: a cropped view of a padded buffer is copied
into the parameter's layout when it becomes ``.grad``."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad
from taugrad.tensors.ops.conv import _layout

from conv_block_cases import assert_grads_match, conv_bn_relu_conv

CASES = [  # (stride, padding, dilation, kernel)
    (1, 1, 1, 3), (2, 1, 1, 3), (1, 0, 1, 3), (1, 2, 2, 3), (1, (2, 1), (2, 1), 3), (1, 0, (1, 2), 3),
    (2, 0, 1, 1), (1, 0, 1, 1), ((2, 1), 1, 1, 3), (1, 1, 1, (3, 5)),
]


@pytest.mark.parametrize("stride, padding, dilation, kernel", CASES)
@pytest.mark.parametrize("needs", ["both", "weight", "input"])
def test_sample_layout_agrees_with_torch(stride, padding, dilation, kernel, needs):
    rng = np.random.default_rng(7)
    # stride 1 on 256 outputs or more is the image layout's: a smaller map there
    x = rng.standard_normal((3, 24, 14, 13) if stride == 1 else (3, 24, 22, 21))
    k = (kernel, kernel) if isinstance(kernel, int) else kernel
    w1, w2 = rng.standard_normal((20, 24) + k), rng.standard_normal((8, 20, 3, 3))
    outs, ours, theirs = conv_bn_relu_conv(x, w1, w2, needs, stride=stride, padding=padding, dilation=dilation)
    oh, ow = outs[1].shape[2:]
    sh = stride if isinstance(stride, int) else stride[0]
    # 1x1 kernels over 24 channels into 20 are few columns and many filters: per-sample planes
    assert _layout(24, oh, ow, 1, k[1], sh, k[0], 20) == ("planes" if k == (1, 1) else "samples")
    assert outs[0].shape == outs[1].shape
    assert outs[0].is_contiguous() and outs[0].stride() == outs[1].stride()
    np.testing.assert_allclose(outs[0]._data, outs[1].detach().numpy(), rtol=1e-10, atol=1e-12)
    assert_grads_match(ours, theirs, strides=True)


def test_transposed_conv_in_the_sample_layout():
    """conv_transpose2d with many channels: the input gradient of a per-sample convolution as the forward
    (stride 1 as a convolution with the flipped kernel, stride 2 through col2im)."""
    rng = np.random.default_rng(8)
    for stride, padding in ((1, 1), (2, 1)):
        y, w = rng.standard_normal((2, 20, 10, 10)), rng.standard_normal((20, 24, 3, 3))
        ours_y, ours_w = taugrad.tensor(y, requires_grad=True), taugrad.tensor(w, requires_grad=True)
        theirs_y, theirs_w = torch.tensor(y, requires_grad=True), torch.tensor(w, requires_grad=True)
        ours = taugrad.nn.functional.conv_transpose2d(ours_y, ours_w, stride=stride, padding=padding)
        theirs = torch.nn.functional.conv_transpose2d(theirs_y, theirs_w, stride=stride, padding=padding)
        np.testing.assert_allclose(ours._data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
        ours.sin().sum().backward()
        theirs.sin().sum().backward()
        np.testing.assert_allclose(ours_y.grad._data, theirs_y.grad.numpy(), rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(ours_w.grad._data, theirs_w.grad.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("channels, filters, stride, padding", [(1, 32, 1, 1), (3, 16, 1, 1), (3, 16, 2, 1),
                                                                (2, 20, 1, (0, 2))])
def test_first_layer_planes_agree_with_torch(channels, filters, stride, padding):
    """Few input columns and many filters (an image's first layer) take per-sample planes: values, both
    gradients and torch's strides."""
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((3, channels, 12, 11)), rng.standard_normal((filters, channels, 3, 3))
    ours = [taugrad.tensor(a, requires_grad=True) for a in (x, w)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    outs = [L.nn.functional.conv2d(a, b, stride=stride, padding=padding) for L, (a, b) in
            ((taugrad, ours), (torch, theirs))]
    oh, ow = outs[1].shape[2:]
    assert _layout(channels, oh, ow, 1, 3, stride, 3, filters) == "planes"
    assert outs[0].stride() == outs[1].stride()
    np.testing.assert_allclose(outs[0]._data, outs[1].detach().numpy(), rtol=1e-10, atol=1e-12)
    for out in outs:
        out.tanh().sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad._data, b.grad.numpy(), rtol=1e-9, atol=1e-10)

"""conv - BatchNorm - ReLU - conv, as in a ResNet block, run in taugrad and in torch from the same float64 values,
for the tests of the convolution layouts."""
from __future__ import annotations

import numpy as np
import torch

import taugrad

NEEDS = {"both": (True, True), "weight": (False, True), "input": (True, False)}


def conv_bn_relu_conv(x, w1, w2, needs: str, **first):
    """``(first outputs, our leaves, torch's leaves)`` after ``sin(conv(relu(bn(conv(x, w1, **first))), w2)).sum()``
    ran backward in both; ``needs`` says which of the input and the weights require a gradient."""
    grads = NEEDS[needs]
    flags = (grads[0], grads[1], grads[1])
    ours = [taugrad.tensor(a, requires_grad=f) for a, f in zip((x, w1, w2), flags)]
    theirs = [torch.tensor(a, requires_grad=f) for a, f in zip((x, w1, w2), flags)]
    outs = []
    for L, (xx, a, b) in ((taugrad, ours), (torch, theirs)):
        F = L.nn.functional
        h = F.conv2d(xx, a, **first)
        outs.append(h)
        h = F.batch_norm(h, None, None, training=True).relu()
        F.conv2d(h, b, padding=1).sin().sum().backward()
    return outs, ours, theirs


def assert_grads_match(ours, theirs, strides: bool = False) -> None:
    """Each leaf's gradient as torch's (float64 rounding), None where torch has none; with ``strides``, torch's
    steps too (its layout contract compares those of axes longer than 1)."""
    for a, b in zip(ours, theirs):
        if b.grad is None:
            assert a.grad is None
            continue
        np.testing.assert_allclose(a.grad._data, b.grad.numpy(), rtol=1e-9, atol=1e-10)
        if strides:
            assert [s for s, n in zip(a.grad.stride(), b.grad.shape) if n > 1] == \
                [s for s, n in zip(b.grad.stride(), b.grad.shape) if n > 1]

"""``taugrad.nn.functional``: activations and losses as functions (like ``torch.nn.functional``).

    import taugrad.nn.functional as F
    loss = F.cross_entropy(model(x), y)

Activations:  relu, gelu, tanh, sigmoid, softmax, log_softmax, softmin, silu, leaky_relu, elu, selu,
              celu, softplus, mish, hardtanh, relu6, hardswish, hardsigmoid, softsign, logsigmoid,
              glu, threshold, softshrink, hardshrink, tanhshrink, rrelu (evaluation only)
Distances:    cosine_similarity, pairwise_distance
Losses:       cross_entropy, nll_loss, mse_loss, binary_cross_entropy_with_logits, l1_loss, smooth_l1_loss,
              huber_loss, binary_cross_entropy, kl_div
Margin losses: margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss,
              cosine_embedding_loss, poisson_nll_loss, gaussian_nll_loss, triplet_margin_loss, multi_margin_loss
Other:        dropout, linear, one_hot, pad
CNNs:         conv1d, conv2d, conv_transpose2d, unfold, fold, max/avg/adaptive pooling,
              batch_norm, group_norm, dropout2d, interpolate

Softmax, log_softmax and the losses are fused ops with stable formulas (see
:mod:`taugrad.tensors.ops.losses`): logits of +-1e4 give finite losses and gradients, no
warnings.  Errors name the problem: float targets to ``cross_entropy`` are a
``TypeError``, an out-of-range class a ``ValueError`` naming it and the
number of classes, mismatched shapes a ``ValueError`` naming both.
"""
from __future__ import annotations

import numpy as np

from taugrad.tensors.ops import matmul as _matmul
from taugrad.tensors.ops.elementwise import gelu, relu, sigmoid, tanh
from taugrad.nn.functional.activation import (
    celu, elu, embedding, glu, hardshrink, hardsigmoid, hardswish, hardtanh, layer_norm, leaky_relu, logsigmoid,
    mish, normalize, relu6, rrelu, selu, silu, softmin, softplus, softshrink, softsign, tanhshrink, threshold,
)
from taugrad.nn.functional.attention import scaled_dot_product_attention
from taugrad.nn.functional import activation as _activations, distance as _distances
from taugrad.nn.functional import loss as _losses, margin_loss as _margin_losses
from taugrad.nn.functional.distance import cosine_similarity, pairwise_distance
from taugrad.nn.functional.loss import (
    binary_cross_entropy, binary_cross_entropy_with_logits, huber_loss, kl_div, l1_loss, smooth_l1_loss,
)
from taugrad.nn.functional.margin_loss import (
    cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,
    multilabel_soft_margin_loss, poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
)
from taugrad.tensors.ops.losses import (
    cross_entropy,
    dropout,
    log_softmax,
    mse_loss,
    nll_loss,
    softmax,
)
from taugrad.tensors.ops import shape as _shape
from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.node import Tensor, as_array, constant
from taugrad.tensors.ops.conv import conv1d, conv2d, conv_transpose2d, fold, pad_mode, unfold
from taugrad.tensors.ops.norm import batch_norm, dropout2d, group_norm, interpolate
from taugrad.tensors.ops.pool import (
    adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d,
)

__all__ = [
    "relu",
    "gelu",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "binary_cross_entropy_with_logits",
    "dropout",
    "linear",
    "one_hot",
    "pad",
    "scaled_dot_product_attention",
    # convolutional networks
    "conv1d", "conv2d", "conv_transpose2d", "unfold", "fold",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
    "batch_norm", "group_norm", "dropout2d", "interpolate",
]
# the composed activations, distances and losses: each module's own list
__all__ += [name for module in (_activations, _distances, _losses, _margin_losses)
            for name in module.__all__ if name not in __all__]


def linear(x: Tensor, weight: Tensor, bias: Tensor = None) -> Tensor:
    """``x @ weight.T + bias`` with ``weight`` of shape (out_features, in_features), as one op."""
    return _matmul.linear(x, weight, bias)


def one_hot(target, num_classes: int = -1) -> Tensor:
    """int64 tensor with a 1 at each target's class along a new last dimension."""
    t = target._data if isinstance(target, Tensor) else as_array(target)
    if t.dtype.kind not in "iu":
        raise TypeError(f"one_hot: targets must be integers, got dtype {t.dtype}")
    if num_classes < 0:
        num_classes = int(t.max()) + 1 if t.size else 0
    if t.size and bool(((t < 0) | (t >= num_classes)).any()):  # one read-back from a device
        bad = int(t.min()) if t.min() < 0 else int(t.max())
        raise ValueError(f"one_hot: class {bad} is out of range for {num_classes} classes")
    return constant((t[..., None] == array_module(t).arange(num_classes)).astype(np.int64))


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """``torch.nn.functional.pad``: widths ``(left, right, top, bottom, ...)``, last dimension first.

    ``'constant'`` surrounds the tensor with ``value`` (0 by default).
    ``'reflect'`` mirrors it without repeating the edge, ``'replicate'`` repeats the
    edge, ``'circular'`` wraps around; these pad 1 to 3 last dims of a tensor with
    channels (and a batch dim or not), as PyTorch's.
    """
    if mode == "constant":
        return _shape.pad(input, pad, "constant", 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
    if value is not None and value != 0:
        raise ValueError(f"pad: mode {mode!r} takes no value (got {value!r})")
    return pad_mode(input, pad, mode, "pad")

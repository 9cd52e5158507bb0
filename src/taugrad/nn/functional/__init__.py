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

One module per family: ``activation``, ``attention``, ``distance``, ``loss``,
``margin_loss``, ``normalization``, ``sparse`` (embedding, one_hot), ``linear``,
``vision`` (pad); their shared private helpers are in ``_helpers``.

Softmax, log_softmax and the losses are fused ops with stable formulas (see
:mod:`taugrad.tensors.ops.losses`): logits of +-1e4 give finite losses and gradients, no
warnings.  Errors name the problem: float targets to ``cross_entropy`` are a
``TypeError``, an out-of-range class a ``ValueError`` naming it and the
number of classes, mismatched shapes a ``ValueError`` naming both.
"""
from __future__ import annotations

from taugrad.tensors.ops.elementwise import gelu
from taugrad.tensors.ops.conv import conv1d, conv2d, conv_transpose2d, fold, unfold
from taugrad.nn.functional.dropout import dropout, dropout2d
from taugrad.tensors.ops.pool import (
    adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d,
)
from taugrad.nn.functional.activation import (
    celu, celu_, elu, elu_, glu, hardshrink, hardsigmoid, hardswish, hardtanh, hardtanh_, leaky_relu, leaky_relu_,
    prelu, sigmoid, tanh,
    log_softmax, logsigmoid, mish, relu, relu_, relu6, rrelu, rrelu_, selu, selu_, silu, softmax, softmin, softplus,
    softshrink, softsign, tanhshrink, threshold, threshold_,
)
from taugrad.nn.functional.attention import scaled_dot_product_attention
from taugrad.nn.functional.distance import cosine_similarity, pairwise_distance
from taugrad.nn.functional.linear import linear
from taugrad.nn.functional.loss import (
    binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, huber_loss, kl_div, l1_loss, mse_loss,
    nll_loss, smooth_l1_loss,
)
from taugrad.nn.functional.margin_loss import (
    cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,
    multilabel_soft_margin_loss, poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
)
from taugrad.nn.functional.normalization import (
    batch_norm, group_norm, instance_norm, layer_norm, normalize, rms_norm,
)
from taugrad.nn.functional.sparse import embedding, one_hot
from taugrad.nn.functional.vision import interpolate, pad, pixel_shuffle, pixel_unshuffle
from taugrad.nn.functional import (
    activation as _activations, distance as _distances, loss as _losses, margin_loss as _margin_losses,
    normalization as _normalization, sparse as _sparse,
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
# the composed activations, distances, losses, normalisations and lookups: each module's own list
__all__ += [name for module in (_activations, _distances, _losses, _margin_losses, _normalization, _sparse)
            for name in module.__all__ if name not in __all__]

"""Loss modules: each holds its options and calls the function of the same name in :mod:`taugrad.nn.functional`.

``criterion = nn.CrossEntropyLoss(label_smoothing=0.1); loss = criterion(logits, target)``,
as in PyTorch.  Class weights and ``pos_weight`` are registered buffers (in the
state dict), as PyTorch's.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

import taugrad.nn.functional as F
from taugrad.nn.module import Module
from taugrad.tensors.core.backend import is_array
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.losses import legacy_reduction

__all__ = [
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "TripletMarginLoss",
    "MultiMarginLoss",
]


def _buffer(value: Any) -> Optional[Tensor]:
    if value is None or isinstance(value, Tensor):
        return value
    return Tensor(value if is_array(value) else np.asarray(value))


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight: Any = None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer(weight))


class MSELoss(_Loss):
    """Mean squared error ``(input - target)^2``, reduced."""

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|input - target|``, reduced."""

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above (see :func:`taugrad.nn.functional.smooth_l1_loss`)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, then linear with slope ``delta`` (see :func:`taugrad.nn.functional.huber_loss`)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CrossEntropyLoss(_WeightedLoss):
    """Softmax cross-entropy; class indices or probabilities (see :func:`taugrad.nn.functional.cross_entropy`)."""

    def __init__(self, weight: Any = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices given log-probabilities."""

    def __init__(self, weight: Any = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities (see :func:`taugrad.nn.functional.binary_cross_entropy`)."""

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits, with optional ``weight`` and ``pos_weight`` (both buffers)."""

    def __init__(self, weight: Any = None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight: Any = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer(weight))
        self.register_buffer("pos_weight", _buffer(pos_weight))

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class KLDivLoss(_Loss):
    """KL divergence with log-probability inputs (see :func:`taugrad.nn.functional.kl_div`)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_Loss):
    """``max(0, -y (x1 - x2) + margin)`` (see :func:`taugrad.nn.functional.margin_ranking_loss`)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Any, input2: Any, target: Any) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` for ``y = 1``, ``max(0, margin - x)`` for ``y = -1`` (see :func:`taugrad.nn.functional.hinge_embedding_loss`)."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y x))`` (see :func:`taugrad.nn.functional.soft_margin_loss`)."""

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss averaged over classes (see :func:`taugrad.nn.functional.multilabel_soft_margin_loss`)."""

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos`` for ``y = 1``, ``max(0, cos - margin)`` for ``y = -1`` (see
    :func:`taugrad.nn.functional.cosine_embedding_loss`)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Any, input2: Any, target: Any) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood (see :func:`taugrad.nn.functional.poisson_nll_loss`)."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Any, target: Any) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood with predicted variance (see :func:`taugrad.nn.functional.gaussian_nll_loss`)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Any, target: Any, var: Any) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(0, d(a, p) - d(a, n) + margin)`` (see :func:`taugrad.nn.functional.triplet_margin_loss`)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: margin must be greater than 0, got {margin}")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Any, positive: Any, negative: Any) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (see :func:`taugrad.nn.functional.multi_margin_loss`)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Any = None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got {p}")
        if weight is not None and np.ndim(weight._data if isinstance(weight, Tensor) else weight) != 1:
            raise ValueError("MultiMarginLoss: weight must be one-dimensional")
        super().__init__(weight, size_average, reduce, reduction)
        self.p = p
        self.margin = margin

    def forward(self, input: Any, target: Any) -> Tensor:
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)

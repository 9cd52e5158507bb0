"""Distance modules, each calling its function in :mod:`taugrad.nn.functional`; their reprs and
attributes are PyTorch's (``PairwiseDistance`` keeps ``p`` as ``norm``)."""
from __future__ import annotations

from typing import Any

import taugrad.nn.functional as F
from taugrad.nn.module import Module
from taugrad.tensors.core.node import Tensor

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (norms clamped to ``eps``)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Any, x2: Any) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` along the last dimension."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Any, x2: Any) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)

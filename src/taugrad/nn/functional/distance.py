"""Distances and similarities of ``torch.nn.functional`` composed from registered Tensor ops.

``cosine_similarity`` and ``pairwise_distance``: short compositions of
products, sums and ``vector_norm``, so their gradients (and higher
derivatives) come from the ops' own rules.  Both broadcast ``x1`` against
``x2`` first, as PyTorch does, and handle a near-zero vector as PyTorch does;
the comments say how.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from taugrad.nn.functional._helpers import floating as _floating, input_tensor as _tensor
from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.linalg import vector_norm

__all__ = ["cosine_similarity", "pairwise_distance"]


def _broadcast(x1: Tensor, x2: Tensor, op: str) -> tuple:
    try:
        return tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    except ValueError:
        raise ValueError(f"{op}: shapes {tuple(x1.shape)} and {tuple(x2.shape)} cannot broadcast") from None


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Tensor:
    r"""``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))`` along ``dim``: the cosine of the angle.

    As PyTorch 2: ``x1`` and ``x2`` are broadcast to one shape first (so a size
    1 along ``dim`` counts once per element of the other), and each 2-norm is
    clamped to ``eps`` on its own.  PyTorch clamps in place under ``no_grad``,
    so the gradient flows as if there were no clamp: the norm is written
    ``n + (max(n, eps) - n).detach()``, the clamped value with the norm's own
    gradient (a zero vector's norm has gradient 0).
    """
    a = _floating(_tensor(x1, "cosine_similarity"), "cosine_similarity")
    b = _floating(_tensor(x2, "cosine_similarity"), "cosine_similarity")
    shape = _broadcast(a, b, "cosine_similarity")
    d = normalize_dim(dim, len(shape), "cosine_similarity") if shape else dim
    if tuple(a.shape) != shape:
        a = a.expand(*shape)
    if tuple(b.shape) != shape:
        b = b.expand(*shape)
    na = vector_norm(a, 2, dim=d, keepdim=True)
    nb = vector_norm(b, 2, dim=d, keepdim=True)
    na = na + (na.clip(eps, None) - na).detach()
    nb = nb + (nb.clip(eps, None) - nb).detach()
    return ((a / na) * (b / nb)).sum(dim=d)


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    r"""``||x1 - x2 + eps||_p`` along the last dimension of the broadcast shape.

    ``eps`` is added to the difference (not to the norm), as PyTorch does, so
    equal vectors have distance ``eps * n^(1/p)`` and a finite gradient; with
    ``eps=0`` they get the norm's gradient at 0, which is 0.
    """
    a = _floating(_tensor(x1, "pairwise_distance"), "pairwise_distance")
    b = _floating(_tensor(x2, "pairwise_distance"), "pairwise_distance")
    _broadcast(a, b, "pairwise_distance")
    return vector_norm(a - b + eps, p, dim=-1, keepdim=keepdim)

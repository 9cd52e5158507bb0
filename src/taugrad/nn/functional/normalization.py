"""Normalisations of ``torch.nn.functional``: ``normalize`` composed from registered ops; ``layer_norm``,
``batch_norm`` and ``group_norm`` are ops of their own (one node each, with its own rule)."""
from __future__ import annotations

from typing import Any

from taugrad.nn.functional._helpers import floating as _floating, input_tensor as _tensor
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.norm import batch_norm, group_norm, layer_norm

__all__ = ["normalize", "layer_norm", "batch_norm", "group_norm"]


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None) -> Tensor:
    r"""``x / max(||x||_p, eps)`` along ``dim`` (``torch.nn.functional.normalize``):
    :math:`y = x / \max(\lVert x \rVert_p, \epsilon)`; at an all-zero ``x`` the gradient is finite, as PyTorch's."""
    if out is not None:
        raise TypeError("normalize: out= is not supported")
    x = _floating(_tensor(input, "normalize"), "normalize")
    # the norm op, as PyTorch's: its gradient at an all-zero vector is 0 (a composed sqrt(sum(x^2))
    # would give inf * 0 = nan there, which reaches the weights behind a ReLU that zeroed a row)
    norm = x.norm(p, dim=dim, keepdim=True)
    return x / norm.clip(eps, None)

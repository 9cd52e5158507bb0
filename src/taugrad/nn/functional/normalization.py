"""Normalisations of ``torch.nn.functional``: ``normalize`` composed from registered ops; ``layer_norm``,
``batch_norm`` and ``group_norm`` are ops of their own (one node each, with its own rule)."""
from __future__ import annotations

from typing import Any

from taugrad.nn.functional._helpers import floating as _floating, input_tensor as _tensor
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.norm import batch_norm, group_norm, layer_norm

__all__ = ["normalize", "layer_norm", "batch_norm", "group_norm"]


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None) -> Tensor:
    r"""``x / max(||x||_p, eps)`` along ``dim`` (``torch.nn.functional.normalize``)."""
    if out is not None:
        raise TypeError("normalize: out= is not supported")
    x = _floating(_tensor(input, "normalize"), "normalize")
    if p == 2:
        norm = (x * x).sum(dim=dim, keepdim=True).sqrt()
    elif p == 1:
        norm = x.abs().sum(dim=dim, keepdim=True)
    elif p == float("inf"):
        norm = x.abs().amax(dim=dim, keepdim=True)
    else:
        norm = (x.abs() ** p).sum(dim=dim, keepdim=True) ** (1.0 / p)
    return x / norm.clip(eps, None)

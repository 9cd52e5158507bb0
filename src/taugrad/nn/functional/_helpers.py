"""The private helpers the ``nn.functional`` modules share: one input rule, one dtype rule, one reduction.

Each function module imports what it needs from here (never another module's
privates), so a rule such as "a loss's ``reduction`` must be 'mean', 'sum' or
'none'" is written once.
"""
from __future__ import annotations

from typing import Any

from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops import losses as _fused
from taugrad.tensors.ops.anyarray import input_tensor  # noqa: F401 - the ops' input rule, one place

__all__ = ["input_tensor", "floating", "reduce", "pair"]


def floating(x: Tensor, op: str) -> Tensor:
    """``x`` itself if its dtype is floating (or complex), else a TypeError naming ``op``."""
    if x._data.dtype.kind not in "fc":
        raise TypeError(f"{op}: needs a floating tensor, got dtype {x._data.dtype}")
    return x


def reduce(losses: Tensor, reduction: str, op: str) -> Tensor:
    """``losses`` reduced as ``reduction`` says: ``'none'`` as they are, ``'sum'``, or ``'mean'``."""
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    if reduction == "mean":
        return losses.mean()
    raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def pair(input: Any, target: Any, op: str):
    """(input, target) as Tensors of one floating dtype and one shape."""
    x = input_tensor(input, op)
    if x._data.dtype.kind not in "fc":
        raise TypeError(f"{op}: input must be floating, got dtype {x._data.dtype}")
    y = _fused._target_like(target, x, op)
    _fused._same_shape(x, y, op)
    return x, y

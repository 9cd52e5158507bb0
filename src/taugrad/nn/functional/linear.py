"""``torch.nn.functional.linear``: one fused op (``x @ weight.T + bias``)."""
from __future__ import annotations

from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops import matmul as _matmul

__all__ = ["linear"]


def linear(x: Tensor, weight: Tensor, bias: Tensor = None) -> Tensor:
    """``x @ weight.T + bias`` with ``weight`` of shape (out_features, in_features), as one op."""
    return _matmul.linear(x, weight, bias)

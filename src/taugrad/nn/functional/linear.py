"""``torch.nn.functional.linear``: one fused op (``x @ weight.T + bias``)."""
from __future__ import annotations

from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops import matmul as _matmul

__all__ = ["linear"]


def linear(input: Tensor, weight: Tensor, bias: Tensor = None) -> Tensor:
    """``input @ weight.T + bias`` with ``weight`` of shape (out_features, in_features), as one op.

    The first parameter is named ``input`` as torch's, so ``F.linear(input=x, weight=w)`` works.
    """
    return _matmul.linear(input, weight, bias)

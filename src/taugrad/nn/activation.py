"""Activation modules beyond those in :mod:`taugrad.nn.layers`, each calling its function in
:mod:`taugrad.functional`; their reprs are PyTorch's (``LeakyReLU(negative_slope=0.2)``).

``inplace=True`` is accepted and computes out of place (the result is the same
unless other code holds the input; it appears in the repr as in PyTorch).
"""
from __future__ import annotations

from typing import Any, Optional

import taugrad.functional as F
from taugrad.nn.module import Module
from taugrad.tensors.node import Tensor
from taugrad.tensors.ops.losses import log_softmax, softmax

__all__ = ["Softmax", "LogSoftmax", "SiLU", "LeakyReLU", "ELU", "Softplus", "Hardtanh", "ReLU6", "Softsign",
           "LogSigmoid"]


def _inplace(inplace: bool, first: bool = True) -> str:
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


def _legacy_dim(dim: Optional[int], ndim: int) -> int:
    """PyTorch's choice when no ``dim`` is given: 0 for 0-, 1- and 3-d inputs, else 1 (it warns; so should you)."""
    if dim is not None:
        return dim
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``dim``."""

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Tensor:
        return softmax(input, _legacy_dim(self.dim, getattr(input, 'ndim', 1)))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """``x - logsumexp(x)`` along ``dim``."""

    def forward(self, input: Any) -> Tensor:
        return log_softmax(input, _legacy_dim(self.dim, getattr(input, 'ndim', 1)))


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.silu(input)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class LeakyReLU(Module):
    """``x`` if ``x > 0`` else ``negative_slope * x``."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace(self.inplace, False)}"


class ELU(Module):
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace(self.inplace, False)}"


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta`` (linear above ``threshold``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Any) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace(self.inplace, False)}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input: Any) -> Tensor:
        return F.softsign(input)


class LogSigmoid(Module):
    """``log(sigmoid(x))``."""

    def forward(self, input: Any) -> Tensor:
        return F.logsigmoid(input)

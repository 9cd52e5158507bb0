"""Activation modules beyond those in :mod:`taugrad.nn.layers`, each calling its function in
:mod:`taugrad.nn.functional`; their reprs are PyTorch's (``LeakyReLU(negative_slope=0.2)``).

``inplace=True`` writes the result into the input and returns it, as PyTorch
does (a forward hook or a residual that reuses the input sees the new values).
"""
from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

import taugrad.nn.functional as F
from taugrad.nn.layers import factory_kwargs, place
from taugrad.nn.module import Module, Parameter
from taugrad.tensors.core.node import Tensor

__all__ = ["PReLU", "Softmax", "LogSoftmax", "SiLU", "LeakyReLU", "ELU", "Softplus", "Hardtanh", "ReLU6", "Softsign",
           "LogSigmoid", "SELU", "CELU", "Mish", "Hardswish", "Hardsigmoid", "GLU", "Softmin", "Threshold",
           "Softshrink", "Hardshrink", "Tanhshrink", "RReLU"]


def _inplace(inplace: bool, first: bool = True) -> str:
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class _AlongDim(Module):
    """What Softmax, LogSoftmax and Softmin share (a ``dim`` and its repr); private, so that a
    ``LogSoftmax`` is no ``Softmax``, as in PyTorch."""

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    """``exp(x) / sum(exp(x))`` along ``dim``."""

    def forward(self, input: Any) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_AlongDim):
    """``x - logsumexp(x)`` along ``dim``."""

    def forward(self, input: Any) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.silu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class LeakyReLU(Module):
    """``x`` if ``x > 0`` else ``negative_slope * x``."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace(self.inplace, False)}"


class ELU(Module):
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

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

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: Optional[float] = None, max_value: Optional[float] = None) -> None:
        super().__init__()
        # torch still takes the old names min_value/max_value (with a deprecation warning)
        if min_value is not None:
            warnings.warn("Hardtanh: min_value is deprecated, use min_val", DeprecationWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("Hardtanh: max_value is deprecated, use max_val", DeprecationWarning, stacklevel=2)
            max_val = max_value
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

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


class _Inplace(Module):
    """An activation with only ``inplace`` (shown in its repr); private, so that a ``Mish`` is no
    ``SELU``, as in PyTorch."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return _inplace(self.inplace)


class SELU(_Inplace):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with PyTorch's constants."""

    def forward(self, input: Any) -> Tensor:
        return F.selu(input, self.inplace)


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace(self.inplace, False)}"


class Mish(_Inplace):
    """``x * tanh(softplus(x))``."""

    def forward(self, input: Any) -> Tensor:
        return F.mish(input, self.inplace)


class _InplaceUnshown(Module):
    """An activation with only ``inplace``, which PyTorch's repr does not show; private, so that a
    ``Hardsigmoid`` is no ``Hardswish``, as in PyTorch."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardswish(_InplaceUnshown):
    """``x * relu6(x + 3) / 6``; PyTorch's repr shows no ``inplace``, nor does this one."""

    def forward(self, input: Any) -> Tensor:
        return F.hardswish(input, self.inplace)


class Hardsigmoid(_InplaceUnshown):
    """``relu6(x + 3) / 6``."""

    def forward(self, input: Any) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class GLU(Module):
    """``a * sigmoid(b)`` for the two halves ``a``, ``b`` of the input along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_AlongDim):
    """``softmax(-x)`` along ``dim``."""

    def forward(self, input: Any) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)


class Threshold(Module):
    """``x`` if ``x > threshold`` else ``value``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace(self.inplace, False)}"


class _Shrink(Module):
    """What Softshrink and Hardshrink share (``lambd`` and its repr); private, so that a
    ``Hardshrink`` is no ``Softshrink``, as in PyTorch."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(_Shrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""

    def forward(self, input: Any) -> Tensor:
        return F.softshrink(input, self.lambd)


class Hardshrink(_Shrink):
    """``x`` if ``|x| > lambd`` else 0."""

    def forward(self, input: Any) -> Tensor:
        return F.hardshrink(input, self.lambd)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input: Any) -> Tensor:
        return F.tanhshrink(input)


class RReLU(Module):
    """Randomized leaky ReLU, in evaluation mode only: ``leaky_relu`` with slope ``(lower + upper) / 2``.

    In training mode (a module's default; call ``.eval()``) the forward raises
    ``NotImplementedError``: the random slope per element is not supported.
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Any) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace(self.inplace, False)}"


class PReLU(Module):
    """``x`` if ``x > 0`` else ``a x`` with a learnable slope ``a``: one (``num_parameters=1``) or one per channel."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        dev, dtype = factory_kwargs(type(self).__name__, device, dtype)
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(np.full(num_parameters, init, dtype=dtype))
        place(self, dev)

    def forward(self, input: Any) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"

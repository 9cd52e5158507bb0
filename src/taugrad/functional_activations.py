"""Activations and normalisations of ``torch.nn.functional`` composed from registered Tensor ops.

Each is a short composition, so its gradient (and higher derivatives) comes
from the ops' own rules.  Where a composition would differ from PyTorch at a
point (a kink, a branch whose other side overflows), the formula is arranged
to give PyTorch's value and gradient there; the comments say how.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from taugrad.tensors.backend import array_module
from taugrad.tensors.node import Tensor, as_array, constant
from taugrad.tensors.ops.elementwise import where
from taugrad.tensors.ops.losses import _input_tensor as _tensor  # the losses' input rule, one place
from taugrad.tensors.ops.losses import binary_cross_entropy_with_logits

__all__ = [
    "silu",
    "leaky_relu",
    "elu",
    "softplus",
    "hardtanh",
    "relu6",
    "softsign",
    "logsigmoid",
    "normalize",
    "layer_norm",
    "embedding",
]




def _floating(x: Tensor, op: str) -> Tensor:
    if x._data.dtype.kind not in "fc":
        raise TypeError(f"{op}: needs a floating tensor, got dtype {x._data.dtype}")
    return x


def silu(input: Any, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (the swish of Ramachandran et al., 2017)."""
    x = _floating(_tensor(input, "silu"), "silu")
    return x * x.sigmoid()


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``negative_slope * x`` (slope ``negative_slope`` at 0, as PyTorch)."""
    x = _floating(_tensor(input, "leaky_relu"), "leaky_relu")
    return where(x > 0, x, x * negative_slope)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)`` (Clevert et al., 2016).

    The exponential is taken of ``min(x, 0)``: on the positive side its branch
    is discarded, and ``exp`` of a large ``x`` would overflow to inf and turn the
    discarded branch's zero gradient into nan.
    """
    x = _floating(_tensor(input, "elu"), "elu")
    negative = x.clip(None, 0.0)
    return where(x > 0, x, (negative.exp() - 1.0) * alpha)


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold`` (as PyTorch).

    ``log(1 + exp(z))`` is the binary cross-entropy with logits of ``z`` against
    target 0, whose fused op is stable for any ``z`` and has the exact gradient
    ``sigmoid(z)`` (also at 0), so it is computed that way.
    """
    x = _floating(_tensor(input, "softplus"), "softplus")
    z = x * beta if beta != 1 else x
    zeros = constant(array_module(x._data).zeros(x.shape, dtype=x._data.dtype))
    smooth = binary_cross_entropy_with_logits(z, zeros, reduction="none")
    if beta != 1:
        smooth = smooth * (1.0 / beta)
    return where(z > threshold, x, smooth)


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)``, with gradient 1 strictly inside and 0 at the bounds and outside (as PyTorch)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
    x = _floating(_tensor(input, "hardtanh"), "hardtanh")
    inside = (x > min_val) & (x < max_val)
    return where(inside, x, constant(array_module(x._data).clip(x._data, min_val, max_val)))


def relu6(input: Any, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)`` (``hardtanh(x, 0, 6)``)."""
    return hardtanh(input, 0.0, 6.0)


def softsign(input: Any) -> Tensor:
    """``x / (1 + |x|)``."""
    x = _floating(_tensor(input, "softsign"), "softsign")
    return x / (x.abs() + 1.0)


def logsigmoid(input: Any) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, stable for any ``x``."""
    x = _floating(_tensor(input, "logsigmoid"), "logsigmoid")
    return -softplus(-x, threshold=float("inf"))


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


def layer_norm(input: Any, normalized_shape: Union[int, Sequence[int]], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5) -> Tensor:
    r"""``(x - mean) / sqrt(var + eps) * weight + bias`` over the last ``len(normalized_shape)`` dims.

    ``var`` is the biased variance (divided by N), as in PyTorch.
    """
    x = _floating(_tensor(input, "layer_norm"), "layer_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    k = len(shape)
    if x.ndim < k or tuple(x.shape[x.ndim - k:]) != tuple(shape):
        raise ValueError(f"layer_norm: normalized_shape {tuple(shape)} must be the input's last dimensions, "
                         f"got input shape {tuple(x.shape)}")
    dims: Tuple[int, ...] = tuple(range(-k, 0))
    centred = x - x.mean(dim=dims, keepdim=True)
    variance = (centred * centred).mean(dim=dims, keepdim=True)
    out = centred / (variance + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def embedding(input: Any, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer indices ``input`` (any shape; the output appends the row).

    ``padding_idx``: that row gets no gradient.  ``max_norm``,
    ``scale_grad_by_freq`` and ``sparse`` are not supported (a clear error).
    """
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    index = input._data if isinstance(input, Tensor) else as_array(input)
    if index.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {index.dtype}")
    rows = weight.shape[0]
    # one check, so one read-back from a device (a GPU would wrap a bad index around silently)
    if index.size and bool(((index < 0) | (index >= rows)).any()):
        raise IndexError(f"embedding: index out of range for {rows} rows: min {index.min()}, max {index.max()}")
    out = weight[index]
    if padding_idx is not None:
        keep = (index != padding_idx % rows)[..., None].astype(weight._data.dtype)
        out = where(constant(keep > 0), out, out.detach())  # same values, no gradient into the padding row
    return out

"""Normalisations of ``torch.nn.functional``: ``normalize`` composed from registered ops; ``layer_norm``,
``batch_norm`` and ``group_norm`` are ops of their own (one node each, with its own rule)."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from taugrad.grad_mode import no_grad
from taugrad.nn.functional._helpers import floating as _floating, input_tensor as _tensor
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.norm import batch_norm, group_norm, layer_norm

__all__ = ["normalize", "layer_norm", "batch_norm", "group_norm", "instance_norm", "rms_norm"]


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


def instance_norm(input: Any, running_mean: Any = None, running_var: Any = None, weight: Any = None,
                  bias: Any = None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    r"""Normalise each sample's channels over their spatial positions: :math:`y = (x - \mu_{nc}) /
    \sqrt{\sigma^2_{nc} + \epsilon} \cdot w_c + b_c` for input (N, C, ...).

    ``use_input_stats=False`` uses ``running_mean``/``running_var`` instead (as
    batch norm in evaluation); with input statistics, given running estimates
    are updated in place with the batch's mean of the per-instance mean and
    unbiased variance, as PyTorch.
    """
    x = _floating(_tensor(input, "instance_norm"), "instance_norm")
    if x.ndim < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dimensions (N, C, ...), got shape "
                         f"{tuple(x.shape)}")
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: Expected running_mean and running_var to be defined when "
                             "use_input_stats is false")
        return batch_norm(x, running_mean, running_var, weight, bias, False, momentum, eps)
    out = group_norm(x, x.shape[1], weight, bias, eps)
    if running_mean is not None or running_var is not None:
        data = x._data
        axes = tuple(range(2, data.ndim))
        count = math.prod(data.shape[2:])
        for buffer, stat in ((running_mean, data.mean(axis=axes)),
                             (running_var, data.var(axis=axes) * (count / max(count - 1, 1)))):
            if buffer is not None:
                with no_grad():
                    buffer.mul_(1.0 - momentum).add_(Tensor(stat.mean(axis=0).astype(buffer._data.dtype)),
                                                     alpha=momentum)
    return out


def rms_norm(input: Any, normalized_shape: Any, weight: Any = None, eps: Optional[float] = None) -> Tensor:
    r"""Root-mean-square normalisation over the last ``len(normalized_shape)`` dims (Zhang & Sennrich, 2019):
    :math:`y = x / \sqrt{\mathrm{mean}(x^2) + \epsilon} \cdot w`; ``eps`` defaults to the dtype's machine epsilon."""
    x = _floating(_tensor(input, "rms_norm"), "rms_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(x.shape[x.ndim - len(shape):]) != shape or len(shape) > x.ndim:
        raise ValueError(f"rms_norm: normalized_shape {shape} does not match the last dims of the input "
                         f"{tuple(x.shape)}")
    if eps is None:
        eps = float(np.finfo(x._data.dtype).eps)
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    out = x * ((x * x).mean(dim=dims, keepdim=True) + eps).rsqrt() if dims else x * (x * x + eps).rsqrt()
    return out if weight is None else out * weight

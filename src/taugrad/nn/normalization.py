"""BatchNorm1d/2d, GroupNorm, Dropout2d and Upsample, as ``torch.nn``.

Batch norm keeps PyTorch's state: parameters ``weight`` (ones) and ``bias``
(zeros) when ``affine``, buffers ``running_mean`` (zeros), ``running_var``
(ones) and ``num_batches_tracked`` (an int64 count) when
``track_running_stats`` -- the same state-dict keys, so the statistics travel
to ``torch.nn`` and back.  In training mode it normalises with the batch's
statistics and updates the running ones (momentum ``m``:
``r <- (1 - m) r + m stat``, the variance unbiased; ``momentum=None`` is the
cumulative average ``m = 1 / num_batches_tracked``); ``eval()`` normalises
with the running statistics.

``device=`` and ``dtype=`` are PyTorch's factory arguments
(:func:`taugrad.nn.layers.factory_kwargs`): the floating parameters and
buffers are made in ``dtype`` (``num_batches_tracked`` stays int64) on the
CPU, then moved.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from taugrad.nn.functional.dropout import dropout2d as _dropout2d
from taugrad.nn.functional.normalization import instance_norm as _instance_norm, rms_norm as _rms_norm
from taugrad.nn.layers import factory_kwargs, place
from taugrad.nn.module import Module, Parameter
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops import norm as _norm

__all__ = ["BatchNorm1d", "BatchNorm2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "Dropout2d", "Upsample", "RMSNorm"]


def _affine_parameters(module: Module, affine: bool, bias: bool, n: int, dtype) -> None:
    """A norm layer's ``weight`` (ones) and ``bias`` (zeros) of ``n`` values; ``bias=False`` keeps only the weight."""
    if affine:
        module.weight = Parameter(np.ones(n, dtype=dtype))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(np.zeros(n, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def _num_features(module: Module, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{type(module).__name__}: num_features must be a positive int, got {value!r}")
    return int(value)


def _running_buffers(module: Module, tracked: bool, num_features: int, dtype: Any) -> None:
    """``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked`` (int64 0), or three None
    buffers when statistics are not tracked, as torch registers them."""
    if tracked:
        module.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype=dtype)))
        module.register_buffer("running_var", Tensor(np.ones(num_features, dtype=dtype)))
        module.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)))
    else:
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            module.register_buffer(name, None)


class _BatchNorm(Module):
    _input_dims: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        dev, dtype = factory_kwargs(type(self).__name__, device, dtype)
        self.num_features = _num_features(self, num_features)
        self.eps = float(eps)
        self.momentum = momentum
        self.affine = bool(affine)
        self.track_running_stats = bool(track_running_stats)
        _affine_parameters(self, self.affine, bias, self.num_features, dtype)
        _running_buffers(self, self.track_running_stats, self.num_features, dtype)
        place(self, dev)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean._data[...] = 0
            self.running_var._data[...] = 1
            self.num_batches_tracked._data[...] = 0

    def forward(self, x: Any) -> Tensor:
        x = x if isinstance(x, Tensor) else Tensor(x)
        if x.ndim not in self._input_dims:
            raise ValueError(f"{type(self).__name__}: expected a "
                             f"{' or '.join(f'{d}-D' for d in self._input_dims)} input, got shape {tuple(x.shape)}")
        if x.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}({self.num_features}): the input has {x.shape[1]} channels "
                             f"(dim 1 of shape {tuple(x.shape)})")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked._data[...] += 1
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked._data)
        return _norm.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                self.training or not self.track_running_stats, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L): statistics per channel over the batch (and length)."""

    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W): statistics per channel over batch and space."""

    _input_dims = (4,)


class GroupNorm(Module):
    """Normalise each sample over groups of channels (independent of the batch), then scale/shift per channel."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        dev, dtype = factory_kwargs(type(self).__name__, device, dtype)
        if num_groups < 1 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = int(num_groups)
        self.num_channels = int(num_channels)
        self.eps = float(eps)
        self.affine = bool(affine)
        _affine_parameters(self, self.affine, bias, self.num_channels, dtype)
        place(self, dev)

    def forward(self, x: Any) -> Tensor:
        return _norm.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"


class _InstanceNorm(Module):
    """Normalise each sample's channels over space (``group_norm`` with one group per channel)."""

    _input_dims: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        dev, dtype = factory_kwargs(type(self).__name__, device, dtype)
        self.num_features = _num_features(self, num_features)
        self.eps = float(eps)
        self.momentum = momentum
        self.affine = bool(affine)
        self.track_running_stats = bool(track_running_stats)
        _affine_parameters(self, self.affine, bias, self.num_features, dtype)
        # torch's buffers; instance norm keeps the count for state dicts and never advances it
        _running_buffers(self, self.track_running_stats, self.num_features, dtype)
        place(self, dev)

    def forward(self, x: Any) -> Tensor:
        x = x if isinstance(x, Tensor) else Tensor(x)
        batched, unbatched = self._input_dims
        if x.ndim not in (batched, unbatched):
            raise ValueError(f"{type(self).__name__}: expected a {unbatched}-D or {batched}-D input, "
                             f"got shape {tuple(x.shape)}")
        single = x.ndim == unbatched
        batch = x.unsqueeze(0) if single else x
        if self.track_running_stats:
            # input statistics in training (updating the running ones), the running ones in eval, as torch
            out = _instance_norm(batch, self.running_mean, self.running_var, self.weight, self.bias,
                                      self.training, 0.0 if self.momentum is None else self.momentum, self.eps)
        else:
            out = _norm.group_norm(batch, batch.shape[1], self.weight, self.bias, self.eps)
        return out.squeeze(0) if single else out

    extra_repr = _BatchNorm.extra_repr  # the same fields, in torch's order


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or unbatched (C, L): statistics per sample and channel over the length."""

    _input_dims = (3, 2)


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or unbatched (C, H, W): statistics per sample and channel over space."""

    _input_dims = (4, 3)


class Dropout2d(Module):
    """In training mode, zero whole channels with probability ``p`` (scaling the rest by ``1 / (1 - p)``)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p = float(p)
        self.inplace = inplace

    def forward(self, x: Any) -> Tensor:
        return _dropout2d(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Upsample(Module):
    """Resize the spatial dims (``interpolate``): ``size`` or ``scale_factor``; any mode of :func:`interpolate`."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: Optional[bool] = None, recompute_scale_factor: Optional[bool] = None) -> None:
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: Any) -> Tensor:
        return _norm.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                                 self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode!r}"


class RMSNorm(Module):
    r"""Root-mean-square normalisation over the last dims (:func:`taugrad.nn.functional.rms_norm`):
    :math:`y = x / \sqrt{\mathrm{mean}(x^2) + \epsilon} \cdot w`, ``w`` learnable (ones) when ``elementwise_affine``."""

    def __init__(self, normalized_shape: Any, eps: Optional[float] = None, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        dev, dtype = factory_kwargs(type(self).__name__, device, dtype)
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else normalized_shape
        self.normalized_shape = tuple(int(n) for n in shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        place(self, dev)

    def forward(self, x: Any) -> Tensor:
        return _rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"

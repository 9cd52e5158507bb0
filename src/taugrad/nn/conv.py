"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose2d``, with PyTorch's names and initialisation.

Weights have PyTorch's layouts -- (out, in/groups, *kernel) for a convolution,
(in, out/groups, *kernel) for a transposed one -- and the same state-dict keys
(``weight``, ``bias``), so a state dict loads into ``torch.nn`` and back.
Initialisation as PyTorch: ``kaiming_uniform_(weight, a=sqrt(5))``, i.e.
``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, and the bias from the same range,
``fan_in`` being ``weight.shape[1] * prod(kernel)``.  ``device=`` and ``dtype=``
are PyTorch's factory arguments (:func:`taugrad.nn.layers.factory_kwargs`):
the parameters are initialised on the CPU in ``dtype``, then moved.
"""
from __future__ import annotations

import math
from typing import Any, Tuple

import numpy as np

from taugrad.nn import init
from taugrad.nn.layers import factory_kwargs, place
from taugrad.nn.module import Module, Parameter
from taugrad.tensors.core.args import tuple_of
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops import conv as _conv

__all__ = ["Conv1d", "Conv2d", "ConvTranspose2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


class _ConvNd(Module):
    """What the convolution layers share: arguments, parameters, initialisation, repr."""

    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 output_padding: Any = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        dev, dtype = factory_kwargs(name, device, dtype)
        n = self._dims
        self.in_channels = _positive(in_channels, "in_channels")
        self.out_channels = _positive(out_channels, "out_channels")
        self.groups = _positive(groups, "groups")
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        self.kernel_size = tuple_of(kernel_size, n, "kernel_size", name, 1)
        self.stride = tuple_of(stride, n, "stride", name, 1)
        self.dilation = tuple_of(dilation, n, "dilation", name, 1)
        if isinstance(padding, str):
            if padding not in ("same", "valid") or self._transposed:
                raise ValueError(f"{name}: padding must be an int, a tuple{'' if self._transposed else ', same or valid'}, "
                                 f"got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = tuple_of(padding, n, "padding", name, 0)
        self.output_padding = tuple_of(output_padding, n, "output_padding", name, 0)
        if padding_mode not in _PADDING_MODES or (self._transposed and padding_mode != "zeros"):
            allowed = "'zeros'" if self._transposed else ", ".join(map(repr, _PADDING_MODES))
            raise ValueError(f"{name}: padding_mode must be {allowed}, got {padding_mode!r}")
        self.padding_mode = padding_mode
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight = Parameter(np.zeros(shape, dtype=dtype))
        if bias:
            self.bias = Parameter(np.zeros(self.out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        place(self, dev)

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1.0 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _mode_padding(self) -> Tuple[int, ...]:
        """The (left, right) widths per axis, last axis first, for padding_mode != 'zeros' (as F.pad)."""
        widths = []
        for i in reversed(range(self._dims)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                widths += [total // 2, total - total // 2]
            elif self.padding == "valid":
                widths += [0, 0]
            else:
                widths += [self.padding[i], self.padding[i]]
        return tuple(widths)

    def _padded(self, x: Tensor) -> Tuple[Tensor, Any]:
        """The input and the padding to convolve it with (explicit padding for the non-zero modes)."""
        if self.padding_mode == "zeros":
            return x, self.padding
        return _conv.pad_mode(x, self._mode_padding(), self.padding_mode, type(self).__name__), 0

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}")
        if self.padding != (0,) * self._dims:
            text += f", padding={self.padding!r}"
        if self.dilation != (1,) * self._dims:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode!r}"
        return text


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


class Conv2d(_ConvNd):
    r"""2-D convolution over (N, C_in, H, W): ``out = conv2d(x, weight, bias)`` (see ``taugrad.nn.functional.conv2d``).

    ``Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0,
    dilation=1, groups=1, bias=True, padding_mode='zeros', device=None,
    dtype=None)``; ``padding`` may be
    ``'same'`` or ``'valid'``; ``padding_mode`` 'zeros', 'reflect', 'replicate'
    or 'circular'.  ``groups=in_channels`` is a depthwise convolution.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)

    def forward(self, x: Any) -> Tensor:
        x, padding = self._padded(_as_tensor(x))
        return _conv.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L); arguments as :class:`Conv2d` with one size per argument."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)

    def forward(self, x: Any) -> Tensor:
        x, padding = self._padded(_as_tensor(x))
        return _conv.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    """Transposed 2-D convolution (the gradient of a Conv2d w.r.t. its input, used to upsample).

    ``ConvTranspose2d(in_channels, out_channels, kernel_size, stride=1,
    padding=0, output_padding=0, groups=1, bias=True, dilation=1,
    padding_mode='zeros', device=None, dtype=None)``; the weight
    is (in_channels, out_channels/groups, kh, kw) and the output size per axis
    ``(H - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1``.
    """

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device=device, dtype=dtype)

    def forward(self, x: Any, output_size: Any = None) -> Tensor:
        extra = self.output_padding
        x = _as_tensor(x)
        if output_size is not None:  # pick the output_padding that gives this size, as PyTorch
            size = tuple(output_size)[-2:]
            base = [(n - 1) * s - 2 * p + d * (k - 1) + 1 for n, s, p, d, k in
                    zip(x.shape[2:], self.stride, self.padding, self.dilation, self.kernel_size)]
            extra = tuple(int(m) - b for m, b in zip(size, base))
        return _conv.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding, extra, self.groups,
                                      self.dilation)

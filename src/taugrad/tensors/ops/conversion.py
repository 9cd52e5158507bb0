"""Moving and converting tensors: ``Tensor.to``, ``.cpu()``, ``.cuda()``, ``.device``, ``.is_cuda``.

There is one device, the CPU, so ``to`` only ever converts the dtype (through
the ``astype`` op, whose gradient flows between float dtypes) or copies;
asking for another device raises a one-line ``RuntimeError``.
"""
from __future__ import annotations

from taugrad.tensors.device import CPU, parse_to, unavailable
from taugrad.tensors.device import device as Device
from taugrad.tensors.node import Tensor
from taugrad.tensors.rule import forward_of, register


@register("to", methods=("to",))
def to(x: Tensor, *args, **kwargs) -> Tensor:
    """``x`` on ``device`` with ``dtype``, as ``torch.Tensor.to``.

    Forms: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
    ``to(other_tensor)`` (its device and dtype), each with ``non_blocking``
    (ignored: nothing is asynchronous) and ``copy`` (a new tensor even when
    nothing changes).  Without a change and without ``copy`` it returns ``x``.
    """
    _, dtype, _, copy = parse_to("to", args, kwargs)
    out = x if dtype is None else forward_of("astype")(x, dtype)
    if copy and out is x:
        out = forward_of("clone")(x)
    return out


@register("cpu", methods=("cpu",))
def cpu(x: Tensor, memory_format=None) -> Tensor:
    """``x`` itself: every tensor is on the CPU."""
    return x


@register("cuda", methods=("cuda",))
def cuda(x: Tensor, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:  # noqa: A002
    """Always a ``RuntimeError``: there is no CUDA device."""
    if device is None or (isinstance(device, int) and not isinstance(device, bool)):
        device = Device("cuda", device)
    raise unavailable(Device(device), "cuda")


@register("device", properties=("device",))
def device_of(x: Tensor) -> Device:
    """The device the tensor is on: ``device(type='cpu')``."""
    return CPU


@register("is_cuda", properties=("is_cuda",))
def is_cuda(x: Tensor) -> bool:
    """False: no tensor is on a CUDA device."""
    return False


@register("is_cpu", properties=("is_cpu",))
def is_cpu(x: Tensor) -> bool:
    """True: every tensor is on the CPU."""
    return True

"""Moving and converting tensors: ``Tensor.to``, ``.cpu()``, ``.cuda()``, ``.device``, ``.is_cuda``.

A move between devices is an op of the graph (as in PyTorch, where
``x.cuda()`` of a leaf that requires grad is differentiable): its rule moves
the gradient back to the source device.  A dtype change goes through the
``astype`` op, whose gradient flows between float dtypes.
"""
from __future__ import annotations

import numpy as np

from taugrad.tensors.core.backend import CPU, backend_for, to_device
from taugrad.tensors.core.backend import device_of as _device_of_array
from taugrad.tensors.core.device import as_device, check_device, parse_to
from taugrad.tensors.core.device import device as Device
from taugrad.tensors.core.memory_format import format_order, preserve_format
from taugrad.tensors.core.node import Tensor, array_module, make
from taugrad.tensors.core.rule import NEW, forward_of, register, rule


def _moved(g, dev: Device):
    """``g`` (an array, or a Tensor under ``create_graph``) on ``dev``."""
    if isinstance(g, Tensor):
        return forward_of("to")(g, dev)
    return to_device(g, dev)


@rule("to_copy", gives=NEW)  # PyTorch names the node ToCopyBackward0
def to_device_backward(g, out, ins, node):
    """z = a moved to another device:  dz/da = 1, moved back to a's device."""
    return (_moved(g, node._ctx),)


def move(x: Tensor, dev: Device) -> Tensor:
    """``x`` on ``dev`` (a copy there; ``x`` itself when it is there already)."""
    here = _device_of_array(x._data)
    data = to_device(x._data, dev)
    if data is x._data:
        return x
    return make(data, (x,), to_device_backward, here)


@register("to", methods=("to",))
def to(x: Tensor, *args, **kwargs) -> Tensor:
    """``x`` on ``device`` with ``dtype``, as ``torch.Tensor.to``.

    Forms: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
    ``to(other_tensor)`` (its device and dtype), each with ``non_blocking``
    (accepted; copies are synchronous) and ``copy`` (a new tensor even when
    nothing changes).  Without a change and without ``copy`` it returns ``x``.
    A move between devices is differentiable.  ``memory_format=taugrad.channels_last``
    lays the result out as (N, H, W, C) memory (``contiguous(memory_format=...)``).
    """
    memory_format = kwargs.get("memory_format")
    dev, dtype, _, copy = parse_to("to", args, kwargs)
    out = x if dev is None else move(x, dev)
    if dtype is not None:
        out = forward_of("astype")(out, dtype)
    if copy and out is x:
        out = forward_of("clone")(x)
    if memory_format is not None and memory_format is not preserve_format:
        out = in_format(out, memory_format)
    return out


def in_format(x: Tensor, memory_format, op: str = "to") -> Tensor:
    """``x`` with the strides ``memory_format`` gives its shape (``x`` itself if it has them), else a copy
    in the graph (``CloneBackward0``), as ``torch.Tensor.to(memory_format=...)``."""
    data = x._data
    order = format_order(memory_format, data.ndim, op)
    steps, step = [0] * data.ndim, 1
    for axis in reversed(order):
        steps[axis] = step
        step *= max(data.shape[axis], 1)
    if data.size and [s // data.itemsize for s in data.strides] == steps:
        return x
    out = forward_of("clone")(x)  # a fresh array nobody else sees: laid out in the format in place
    fresh = array_module(data).empty(tuple(data.shape[i] for i in order), dtype=data.dtype)
    back = sorted(range(data.ndim), key=order.__getitem__)
    fresh.transpose(back)[...] = out._data
    out._data = fresh.transpose(back)
    return out


@register("type_as", methods=("type_as",))
def type_as(x: Tensor, other: Tensor) -> Tensor:
    """``x`` with ``other``'s dtype on ``other``'s device (``x`` itself if it has both), as ``torch.Tensor.type_as``.

    PyTorch's "type" names both (``torch.cuda.FloatTensor``), so a CPU tensor
    ``type_as`` a CUDA one moves.  The gradient flows back through both steps
    (between float dtypes, the ``astype`` op; the move, to the first device).
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as: expected a Tensor, got {type(other).__name__}")
    return move(forward_of("astype")(x, other._data.dtype), _device_of_array(other._data))


@register("cpu", methods=("cpu",))
def cpu(x: Tensor, memory_format=None) -> Tensor:
    """``x`` on the CPU (``x`` itself if it is there)."""
    return move(x, CPU)


@register("cuda", methods=("cuda",))
def cuda(x: Tensor, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:  # noqa: A002
    """``x`` on CUDA device ``device`` (the first one by default).

    Raises a one-line ``RuntimeError`` when CuPy or a GPU is missing.
    """
    if device is None or (isinstance(device, int) and not isinstance(device, bool)):
        device = Device("cuda", device)
    dev = as_device(device, "cuda")
    if dev.type != "cuda":
        raise RuntimeError(f"cuda: expected a CUDA device, got {str(dev)!r}")
    return move(x, check_device(dev, "cuda"))


@register("device", properties=("device",))
def device_of(x: Tensor) -> Device:
    """The device the tensor's array is on: ``device(type='cpu')`` or ``device(type='cuda', index=0)``."""
    return _device_of_array(x._data)


@register("is_cuda", properties=("is_cuda",))
def is_cuda(x: Tensor) -> bool:
    """True when the tensor is on a CUDA device."""
    return _device_of_array(x._data).type == "cuda"


@register("is_cpu", properties=("is_cpu",))
def is_cpu(x: Tensor) -> bool:
    """True when the tensor is on the CPU."""
    return _device_of_array(x._data).type == "cpu"


#: the other backends and layouts torch can report; a taugrad tensor is a dense array on the CPU or a CUDA device
_NEVER = ("is_xpu", "is_mps", "is_meta", "is_ipu", "is_maia", "is_mtia", "is_xla", "is_vulkan", "is_mkldnn",
          "is_sparse", "is_sparse_csr", "is_quantized", "is_nested")


@register("is_other_backend", properties=_NEVER)
def is_other_backend(x: Tensor) -> bool:
    """False: ``is_xpu``, ``is_mps``, ``is_sparse``... as torch answers for a dense CPU or CUDA tensor."""
    return False


@register("is_view_flag", methods=("is_conj", "is_neg", "is_pinned", "is_distributed", "is_inference"))
def is_view_flag(x: Tensor) -> bool:
    """False: taugrad has no lazy conjugate or negative views, pinned memory, distributed or inference tensors."""
    return False


@register("is_signed", methods=("is_signed",))
def is_signed(x: Tensor) -> bool:
    """True for signed dtypes (floating, complex and signed integers), False for ``uint8``... and ``bool``."""
    return x._data.dtype.kind in "ifc"


@register("is_same_size", methods=("is_same_size",))
def is_same_size(x: Tensor, other: Tensor) -> bool:
    """True when ``other`` has ``x``'s shape."""
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' must be Tensor, not {type(other).__name__}")
    return tuple(x._data.shape) == tuple(other._data.shape)


@register("is_nonzero", methods=("is_nonzero",))
def is_nonzero(x: Tensor) -> bool:
    """The truth of a one-element tensor; torch's errors for an empty or longer one."""
    if x._data.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if x._data.size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(x)


@register("get_device", methods=("get_device",))
def get_device(x: Tensor) -> int:
    """The CUDA device index, or -1 on the CPU (as ``torch.Tensor.get_device``)."""
    dev = _device_of_array(x._data)
    return -1 if dev.type == "cpu" else (dev.index or 0)


#: DLPack's device type numbers (``__dlpack_device__()[0]``)
_DLPACK_CPU, _DLPACK_CUDA, _DLPACK_CUDA_HOST = 1, 2, 3


def from_dlpack(ext) -> Tensor:
    """A tensor sharing the memory of ``ext`` (a torch/CuPy/JAX array, a NumPy array, or a DLPack capsule holder).

    Zero copy: writes through either side are seen by the other.  CPU memory
    becomes a NumPy-backed tensor, CUDA memory a CuPy-backed one (CuPy is
    imported then).
    """
    if isinstance(ext, Tensor):
        if ext.requires_grad:  # as torch: an alias outside the graph could change what backward() reads
            raise BufferError("from_dlpack: can't export a tensor that requires grad; use tensor.detach()")
        return Tensor(ext._data)
    if not hasattr(ext, "__dlpack_device__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ and __dlpack_device__, got "
                        f"{type(ext).__name__}")
    kind, index = ext.__dlpack_device__()
    if kind in (_DLPACK_CPU, _DLPACK_CUDA_HOST):
        return Tensor(np.from_dlpack(ext))
    if kind == _DLPACK_CUDA:
        return Tensor(backend_for(Device("cuda", int(index))).from_dlpack(ext))
    raise RuntimeError(f"from_dlpack: DLPack device type {kind} is not supported (only the CPU and CUDA)")

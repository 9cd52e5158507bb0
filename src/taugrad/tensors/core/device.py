"""Devices, as ``torch.device``: where a tensor's numbers live.

A tensor lives on the CPU (a NumPy array) or on a CUDA GPU (a CuPy array; see
:mod:`taugrad.tensors.core.backend`).  Every name PyTorch knows (``'cuda:0'``,
``'mps'``...) makes a :class:`device` object, because user code builds them
before it knows what is available (``device = torch.device('cuda' if
torch.cuda.is_available() else 'cpu')``); *using* one that has no backend here
(``zeros(3, device='mps')``, ``'cuda'`` without CuPy or a GPU) raises a
one-line ``RuntimeError`` saying what is missing.

:func:`parse_to` reads the argument forms of ``Tensor.to`` / ``Module.to``
(a device, a dtype, both, or another tensor) for both.
"""
from __future__ import annotations

from taugrad.tensors.core.backend import (  # noqa: F401 - CPU, KNOWN_TYPES re-exported
    CPU, DEFAULT_DEVICES, KNOWN_TYPES, backend_for, device, device_of,
)
from taugrad.tensors.core.node import Tensor, _dtype_of

def as_device(spec, op: str) -> device:
    """The :class:`device` for ``spec`` (a string, a device, or an int meaning ``cuda:<n>``), unchecked."""
    if isinstance(spec, device):
        return spec
    if isinstance(spec, str):
        return device(spec)
    if isinstance(spec, int) and not isinstance(spec, bool):  # torch reads a bare int as an accelerator index
        return device("cuda", spec)
    raise TypeError(f"{op}: device must be a string such as 'cpu' or a taugrad.device, got {spec!r}")


def check_device(spec, op: str) -> device:
    """``device=`` of a creation function: None (the CPU) or a device whose backend is there.

    A device without a backend (CUDA without CuPy or without a GPU, 'mps')
    raises a one-line ``RuntimeError`` saying what is missing.
    """
    if spec is None:
        return CPU
    dev = as_device(spec, op)
    if dev.type == "cpu":
        return CPU
    try:
        backend_for(dev)
    except RuntimeError as error:
        raise RuntimeError(f"{op}: {error}") from None
    return dev


def factory_device(spec, op: str) -> device:
    """``device=`` of a factory function (``zeros``, ``randn``, a layer...): None means the default device.

    The default is the CPU unless :func:`set_default_device` or a ``with
    taugrad.device(...):`` block says otherwise, as in PyTorch; the device is
    checked as :func:`check_device` does.
    """
    return check_device(DEFAULT_DEVICES[-1] if spec is None else spec, op)


def set_default_device(spec) -> None:
    """``taugrad.set_default_device``: the device the factory functions use when ``device=`` is not given.

    ``None`` restores the CPU.  A device without a backend here (CUDA without
    CuPy or a GPU) is refused now, in one line, rather than at the next
    ``zeros()``.  Tensors that share memory (``from_numpy``, ``from_dlpack``)
    and ``*_like`` functions are not affected, as in PyTorch.
    """
    DEFAULT_DEVICES[0] = check_device(spec, "set_default_device")


def get_default_device() -> device:
    """The device the factory functions use when ``device=`` is not given (a CUDA device with its index)."""
    dev = DEFAULT_DEVICES[-1]
    return device(dev.type, 0) if dev.type == "cuda" and dev.index is None else dev


def _is_device(arg) -> bool:
    return isinstance(arg, (str, device)) or (isinstance(arg, int) and not isinstance(arg, bool))


def parse_to(op: str, args: tuple, kwargs: dict):
    """``(device, dtype, non_blocking, copy)`` from the forms of ``to``.

    ``to(device=None, dtype=None, non_blocking=False, copy=False)``,
    ``to(dtype, non_blocking=False, copy=False)`` or
    ``to(other_tensor, non_blocking=False, copy=False)``; the device, if any,
    is checked to have a backend.  ``memory_format`` is accepted and ignored
    (taugrad has one layout).
    """
    kwargs = dict(kwargs)
    kwargs.pop("memory_format", None)
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    args = list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        dev, dtype = device_of(other._data), other._data.dtype
    elif args and _is_device(args[0]):
        dev = args.pop(0)
        if args and not isinstance(args[0], bool):
            dtype = args.pop(0)
    elif args and args[0] is not None and not isinstance(args[0], bool):
        dtype = args.pop(0)
    elif args and args[0] is None:
        args.pop(0)
    flags = {"non_blocking": False, "copy": False}
    for name, value in zip(("non_blocking", "copy"), args):
        flags[name] = value
    if len(args) > 2:
        raise TypeError(f"{op}: too many arguments; expected (device, dtype, non_blocking, copy)")
    for name in list(kwargs):
        if name not in flags:
            raise TypeError(f"{op}: unexpected keyword argument {name!r}")
        flags[name] = kwargs.pop(name)
    dev = None if dev is None else check_device(dev, op)
    dtype = None if dtype is None else _dtype_of(dtype)
    return dev, dtype, bool(flags["non_blocking"]), bool(flags["copy"])

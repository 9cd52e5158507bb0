"""Devices, as ``torch.device``: where a tensor's numbers live.

A tensor lives on the CPU (a NumPy array) or on a CUDA GPU (a CuPy array; see
:mod:`taugrad.tensors.backend`).  Every name PyTorch knows (``'cuda:0'``,
``'mps'``...) makes a :class:`device` object, because user code builds them
before it knows what is available (``device = torch.device('cuda' if
torch.cuda.is_available() else 'cpu')``); *using* one that has no backend here
(``zeros(3, device='mps')``, ``'cuda'`` without CuPy or a GPU) raises a
one-line ``RuntimeError`` saying what is missing.

:func:`parse_to` reads the argument forms of ``Tensor.to`` / ``Module.to``
(a device, a dtype, both, or another tensor) for both.
"""
from __future__ import annotations

from taugrad.tensors.backend import CPU, KNOWN_TYPES, backend_for, device, device_of  # noqa: F401 - re-exported
from taugrad.tensors.node import Tensor, _dtype_of

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


def set_default_device(spec) -> None:
    """``taugrad.set_default_device``: only None or 'cpu' (the default already) is possible.

    Other devices are refused rather than ignored: tensors would silently stay
    on the CPU.  Pass ``device=`` to the creation functions, or ``.to()``.
    """
    dev = check_device(spec, "set_default_device")
    if dev.type != "cpu":
        raise RuntimeError(f"set_default_device: only the CPU can be the default device here, got {str(dev)!r}; "
                           f"pass device= to the creation functions or move tensors with .to()")


def get_default_device() -> device:
    """The device new tensors are made on: always ``device(type='cpu')``."""
    return CPU


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

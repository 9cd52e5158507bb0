"""Devices, as ``torch.device``: where a tensor's numbers live.

taugrad computes on the CPU only, so ``'cpu'`` is the one device a tensor can
be on.  The other names PyTorch knows (``'cuda'``, ``'cuda:0'``, ``'mps'``...)
still make :class:`device` objects, because user code builds them before it
knows what is available (``device = torch.device('cuda' if
torch.cuda.is_available() else 'cpu')``); *using* one (``.to('cuda')``,
``zeros(3, device='cuda')``) raises a one-line ``RuntimeError``.

:func:`parse_to` reads the argument forms of ``Tensor.to`` / ``Module.to``
(a device, a dtype, both, or another tensor) for both.
"""
from __future__ import annotations

from taugrad.tensors.node import Tensor, _dtype_of

#: the device types ``torch.device`` accepts (most exist only in PyTorch builds for that hardware)
KNOWN_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "ipu", "hpu", "mtia", "vulkan", "lazy",
               "privateuseone")

_WHY_NOT = {
    "cuda": "no CUDA device is available: taugrad runs on the CPU (its GPU backend needs CuPy and a GPU)",
    "mps": "no MPS device is available: taugrad runs on the CPU",
}


class device:
    """A device: ``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:0')``, or a copy of another.

    ``.type`` is the kind (``'cpu'``), ``.index`` the number or None.  Two
    devices are equal when both agree; as in PyTorch a device never equals a
    string (compare ``str(d)`` or ``d.type``).
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's parameter name
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device: give either a device or a type and an index, not both")
            self._type, self._index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device: expected a device string such as 'cpu', got {type!r}")
        name, colon, number = type.partition(":")
        if name not in KNOWN_TYPES:
            raise RuntimeError(f"device: unknown device type {type!r}; expected one of {', '.join(KNOWN_TYPES)}")
        if colon:
            if index is not None or not number.isdigit():
                raise RuntimeError(f"device: invalid device string {type!r}")
            index = int(number)
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(f"device: index must be an int, got {index!r}")
            if index < 0:
                raise RuntimeError(f"device: index must not be negative, got {index}")
        self._type, self._index = name, index

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self):
        return self._index

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return (self._type, self._index) == (other._type, other._index)

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __reduce__(self):
        return (device, (self._type, self._index))


CPU = device("cpu")


def unavailable(dev: device, op: str) -> RuntimeError:
    """The one-line error for a device taugrad does not have."""
    why = _WHY_NOT.get(dev.type, f"no {dev.type} device is available: taugrad runs on the CPU")
    return RuntimeError(f"{op}: device {str(dev)!r} requested, but {why}")


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
    """``device=`` of a creation function: None or the CPU (any other device raises ``RuntimeError``)."""
    if spec is None:
        return CPU
    dev = as_device(spec, op)
    if dev.type != "cpu":
        raise unavailable(dev, op)
    return CPU


def set_default_device(spec) -> None:
    """``taugrad.set_default_device``: only None or 'cpu' (the default already) is possible."""
    check_device(spec, "set_default_device")


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
    is checked to be the CPU.  ``memory_format`` is accepted and ignored
    (taugrad has one layout).
    """
    kwargs = dict(kwargs)
    kwargs.pop("memory_format", None)
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    args = list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        dev, dtype = CPU, other._data.dtype
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

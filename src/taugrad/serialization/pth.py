"""Read a PyTorch ``.pth`` state dict without unpickling it.

``torch.save`` writes a zip archive: ``<name>/data.pkl`` (a pickle of the saved
object in which every tensor is a call ``torch._utils._rebuild_tensor_v2(storage,
offset, size, stride, ...)`` and every storage a *persistent id*
``('storage', torch.FloatStorage, key, location, numel)``) and one raw member
``<name>/data/<key>`` per storage, in the byte order of ``<name>/byteorder``.

Unpickling such a file can run any function the file names, so this module
never hands the file to :mod:`pickle`.  It walks the opcodes with
:func:`pickletools.genops` (a parser: it decodes opcodes and their arguments and
calls nothing) and interprets a small whitelist of them on a stack of plain
values.  The only callables a file can reach are the ones in ``_CALLABLES``
(``collections.OrderedDict`` and torch's tensor-rebuild functions), each replaced
by a function of this module that builds NumPy arrays; any other global, any
other opcode, or any misuse of these is refused with :class:`CheckpointError`
before anything else happens.  Storages are read from the archive as raw bytes
of a whitelisted numeric dtype, and every tensor's view of its storage is
bounds-checked.
"""
from __future__ import annotations

import collections
import math
import pickletools
import zipfile
from typing import Any, Callable, Dict, List

import numpy as np


class TorchCheckpointError(ValueError):
    """The PyTorch file holds something other than tensors, containers and numbers."""


# torch's storage classes -> NumPy dtypes (little-endian; byte order fixed up below)
_STORAGE_DTYPES = {
    "DoubleStorage": "<f8", "FloatStorage": "<f4", "HalfStorage": "<f2",
    "LongStorage": "<i8", "IntStorage": "<i4", "ShortStorage": "<i2", "CharStorage": "i1",
    "ByteStorage": "u1", "BoolStorage": "?",
}

# opcodes whose argument is pushed as it is
_PUSH_ARG = {"BININT", "BININT1", "BININT2", "LONG1", "LONG4", "BINFLOAT", "BINUNICODE", "SHORT_BINUNICODE",
             "BINUNICODE8", "SHORT_BINBYTES", "BINBYTES", "BINBYTES8", "INT", "LONG", "FLOAT", "UNICODE",
             "STRING", "BINSTRING", "SHORT_BINSTRING"}
_CONSTANTS = {"NONE": None, "NEWTRUE": True, "NEWFALSE": False}


class _Storage:
    """A storage named by a persistent id: its dtype, archive key and element count."""

    __slots__ = ("dtype", "key", "numel")

    def __init__(self, dtype: str, key: str, numel: int) -> None:
        self.dtype, self.key, self.numel = dtype, key, numel


class _StorageType:
    """Stands for ``torch.FloatStorage`` and friends inside a persistent id."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class _Reader:
    """Interpret the whitelisted opcodes of ``data.pkl``; storages come from ``archive``."""

    def __init__(self, archive: zipfile.ZipFile, prefix: str, make_tensor: Callable) -> None:
        self.archive, self.prefix, self.make_tensor = archive, prefix, make_tensor
        self.storages: Dict[str, np.ndarray] = {}
        # the only functions a file can call (compared by identity, never by ==)
        self.builders = (_ordered_dict, self.rebuild_tensor, self.rebuild_parameter, _size)
        byteorder = prefix + "byteorder"
        self.big_endian = byteorder in archive.namelist() and archive.read(byteorder).strip() == b"big"

    # -- the callables a file may name -------------------------------------------------
    def global_(self, module: str, name: str) -> Any:
        if module == "collections" and name == "OrderedDict":
            return self.builders[0]
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return self.builders[1]
        if module == "torch._utils" and name == "_rebuild_parameter":
            return self.builders[2]
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name)
        if module == "torch" and name == "Size":
            return self.builders[3]
        raise TorchCheckpointError(f"it names {module}.{name}, which is not a tensor or a container")

    def rebuild_tensor(self, storage, offset, size, stride, *rest) -> Any:
        if not isinstance(storage, _Storage):
            raise TorchCheckpointError("a tensor is rebuilt from something that is not a storage")
        array = self.view(self.storage_array(storage), offset, size, stride)
        requires_grad = bool(rest[0]) if rest else False
        return self.make_tensor(array, requires_grad)

    def rebuild_parameter(self, data, requires_grad=False, *rest) -> Any:
        if not hasattr(data, "requires_grad_"):
            raise TorchCheckpointError("a parameter is rebuilt from something that is not a tensor")
        return data.requires_grad_(bool(requires_grad))

    # -- storages and views ---------------------------------------------------------
    def storage_array(self, storage: _Storage) -> np.ndarray:
        if storage.key not in self.storages:
            name = f"{self.prefix}data/{storage.key}"
            try:
                raw = self.archive.read(name)
            except KeyError:
                raise TorchCheckpointError(f"storage member {name!r} is missing") from None
            dtype = np.dtype(storage.dtype)
            if self.big_endian:
                dtype = dtype.newbyteorder(">")
            if len(raw) < storage.numel * dtype.itemsize:
                raise TorchCheckpointError(f"storage member {name!r} is shorter than its {storage.numel} elements")
            array = np.frombuffer(raw, dtype=dtype, count=storage.numel)
            self.storages[storage.key] = array.astype(dtype.newbyteorder("="))
        return self.storages[storage.key]

    @staticmethod
    def view(flat: np.ndarray, offset: Any, size: Any, stride: Any) -> np.ndarray:
        """The tensor at ``offset`` with ``size`` and ``stride`` (in elements), bounds-checked, copied."""
        if not (_is_int(offset) and isinstance(size, tuple) and isinstance(stride, tuple)
                and len(size) == len(stride) and all(_is_int(v) for v in size + stride)):
            raise TorchCheckpointError("a tensor has a malformed offset, size or stride")
        if offset < 0 or any(v < 0 for v in size + stride):
            raise TorchCheckpointError("a tensor has a negative offset, size or stride")
        if 0 in size:
            return np.zeros(size, dtype=flat.dtype)
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= flat.size:
            raise TorchCheckpointError("a tensor reaches past the end of its storage")
        item = flat.itemsize
        strided = np.lib.stride_tricks.as_strided(
            flat[offset:], shape=size, strides=tuple(s * item for s in stride), writeable=False)
        try:
            return np.array(strided)
        except MemoryError:  # stride 0 repeats one element: a small storage can name a huge tensor
            raise TorchCheckpointError(f"a tensor of size {size} ({math.prod(size)} elements, stride {stride}) "
                                       "does not fit in memory") from None

    # -- the opcode loop ------------------------------------------------------------
    def run(self, pickled: bytes) -> Any:
        stack: List[Any] = []
        marks: List[int] = []
        memo: Dict[int, Any] = {}
        for opcode, arg, _ in pickletools.genops(pickled):
            name = opcode.name
            if name in ("PROTO", "FRAME"):
                continue
            if name == "STOP":
                if len(stack) != 1:
                    raise TorchCheckpointError("the pickle ends with a malformed stack")
                return stack[0]
            if name in _PUSH_ARG:
                stack.append(arg)
            elif name in _CONSTANTS:
                stack.append(_CONSTANTS[name])
            elif name == "MARK":
                marks.append(len(stack))
            elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
                memo[arg] = stack[-1]
            elif name == "MEMOIZE":
                memo[len(memo)] = stack[-1]
            elif name in ("BINGET", "LONG_BINGET", "GET"):
                stack.append(memo[arg])
            elif name == "EMPTY_DICT":
                stack.append({})
            elif name == "EMPTY_LIST":
                stack.append([])
            elif name == "EMPTY_TUPLE":
                stack.append(())
            elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
                n = int(name[-1])
                items = tuple(stack[-n:])
                del stack[-n:]
                stack.append(items)
            elif name in ("TUPLE", "LIST", "DICT"):
                items = _pop_mark(stack, marks)
                stack.append(tuple(items) if name == "TUPLE" else items if name == "LIST"
                             else _pairs(items, {}))
            elif name == "APPEND":
                item = stack.pop()
                _as_list(stack[-1]).append(item)
            elif name == "APPENDS":
                items = _pop_mark(stack, marks)
                _as_list(stack[-1]).extend(items)
            elif name == "SETITEM":
                value, key = stack.pop(), stack.pop()
                _pairs([key, value], stack[-1])
            elif name == "SETITEMS":
                items = _pop_mark(stack, marks)
                _pairs(items, stack[-1])
            elif name in ("GLOBAL", "STACK_GLOBAL"):
                if name == "GLOBAL":
                    module, _, attribute = arg.partition(" ")
                else:
                    attribute, module = stack.pop(), stack.pop()
                stack.append(self.global_(module, attribute))
            elif name == "BINPERSID":
                stack.append(_persistent(stack.pop()))
            elif name == "REDUCE":
                args, function = stack.pop(), stack.pop()
                if not any(function is builder for builder in self.builders) or not isinstance(args, tuple):
                    raise TorchCheckpointError("it calls something that is not a tensor or container builder")
                stack.append(function(*args))
            elif name == "BUILD":
                state = stack.pop()
                _build(stack[-1], state)
            else:
                raise TorchCheckpointError(f"it uses the pickle opcode {name}, which a state dict never needs")
        raise TorchCheckpointError("the pickle has no STOP opcode")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _size(dims=()) -> tuple:
    """``torch.Size(dims)`` in a file: the tuple of ints it is (a shape saved among the values)."""
    if not isinstance(dims, (tuple, list)) or not all(_is_int(d) for d in dims):
        raise TorchCheckpointError("torch.Size is built from something that is not a tuple of ints")
    return tuple(dims)


def _ordered_dict(*args) -> "collections.OrderedDict":
    if args:
        raise TorchCheckpointError("OrderedDict is called with arguments")
    return collections.OrderedDict()


def _pop_mark(stack: List[Any], marks: List[int]) -> List[Any]:
    if not marks:
        raise TorchCheckpointError("the pickle pops a mark it never set")
    start = marks.pop()
    items = stack[start:]
    del stack[start:]
    return items


def _as_list(target: Any) -> list:
    if not isinstance(target, list):
        raise TorchCheckpointError("the pickle appends to something that is not a list")
    return target


def _pairs(items: List[Any], target: Any) -> dict:
    if not isinstance(target, dict) or len(items) % 2:
        raise TorchCheckpointError("the pickle sets items on something that is not a dict")
    for key, value in zip(items[::2], items[1::2]):
        if not isinstance(key, (str, int, float, bool, type(None), tuple)):
            raise TorchCheckpointError("a dict key is not a number, string or tuple")
        target[key] = value
    return target


def _persistent(pid: Any) -> _Storage:
    ok = (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _StorageType)
          and isinstance(pid[2], str) and _is_int(pid[4]) and pid[4] >= 0)
    if not ok:
        raise TorchCheckpointError("it holds a persistent reference that is not a tensor storage")
    return _Storage(_STORAGE_DTYPES[pid[1].name], pid[2], pid[4])


def _build(target: Any, state: Any) -> None:
    """``BUILD`` is only how a state dict's ``_metadata`` attribute is pickled: keep that, nothing else."""
    if not isinstance(target, collections.OrderedDict) or not isinstance(state, dict):
        raise TorchCheckpointError("it sets the state of an object that is not a state dict")
    if set(state) - {"_metadata"}:
        raise TorchCheckpointError("it sets attributes on a dict other than _metadata")
    if "_metadata" in state:
        target._metadata = state["_metadata"]


def is_torch_archive(names: List[str]) -> bool:
    """Whether the zip members are those of a ``torch.save`` file."""
    return any(name.endswith("/data.pkl") or name == "data.pkl" for name in names)


def read_torch_archive(archive: zipfile.ZipFile, make_tensor: Callable[[np.ndarray, bool], Any]) -> Any:
    """The object saved by ``torch.save`` in ``archive``, with tensors built by ``make_tensor``."""
    names = archive.namelist()
    pickle_name = next(name for name in names if name.endswith("/data.pkl") or name == "data.pkl")
    prefix = pickle_name[: -len("data.pkl")]
    reader = _Reader(archive, prefix, make_tensor)
    try:
        return reader.run(archive.read(pickle_name))
    except TorchCheckpointError:
        raise
    except (ValueError, IndexError, KeyError, TypeError, OverflowError) as err:  # a malformed opcode stream
        raise TorchCheckpointError(f"the pickle is malformed ({type(err).__name__}: {err})") from None

"""The checkpoint format: a NumPy ``.npz`` of the saved arrays plus one JSON layout entry.

A model's ``state_dict()`` is stored with its keys as the archive's entry names,
so ``numpy.load`` shows ``fc1.weight`` and friends; the layout of nested values
(dicts, lists, tuples, numbers, strings, NumPy scalars with their dtype) is kept
in one extra JSON entry, ``__taugrad__``.  Reading uses ``allow_pickle=False``
and builds only data: nothing in a file is ever unpickled or called.  Containers
may nest ``MAX_DEPTH`` deep, so a hostile layout is a :class:`CheckpointError`
rather than a ``RecursionError``.
"""
from __future__ import annotations

import json
import zipfile
from typing import Any, Callable, Dict

import numpy as np

from taugrad.tensors.core.backend import device_of, is_array, to_host
from taugrad.tensors.core.device import as_device
from taugrad.tensors.core.node import Tensor

__all__ = ["CheckpointError", "MAX_DEPTH", "encode", "write_npz", "read_npz", "first_line"]

_LAYOUT_ENTRY = "__taugrad__"
_FORMAT = "taugrad-checkpoint"
_VERSION = 1
# numeric and boolean arrays only: no object, void (structured) or string arrays
_ARRAY_KINDS = set("biufc")
# Containers (dicts, lists, tuples) may nest this deep, the top-level dict included.  Real
# state dicts nest a handful of levels; the limit keeps both save and load far from Python's
# recursion limit, so a hostile layout gets a CheckpointError rather than a RecursionError.
MAX_DEPTH = 100


class CheckpointError(ValueError):
    """The file is not a valid taugrad checkpoint (or the object cannot be saved)."""


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)


class _Flattener:
    """Turn a nested object into (JSON layout, {entry name: array})."""

    def __init__(self) -> None:
        self.arrays: Dict[str, np.ndarray] = {}
        # id -> path of the containers being flattened right now (the current branch only,
        # so a list shared by two keys is fine and only a true cycle is refused)
        self.open_containers: Dict[int, str] = {}

    def entry_name(self, path: str) -> str:
        name, n = path or "value", 1
        while name in self.arrays or name == _LAYOUT_ENTRY:
            n += 1
            name = f"{path}#{n}"
        return name

    def add_array(self, array: np.ndarray, path: str, is_tensor: bool) -> dict:
        if array.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(f"cannot save {path or 'value'}: arrays of dtype {array.dtype} are not supported")
        name = self.entry_name(path)
        self.arrays[name] = array
        return {"tensor" if is_tensor else "array": name}

    def add_scalar(self, scalar: np.generic, path: str) -> dict:
        if scalar.dtype.kind not in _ARRAY_KINDS:  # np.str_ and the like: stored as what .item() gives
            return self.layout(scalar.item(), path, depth=0)
        # a 0-d entry keeps the dtype (float32, uint64, bool_...) that .item() would lose
        return {"scalar": self.add_array(np.asarray(scalar), path, is_tensor=False)["array"]}

    def layout(self, value: Any, path: str, depth: int) -> Any:
        """Layout of ``value`` found at ``path`` inside ``depth`` containers."""
        if _is_tensor(value):
            dev = device_of(value._data)
            entry = self.add_array(to_host(value._data), path, is_tensor=True)
            # a device tensor is written as host values plus where it lived, for load()'s map_location
            return entry if dev.type == "cpu" else {"tensor_on": [entry["tensor"], str(dev)]}
        if isinstance(value, np.ndarray):
            return self.add_array(value, path, is_tensor=False)
        if is_array(value):  # a device array (an optimizer's state): its host values
            return self.add_array(to_host(value), path, is_tensor=False)
        if isinstance(value, np.generic):  # before float: np.float64 is a float subclass
            return self.add_scalar(value, path)
        if value is None or isinstance(value, (bool, str)):
            return {"value": value}
        if isinstance(value, int):
            return {"value": value}
        if isinstance(value, float):
            # JSON has no inf/nan: keep floats as 0-d arrays
            return {"float": self.add_array(np.asarray(value, np.float64), path, False)["array"]}
        if isinstance(value, (dict, list, tuple)):
            self.enter(value, path, depth + 1)
            try:
                return self.container_layout(value, path, depth + 1)
            finally:
                del self.open_containers[id(value)]
        raise TypeError(f"cannot save {path or 'value'}: unsupported type {type(value).__name__}")

    def enter(self, container: Any, path: str, depth: int) -> None:
        """Refuse a container that contains itself or nests too deep; else mark it open."""
        ancestor = self.open_containers.get(id(container))
        if ancestor is not None:
            what = f"{ancestor}, which contains it" if ancestor else f"the saved {type(container).__name__} itself"
            raise ValueError(f"cannot save {path or 'value'}: reference cycle (it is {what})")
        if depth > MAX_DEPTH:
            raise ValueError(f"cannot save {_shorten(path)}: nested more than {MAX_DEPTH} containers deep")
        self.open_containers[id(container)] = path

    def extra_header(self) -> Dict[str, Any]:
        """Header entries beside the layout (none for plain data; a subclass that writes more kinds adds its tables)."""
        return {}

    def container_layout(self, value: Any, path: str, depth: int) -> dict:
        child = (lambda key: f"{path}.{key}" if path else str(key))
        if isinstance(value, dict):
            items = []
            for key, item in value.items():
                if isinstance(key, bool) or not isinstance(key, (str, int)):
                    raise TypeError(f"cannot save {path or 'value'}: dict keys must be str or int, got {key!r}")
                items.append([key, self.layout(item, child(key), depth)])
            return {"dict": items}
        kind = "list" if isinstance(value, list) else "tuple"
        return {kind: [self.layout(item, child(i), depth) for i, item in enumerate(value)]}


def _shorten(path: str, limit: int = 60) -> str:
    """``path`` cut to ``limit`` characters, so that a message about deep nesting stays readable."""
    return path if len(path) <= limit else path[:limit] + "..."


def write_npz(file: Any, arrays: Dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz``: one ``NAME.npy`` member each.

    Written member by member (rather than with ``np.savez(**arrays)``) so that any
    key is a valid name, including ``file`` and ``allow_pickle``.
    """
    with zipfile.ZipFile(file, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def encode(obj: Dict[str, Any], flattener: "_Flattener | None" = None) -> Dict[str, np.ndarray]:
    """``obj`` as the archive's entries: its arrays by name, plus the JSON layout in ``__taugrad__``.

    ``flattener`` (a ``_Flattener`` subclass) may write more kinds of value than plain data; its
    ``extra_header()`` goes into the header beside the layout.  ``TypeError`` for a value that cannot be
    stored without pickling, ``ValueError`` for a reference cycle or nesting deeper than ``MAX_DEPTH``.
    """
    flattener = flattener if flattener is not None else _Flattener()
    layout = flattener.layout(obj, "", depth=0)
    header = {"format": _FORMAT, "version": _VERSION, "layout": layout, **flattener.extra_header()}
    arrays = dict(flattener.arrays)
    arrays[_LAYOUT_ENTRY] = np.array(json.dumps(header))  # a 0-d unicode array, no pickling
    return arrays


def _read_archive(path: Any, where: str) -> Dict[str, np.ndarray]:
    """Every entry of the ``.npz`` at ``path`` (a file name or a seekable binary file), read eagerly; errors
    become CheckpointError."""
    if isinstance(path, str):
        with open(path, "rb") as file:
            magic = file.read(6)
    else:
        path.seek(0)
        magic = path.read(6)
        path.seek(0)
    if not magic.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        if magic.startswith(b"\x80"):
            raise CheckpointError(
                f"{where}: it is a Python pickle, which is never loaded (not an .npz archive); "
                "if torch wrote it, re-save the state_dict with torch.save's default zip format"
            )
        if magic.startswith(b"\x93NUMPY"):
            raise CheckpointError(f"{where}: a single .npy array, not an .npz archive")
        raise CheckpointError(f"{where}: not an .npz archive (unrecognised content)")
    try:
        with zipfile.ZipFile(path) as archive:
            _check_members(archive.namelist(), where)
        archive = np.load(path, allow_pickle=False)
        try:
            return {name: archive[name] for name in archive.files}
        finally:
            archive.close()
    except CheckpointError:
        raise
    except ValueError as err:
        if "pickle" in str(err).lower():
            raise CheckpointError(f"{where}: it contains pickled Python objects, which are never loaded") from None
        raise CheckpointError(f"{where}: the archive is corrupt ({first_line(err)})") from None
    except Exception as err:  # BadZipFile, EOFError, zlib.error, OSError...: malformed content
        raise CheckpointError(
            f"{where}: the file is truncated or corrupt ({type(err).__name__}: {first_line(err)})"
        ) from None


def _check_members(names: "list[str]", where: str) -> None:
    """Refuse an archive holding anything but ``.npy`` arrays, before NumPy reads it.

    ``np.load`` would hand such a member back as raw bytes.  A PyTorch checkpoint is a
    zip too, whose ``data.pkl`` member only unpickling could read.
    """
    pickled = [name for name in names if name.endswith(".pkl")]
    if pickled:
        raise CheckpointError(
            f"{where}: it looks like a PyTorch/pickle checkpoint (member {pickled[0]!r}), "
            "which taugrad does not load because unpickling can run code"
        )
    for name in names:
        if not name.endswith(".npy"):
            raise CheckpointError(f"{where}: member {name!r} is not a .npy array, so this is not an .npz checkpoint")


def first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _parse_header(text: str, where: str) -> Any:
    """The JSON of the layout entry; anything JSON parsing can throw becomes CheckpointError."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise CheckpointError(f"{where}: malformed {_LAYOUT_ENTRY} entry (not JSON)") from None
    except RecursionError:  # far deeper than MAX_DEPTH: json recurses once per level
        raise CheckpointError(f"{where}: malformed {_LAYOUT_ENTRY} entry (nested too deeply to parse)") from None
    except ValueError:  # the one other failure: an integer over Python's int-conversion digit limit
        raise CheckpointError(
            f"{where}: malformed {_LAYOUT_ENTRY} entry (an integer in it has too many digits)"
        ) from None


def _keep(t: Any, location: str) -> Any:
    return t


def _rebuild(node: Any, arrays: Dict[str, np.ndarray], depth: int = 0, place=_keep, other=None) -> Any:
    """Inverse of ``_Flattener.layout``; only builds data, never calls anything named in the file.

    ``depth`` counts the containers around ``node``; past ``MAX_DEPTH`` the layout is
    refused, as save refuses to write it.  ``other(kind, content)``, if given, builds the
    kinds plain data does not have (a whole module's); without it they are malformed.
    """
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"unexpected layout node {str(node)[:60]}")
    ((kind, content),) = node.items()
    if kind == "tensor":
        return place(_make_tensor(arrays[content]), "cpu")
    if kind == "tensor_on":
        name, location = content
        if not isinstance(location, str):
            raise ValueError(f"unexpected device {location!r}")
        return place(_make_tensor(arrays[name]), str(as_device(location, "load")))
    if kind == "array":
        return arrays[content]
    if kind == "scalar":
        scalar = arrays[content]
        if scalar.shape != ():
            raise ValueError(f"scalar entry {content!r} has shape {tuple(scalar.shape)}, expected ()")
        return scalar[()]  # a NumPy scalar of the saved dtype
    if kind == "float":
        return float(arrays[content])
    if kind == "value":
        if content is not None and not isinstance(content, (bool, int, str)):
            raise ValueError(f"unexpected value {content!r}")
        return content
    if kind in ("dict", "list", "tuple"):
        depth += 1
        if depth > MAX_DEPTH:
            raise ValueError(f"nested more than {MAX_DEPTH} containers deep")
    if kind == "dict":
        result = {}
        for pair in content:
            key, item = pair
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise ValueError(f"unexpected key {key!r}")
            result[key] = _rebuild(item, arrays, depth, place, other)
        return result
    if kind == "list":
        return [_rebuild(item, arrays, depth, place, other) for item in content]
    if kind == "tuple":
        return tuple(_rebuild(item, arrays, depth, place, other) for item in content)
    if other is not None:
        return other(kind, content)
    raise ValueError(f"unknown layout kind {kind!r}")


def _make_tensor(array: np.ndarray) -> Any:
    return Tensor(array)


def read_npz(path: Any, place: Callable[[Any, str], Any] = _keep, where: str = "", extension=None) -> Any:
    """The object saved in the taugrad ``.npz`` at ``path`` (a file name or a seekable binary file);
    ``place(tensor, saved_location)`` puts each Tensor.

    ``extension(header, arrays, place, where)``, if given, returns the ``other`` builder
    :func:`_rebuild` uses for kinds beyond plain data; it raises :class:`CheckpointError` itself for a
    file it refuses.

    A plain ``.npz`` (no layout entry) is a dict of Tensors keyed by entry name.  Anything that is not a
    valid checkpoint is :class:`CheckpointError`; nothing is unpickled or called.
    """
    where = where or f"cannot load checkpoint {path!r}"
    arrays = _read_archive(path, where)
    for name, array in arrays.items():
        if name != _LAYOUT_ENTRY and array.dtype.kind not in _ARRAY_KINDS:
            raise CheckpointError(f"{where}: entry {name!r} has unsupported dtype {array.dtype}")

    if _LAYOUT_ENTRY not in arrays:
        return {name: place(_make_tensor(array), "cpu") for name, array in arrays.items()}
    header_array = arrays.pop(_LAYOUT_ENTRY)
    if header_array.dtype.kind != "U" or header_array.shape != ():
        raise CheckpointError(f"{where}: malformed {_LAYOUT_ENTRY} entry")
    header = _parse_header(str(header_array[()]), where)
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise CheckpointError(f"{where}: not a taugrad checkpoint")
    if header.get("version") != _VERSION:
        raise CheckpointError(f"{where}: unsupported checkpoint version {header.get('version')!r}")
    try:
        other = extension(header, arrays, place, where) if extension is not None else None
        return _rebuild(header.get("layout"), arrays, place=place, other=other)
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{where}: malformed layout ({first_line(err)})") from None

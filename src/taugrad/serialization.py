"""Safe checkpoints: ``taugrad.save(obj, path)`` and ``taugrad.load(path)``.

The file is a plain NumPy ``.npz`` archive (a zip of ``.npy`` arrays), read with
``allow_pickle=False``: loading a checkpoint parses arrays and one JSON string,
it never unpickles and never executes anything from the file.

What can be saved: a ``dict`` with string keys whose values are Tensors, NumPy
arrays, Python numbers/bools/strings/``None``, lists, tuples or nested dicts of
those (dict keys may be strings or integers, as in an optimizer's state dict).
A model's ``state_dict()`` is stored with its keys as the archive's entry names,
so ``numpy.load`` shows ``fc1.weight`` and friends; the layout of nested values
is kept in one extra JSON entry, ``__taugrad__``.

Writes are atomic: the archive is written to a temporary file in the target's
directory, flushed to disk (``fsync``) and renamed over the target with
``os.replace``.  A save that fails or is interrupted leaves the previous file
untouched and removes its temporary file.

Errors: a missing file is ``FileNotFoundError``, a directory path is
``IsADirectoryError``, and a file that is not a valid checkpoint (pickled
objects, truncated or random bytes, unsupported array types, a malformed
layout) is :class:`CheckpointError`, each with a one-line message.
"""
from __future__ import annotations

import json
import os
import tempfile
import zipfile
from typing import Any, Dict, Tuple

import numpy as np

__all__ = ["save", "load", "CheckpointError"]

_LAYOUT_ENTRY = "__taugrad__"
_FORMAT = "taugrad-checkpoint"
_VERSION = 1
# numeric and boolean arrays only: no object, void (structured) or string arrays
_ARRAY_KINDS = set("biufc")


class CheckpointError(ValueError):
    """The file is not a valid taugrad checkpoint (or the object cannot be saved)."""


# ---------------------------------------------------------------------------
# saving
# ---------------------------------------------------------------------------


def _is_tensor(value: Any) -> bool:
    # Duck-typed so this module does not import the tensor engine: an ndarray's own
    # ``.data`` is a memoryview, a Tensor's is an ndarray.
    return not isinstance(value, np.ndarray) and isinstance(getattr(value, "data", None), np.ndarray)


class _Flattener:
    """Turn a nested object into (JSON layout, {entry name: array})."""

    def __init__(self) -> None:
        self.arrays: Dict[str, np.ndarray] = {}

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

    def layout(self, value: Any, path: str) -> Any:
        child = (lambda key: f"{path}.{key}" if path else str(key))
        if _is_tensor(value):
            return self.add_array(value.data, path, is_tensor=True)
        if isinstance(value, np.ndarray):
            return self.add_array(value, path, is_tensor=False)
        if isinstance(value, np.generic):
            return self.layout(value.item(), path)
        if value is None or isinstance(value, (bool, str)):
            return {"value": value}
        if isinstance(value, int):
            return {"value": value}
        if isinstance(value, float):
            # JSON has no inf/nan: keep floats as 0-d arrays
            return {"float": self.add_array(np.asarray(value, np.float64), path, False)["array"]}
        if isinstance(value, dict):
            items = []
            for key, item in value.items():
                if isinstance(key, bool) or not isinstance(key, (str, int)):
                    raise TypeError(f"cannot save {path or 'value'}: dict keys must be str or int, got {key!r}")
                items.append([key, self.layout(item, child(key))])
            return {"dict": items}
        if isinstance(value, (list, tuple)):
            kind = "list" if isinstance(value, list) else "tuple"
            return {kind: [self.layout(item, child(i)) for i, item in enumerate(value)]}
        raise TypeError(f"cannot save {path or 'value'}: unsupported type {type(value).__name__}")


def _write_npz(file: Any, arrays: Dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz``: one ``NAME.npy`` member each.

    Written member by member (rather than with ``np.savez(**arrays)``) so that any
    key is a valid name, including ``file`` and ``allow_pickle``.
    """
    with zipfile.ZipFile(file, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def save(obj: Any, path: "str | os.PathLike[str]") -> None:
    """Save ``obj`` (typically a ``state_dict()``) to ``path`` atomically.

    The previous content of ``path``, if any, is replaced only once the new file
    is complete and on disk.  Raises ``TypeError`` for values that cannot be
    stored without pickling, ``FileNotFoundError`` when the directory does not
    exist and ``IsADirectoryError`` when ``path`` is a directory.
    """
    path = os.fspath(path)
    if not isinstance(obj, dict):
        raise TypeError(f"taugrad.save expects a dict such as model.state_dict(), got {type(obj).__name__}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot save checkpoint: {path!r} is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot save checkpoint: directory {directory!r} does not exist")

    flattener = _Flattener()
    layout = flattener.layout(obj, "")
    header = {"format": _FORMAT, "version": _VERSION, "layout": layout}
    arrays = dict(flattener.arrays)
    arrays[_LAYOUT_ENTRY] = np.array(json.dumps(header))  # a 0-d unicode array, no pickling

    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".npz.tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as file:
            _write_npz(file, arrays)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:  # including KeyboardInterrupt: never leave the temporary file behind
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable (POSIX); harmless to skip where unsupported."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------


def _read_archive(path: str) -> Dict[str, np.ndarray]:
    """Every entry of the ``.npz`` at ``path``, read eagerly; errors become CheckpointError."""
    where = f"cannot load checkpoint {path!r}"
    with open(path, "rb") as file:
        magic = file.read(6)
    if not magic.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        if magic.startswith(b"\x80"):
            raise CheckpointError(f"{where}: it is a Python pickle, which is never loaded (not an .npz archive)")
        if magic.startswith(b"\x93NUMPY"):
            raise CheckpointError(f"{where}: a single .npy array, not an .npz archive")
        raise CheckpointError(f"{where}: not an .npz archive (unrecognised content)")
    try:
        archive = np.load(path, allow_pickle=False)
        try:
            return {name: archive[name] for name in archive.files}
        finally:
            archive.close()
    except ValueError as err:
        if "pickle" in str(err).lower():
            raise CheckpointError(f"{where}: it contains pickled Python objects, which are never loaded") from None
        raise CheckpointError(f"{where}: the archive is corrupt ({_first_line(err)})") from None
    except Exception as err:  # BadZipFile, EOFError, zlib.error, OSError...: malformed content
        raise CheckpointError(
            f"{where}: the file is truncated or corrupt ({type(err).__name__}: {_first_line(err)})"
        ) from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def load(path: "str | os.PathLike[str]") -> Any:
    """Load a checkpoint written by :func:`save`; returns the saved object.

    Tensors come back as Tensors (leaves, ``requires_grad=False``), arrays as
    arrays, numbers as numbers.  A plain ``.npz`` written by ``numpy.savez``
    (no layout entry) loads as a dict of Tensors keyed by entry name.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot load checkpoint: {path!r} is a directory")
    if not os.path.exists(path):
        raise FileNotFoundError(f"cannot load checkpoint: no file at {path!r}")
    arrays = _read_archive(path)
    where = f"cannot load checkpoint {path!r}"
    for name, array in arrays.items():
        if name != _LAYOUT_ENTRY and array.dtype.kind not in _ARRAY_KINDS:
            raise CheckpointError(f"{where}: entry {name!r} has unsupported dtype {array.dtype}")

    if _LAYOUT_ENTRY not in arrays:
        return {name: _make_tensor(array) for name, array in arrays.items()}
    header_array = arrays.pop(_LAYOUT_ENTRY)
    if header_array.dtype.kind != "U" or header_array.shape != ():
        raise CheckpointError(f"{where}: malformed {_LAYOUT_ENTRY} entry")
    try:
        header = json.loads(str(header_array[()]))
    except json.JSONDecodeError:
        raise CheckpointError(f"{where}: malformed {_LAYOUT_ENTRY} entry (not JSON)") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise CheckpointError(f"{where}: not a taugrad checkpoint")
    if header.get("version") != _VERSION:
        raise CheckpointError(f"{where}: unsupported checkpoint version {header.get('version')!r}")
    try:
        return _rebuild(header.get("layout"), arrays)
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{where}: malformed layout ({_first_line(err)})") from None


def _rebuild(node: Any, arrays: Dict[str, np.ndarray]) -> Any:
    """Inverse of ``_Flattener.layout``; only builds data, never calls anything named in the file."""
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"unexpected layout node {str(node)[:60]}")
    ((kind, content),) = node.items()
    if kind == "tensor":
        return _make_tensor(arrays[content])
    if kind == "array":
        return arrays[content]
    if kind == "float":
        return float(arrays[content])
    if kind == "value":
        if content is not None and not isinstance(content, (bool, int, str)):
            raise ValueError(f"unexpected value {content!r}")
        return content
    if kind == "dict":
        result = {}
        for pair in content:
            key, item = pair
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise ValueError(f"unexpected key {key!r}")
            result[key] = _rebuild(item, arrays)
        return result
    if kind == "list":
        return [_rebuild(item, arrays) for item in content]
    if kind == "tuple":
        return tuple(_rebuild(item, arrays) for item in content)
    raise ValueError(f"unknown layout kind {kind!r}")


def _make_tensor(array: np.ndarray) -> Any:
    from taugrad._tensor import Tensor  # late import: checkpoints of plain arrays need no engine

    return Tensor(array)

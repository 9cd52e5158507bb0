"""Safe checkpoints: ``taugrad.save(obj, path)`` and ``taugrad.load(path)``.

The file is a plain NumPy ``.npz`` archive (a zip of ``.npy`` arrays), read with
``allow_pickle=False``: loading a checkpoint parses arrays and one JSON string,
it never unpickles and never executes anything from the file.  A PyTorch
``.pth`` state dict (a zip with a pickle and raw storages) is read as data too, by
:mod:`taugrad.serialization.pth`, which interprets only the pickle opcodes a
state dict needs and never calls anything the file names.

What can be saved: a ``dict`` with string keys whose values are Tensors, NumPy
arrays, NumPy scalars, Python numbers/bools/strings/``None``, lists, tuples or
nested dicts of those (dict keys may be strings or integers, as in an
optimizer's state dict), nested at most 100 containers deep (``_MAX_DEPTH``)
and without reference cycles.  NumPy scalars keep their dtype (``np.float32(0.1)``
comes back as ``np.float32``).
A model's ``state_dict()`` is stored with its keys as the archive's entry names,
so ``numpy.load`` shows ``fc1.weight`` and friends; the layout of nested values
is kept in one extra JSON entry, ``__taugrad__``.

Writes are atomic: the archive is written to a temporary file in the target's
directory, flushed to disk (``fsync``) and renamed over the target with
``os.replace``.  A save that fails or is interrupted leaves the previous file
untouched and removes its temporary file.  The result has the permissions
``open(path, "wb")`` would give it: an overwritten file keeps its mode, a new one
gets ``0o666`` less the umask; a ``path`` that is a symbolic link is written
through (the file it points to is replaced, the link stays).

Errors: a missing file is ``FileNotFoundError``, a directory path is
``IsADirectoryError``, and a file that is not a valid checkpoint (pickled
objects, PyTorch files holding anything but tensors and containers, PyTorch's
legacy non-zip format, archive members that are not ``.npy`` arrays,
truncated or random bytes, unsupported array types, a malformed or absurdly
nested layout) is :class:`CheckpointError`, each with a one-line message.
"""
from __future__ import annotations

import errno
import json
import os
import secrets
import stat
import zipfile
from typing import Any, Dict, Tuple

import numpy as np

from taugrad.tensors.core.backend import device_of, is_array, to_device, to_host
from taugrad.tensors.core.device import as_device, check_device
from taugrad.tensors.core.node import Tensor
from taugrad.serialization.pth import TorchCheckpointError, is_torch_archive, read_torch_archive

__all__ = ["save", "load", "CheckpointError"]

_LAYOUT_ENTRY = "__taugrad__"
_FORMAT = "taugrad-checkpoint"
_VERSION = 1
# numeric and boolean arrays only: no object, void (structured) or string arrays
_ARRAY_KINDS = set("biufc")
# Containers (dicts, lists, tuples) may nest this deep, the top-level dict included.  Real
# state dicts nest a handful of levels; the limit keeps both save and load far from Python's
# recursion limit, so a hostile layout gets a CheckpointError rather than a RecursionError.
_MAX_DEPTH = 100


class CheckpointError(ValueError):
    """The file is not a valid taugrad checkpoint (or the object cannot be saved)."""


# ---------------------------------------------------------------------------
# saving
# ---------------------------------------------------------------------------


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
        if depth > _MAX_DEPTH:
            raise ValueError(f"cannot save {_shorten(path)}: nested more than {_MAX_DEPTH} containers deep")
        self.open_containers[id(container)] = path

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


def _write_npz(file: Any, arrays: Dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz``: one ``NAME.npy`` member each.

    Written member by member (rather than with ``np.savez(**arrays)``) so that any
    key is a valid name, including ``file`` and ``allow_pickle``.
    """
    with zipfile.ZipFile(file, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def save(obj: Any, path: "str | os.PathLike[str]", pickle_module: Any = None, pickle_protocol: Any = None,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Save ``obj`` (typically a ``state_dict()``) to ``path`` atomically.

    The previous content of ``path``, if any, is replaced only once the new file
    is complete and on disk.  If ``path`` is a symbolic link, the file it points
    to is replaced and the link kept, as ``open(path, "wb")`` would do (a dangling
    link gets its target created).  An existing file keeps its permission bits;
    a new one gets ``0o666`` less the umask.

    torch's ``pickle_module``/``pickle_protocol`` arguments are accepted and ignored: nothing is pickled.

    Raises ``TypeError`` for values that cannot be stored without pickling (a whole Module among them),
    ``ValueError`` for a reference cycle or nesting deeper than ``_MAX_DEPTH``,
    ``FileNotFoundError`` when the directory does not exist and
    ``IsADirectoryError`` when ``path`` is a directory.
    """
    path = _follow_symlinks(os.fspath(path))
    if hasattr(obj, "state_dict") and hasattr(obj, "load_state_dict"):  # a Module or an optimizer
        raise TypeError(
            f"taugrad.save cannot save a whole {type(obj).__name__} (that would need pickle): "
            f"save obj.state_dict() and load it with load_state_dict(taugrad.load(path))"
        )
    if not isinstance(obj, dict):
        raise TypeError(f"taugrad.save expects a dict such as model.state_dict(), got {type(obj).__name__}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot save checkpoint: {path!r} is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot save checkpoint: directory {directory!r} does not exist")

    flattener = _Flattener()
    layout = flattener.layout(obj, "", depth=0)
    header = {"format": _FORMAT, "version": _VERSION, "layout": layout}
    arrays = dict(flattener.arrays)
    arrays[_LAYOUT_ENTRY] = np.array(json.dumps(header))  # a 0-d unicode array, no pickling

    fd, temporary = _create_temporary(path)
    try:
        _keep_existing_mode(fd, temporary, path)
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


def _follow_symlinks(path: str) -> str:
    """The file that ``path`` names once symbolic links are followed, as ``open`` would.

    Replacing the link itself would turn it into a regular file and leave the file it
    points to stale.
    """
    if not os.path.islink(path):
        return path  # not resolved further, so messages show the path as given
    resolved = os.path.realpath(path)
    if os.path.islink(resolved):  # realpath stops where the links go round in a loop
        raise OSError(errno.ELOOP, f"cannot save checkpoint: {path!r} is a loop of symbolic links")
    return resolved


def _create_temporary(path: str) -> Tuple[int, str]:
    """Create a new, empty temporary file next to ``path``; returns ``(fd, name)``.

    Created with mode ``0o666`` so that the kernel applies the umask (and any default
    ACL) exactly as for ``open(path, "wb")``; ``tempfile.mkstemp`` would make it 0600,
    and reading the umask means setting it, which races with other threads.
    """
    directory, base = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        temporary = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.npz.tmp")
        try:
            return os.open(temporary, flags, 0o666), temporary
        except FileExistsError:  # O_EXCL: never reuse (or follow a link at) an existing name
            continue
    raise FileExistsError(f"cannot save checkpoint: no free temporary file name in {directory!r}")


def _keep_existing_mode(fd: int, temporary: str, path: str) -> None:
    """Give the temporary file the permission bits of the file it will replace, if any."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return  # a new checkpoint: the umask-derived mode from _create_temporary stands
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:  # Windows before Python 3.13
        os.chmod(temporary, mode)


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
        raise CheckpointError(f"{where}: the archive is corrupt ({_first_line(err)})") from None
    except Exception as err:  # BadZipFile, EOFError, zlib.error, OSError...: malformed content
        raise CheckpointError(
            f"{where}: the file is truncated or corrupt ({type(err).__name__}: {_first_line(err)})"
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


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def load(path: "str | os.PathLike[str]", map_location: Any = None, pickle_module: Any = None, *,
         weights_only: "bool | None" = None, mmap: Any = None, **pickle_load_args: Any) -> Any:
    """Load a checkpoint written by :func:`save` (or a PyTorch state dict); returns the saved object.

    Tensors come back as Tensors (leaves, ``requires_grad=False``), arrays as
    arrays, NumPy scalars as NumPy scalars of their dtype, numbers as numbers.  A plain ``.npz`` written by ``numpy.savez``
    (no layout entry) loads as a dict of Tensors keyed by entry name.

    A file written by ``torch.save`` (a zip holding ``data.pkl``) whose content is
    tensors, dicts, lists, tuples and numbers (a ``state_dict()``, an optimizer's,
    a dict of those) is read by :mod:`taugrad.serialization.pth` without unpickling;
    anything else in it is refused with :class:`CheckpointError`.

    ``map_location`` says where tensors go, as torch's: None puts each where it
    was saved from (a CUDA tensor back on CUDA), a device or string puts all
    there, a dict maps saved locations to new ones (``{'cuda:0': 'cpu'}``), a
    callable ``f(tensor, location)`` returns the tensor to use (None: where
    ``map_location=None`` would put it, as torch's default restore location).
    Tensors of a PyTorch file count as saved from the CPU.
    torch's other keyword arguments are accepted so that torch code runs
    unchanged: ``weights_only`` (``True`` or ``False`` read the same: a file is
    only ever read as data) and ``mmap``.
    """
    place = _placer(map_location)
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot load checkpoint: {path!r} is a directory")
    if not os.path.exists(path):
        raise FileNotFoundError(f"cannot load checkpoint: no file at {path!r}")
    torch_file = _read_torch_file(path)
    if torch_file is not _NOT_TORCH:
        return torch_file if map_location is None else _place_all(torch_file, place)
    arrays = _read_archive(path)
    where = f"cannot load checkpoint {path!r}"
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
        return _rebuild(header.get("layout"), arrays, place=place)
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{where}: malformed layout ({_first_line(err)})") from None


def _parse_header(text: str, where: str) -> Any:
    """The JSON of the layout entry; anything JSON parsing can throw becomes CheckpointError."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise CheckpointError(f"{where}: malformed {_LAYOUT_ENTRY} entry (not JSON)") from None
    except RecursionError:  # far deeper than _MAX_DEPTH: json recurses once per level
        raise CheckpointError(f"{where}: malformed {_LAYOUT_ENTRY} entry (nested too deeply to parse)") from None
    except ValueError:  # the one other failure: an integer over Python's int-conversion digit limit
        raise CheckpointError(
            f"{where}: malformed {_LAYOUT_ENTRY} entry (an integer in it has too many digits)"
        ) from None


def _to(t: Tensor, dev) -> Tensor:
    """The loaded leaf ``t`` on ``dev`` (still a leaf, with its ``requires_grad``)."""
    data = to_device(t._data, dev)
    return t if data is t._data else Tensor(data, requires_grad=t.requires_grad)


def _placer(map_location: Any):
    """``place(tensor, saved_location) -> tensor`` for a ``map_location`` of torch's forms."""
    def restore(t, location):  # where it was saved from
        return t if location == "cpu" else _to(t, check_device(location, "load"))

    if map_location is None:
        return restore
    if callable(map_location) and not isinstance(map_location, (str, dict)):
        def call(t, location):
            result = map_location(t, location)
            return restore(t, location) if result is None else result
        return call
    if isinstance(map_location, dict):
        table = {str(as_device(k, "load")): v for k, v in map_location.items()}
        return lambda t, location: _to(t, check_device(table.get(location, location), "load"))
    dev = check_device(map_location, "load")
    return lambda t, location: _to(t, dev)


def _place_all(obj: Any, place) -> Any:
    """``obj`` with every Tensor in its dicts, lists and tuples placed (saved location: the CPU)."""
    if isinstance(obj, Tensor):
        return place(obj, "cpu")
    if isinstance(obj, dict):
        return {k: _place_all(v, place) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_place_all(v, place) for v in obj)
    return obj


def _keep(t: Any, location: str) -> Any:
    return t


def _rebuild(node: Any, arrays: Dict[str, np.ndarray], depth: int = 0, place=_keep) -> Any:
    """Inverse of ``_Flattener.layout``; only builds data, never calls anything named in the file.

    ``depth`` counts the containers around ``node``; past ``_MAX_DEPTH`` the layout is
    refused, as save refuses to write it.
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
            raise ValueError(f"scalar entry {content!r} has shape {scalar.shape}, expected ()")
        return scalar[()]  # a NumPy scalar of the saved dtype
    if kind == "float":
        return float(arrays[content])
    if kind == "value":
        if content is not None and not isinstance(content, (bool, int, str)):
            raise ValueError(f"unexpected value {content!r}")
        return content
    if kind in ("dict", "list", "tuple"):
        depth += 1
        if depth > _MAX_DEPTH:
            raise ValueError(f"nested more than {_MAX_DEPTH} containers deep")
    if kind == "dict":
        result = {}
        for pair in content:
            key, item = pair
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise ValueError(f"unexpected key {key!r}")
            result[key] = _rebuild(item, arrays, depth, place)
        return result
    if kind == "list":
        return [_rebuild(item, arrays, depth, place) for item in content]
    if kind == "tuple":
        return tuple(_rebuild(item, arrays, depth, place) for item in content)
    raise ValueError(f"unknown layout kind {kind!r}")


def _make_tensor(array: np.ndarray) -> Any:
    return Tensor(array)


def _make_torch_tensor(array: np.ndarray, requires_grad: bool) -> Any:
    return Tensor(array, requires_grad=requires_grad)


_NOT_TORCH = object()


def _read_torch_file(path: str) -> Any:
    """The object in a ``torch.save`` zip at ``path``, or ``_NOT_TORCH`` if it is not one."""
    where = f"cannot load checkpoint {path!r}"
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError):
        return _NOT_TORCH  # _read_archive gives the precise message
    with archive:
        if not is_torch_archive(archive.namelist()):
            return _NOT_TORCH
        try:
            return read_torch_archive(archive, _make_torch_tensor)
        except TorchCheckpointError as err:
            raise CheckpointError(
                f"{where}: a PyTorch file that is not only tensors and containers ({err}); "
                "taugrad never unpickles, so save model.state_dict() with torch and load that"
            ) from None
        except (zipfile.BadZipFile, OSError, EOFError) as err:
            raise CheckpointError(f"{where}: the PyTorch archive is corrupt ({_first_line(err)})") from None

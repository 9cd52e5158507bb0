"""Safe checkpoints: ``taugrad.save(obj, path)`` and ``taugrad.load(path)``.

The file is a plain NumPy ``.npz`` archive (a zip of ``.npy`` arrays), read with
``allow_pickle=False``: loading a checkpoint parses arrays and one JSON string,
it never unpickles and never executes anything from the file.  A PyTorch
``.pth`` state dict (a zip with a pickle and raw storages) is read as data too, by
:mod:`taugrad.serialization.pth`, which interprets only the pickle opcodes a
state dict needs and never calls anything the file names.

What can be saved: a whole Module (see :mod:`taugrad.serialization.module_tree`: the
module tree is written as data and rebuilt, with ``weights_only=False`` or allowed
classes, only from classes already imported), Tensors, NumPy arrays, NumPy scalars, Python
numbers/bools/strings/``None``, and lists, tuples and dicts of those nested in
any way (a ``state_dict()``, an optimizer's, a training checkpoint such as
``{"model": ..., "optimizer": ..., "iter_num": 7, "config": {...}}``, or a bare
tensor or list); dict keys may be strings or integers, as in an optimizer's
state dict; at most 100 containers deep (``npz.MAX_DEPTH``) and without
reference cycles.  NumPy scalars keep their dtype (``np.float32(0.1)``
comes back as ``np.float32``).
A model's ``state_dict()`` is stored with its keys as the archive's entry names,
so ``numpy.load`` shows ``fc1.weight`` and friends; the layout of nested values
is kept in one extra JSON entry, ``__taugrad__``.

``path`` is a file name or an open binary file (``open(p, "wb")``,
``io.BytesIO()``), as torch's ``f``.  Writes to a file name are atomic: the archive is written to a temporary file in the target's
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
import io
import os
import secrets
import stat
import zipfile
from typing import Any, Tuple

import numpy as np

from taugrad.tensors.core.backend import to_device
from taugrad.tensors.core.device import as_device, check_device
from taugrad.tensors.core.node import Tensor
from taugrad.nn.module import Module
from taugrad.serialization.module_tree import SAFE_GLOBALS, ModuleFlattener, WeightsOnlyError, module_reader
from taugrad.serialization.npz import CheckpointError, encode, first_line, read_npz, write_npz
from taugrad.serialization.pth import TorchCheckpointError, is_torch_archive, read_torch_archive

__all__ = ["save", "load", "CheckpointError", "WeightsOnlyError", "add_safe_globals", "get_safe_globals",
           "clear_safe_globals", "safe_globals"]


def add_safe_globals(safe_globals: "list[Any]") -> None:
    """Allow these classes (and ``nn.functional`` functions) in whole modules loaded with ``weights_only=True``.

    As torch's: an entry is the class itself or a ``(class, name)`` pair.  Nothing is ever imported or
    called on their account; the list only widens what a default ``load`` agrees to rebuild.
    """
    SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals() -> "list[Any]":
    """The classes and functions :func:`add_safe_globals` allowed, in order."""
    return list(SAFE_GLOBALS)


def clear_safe_globals() -> None:
    """Forget every class :func:`add_safe_globals` allowed."""
    SAFE_GLOBALS.clear()


class safe_globals:  # noqa: N801  (named as torch.serialization.safe_globals)
    """``with safe_globals([cls, ...]):`` allows these classes for the block only, as torch's context manager."""

    def __init__(self, safe_globals: "list[Any]") -> None:
        self.safe_globals = list(safe_globals)
        self.saved: "list[Any]" = []

    def __enter__(self) -> "safe_globals":
        self.saved = list(SAFE_GLOBALS)
        SAFE_GLOBALS.extend(self.safe_globals)
        return self

    def __exit__(self, *exc: Any) -> None:
        SAFE_GLOBALS[:] = self.saved


def save(obj: Any, path: "str | os.PathLike[str]", pickle_module: Any = None, pickle_protocol: Any = None,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Save ``obj`` (a ``state_dict()``, a checkpoint dict, any nesting of tensors, numbers, strings, ``None``,
    lists, tuples and dicts, or a whole Module written as data) to ``path``, a file name (atomically) or an open
    binary file.

    The previous content of ``path``, if any, is replaced only once the new file
    is complete and on disk.  If ``path`` is a symbolic link, the file it points
    to is replaced and the link kept, as ``open(path, "wb")`` would do (a dangling
    link gets its target created).  An existing file keeps its permission bits;
    a new one gets ``0o666`` less the umask.

    torch's ``pickle_module``/``pickle_protocol`` arguments are accepted and ignored: nothing is pickled.

    Raises ``TypeError`` for values that cannot be stored without pickling (an optimizer object, a module
    attribute that is a lambda or an arbitrary object: the message names it),
    ``ValueError`` for a reference cycle or nesting deeper than ``serialization.npz.MAX_DEPTH``,
    ``FileNotFoundError`` when the directory does not exist and
    ``IsADirectoryError`` when ``path`` is a directory.
    """
    if hasattr(obj, "state_dict") and hasattr(obj, "load_state_dict") and not isinstance(obj, Module):
        raise TypeError(
            f"taugrad.save cannot save a whole {type(obj).__name__} (that would need pickle): "
            f"save obj.state_dict() and load it with load_state_dict(taugrad.load(path))"
        )
    if hasattr(path, "write"):  # an open binary file or io.BytesIO: written in place (it is the caller's)
        write_npz(path, encode(obj, ModuleFlattener()))
        return
    path = _follow_symlinks(os.fspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot save checkpoint: {path!r} is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot save checkpoint: directory {directory!r} does not exist")

    arrays = encode(obj, ModuleFlattener())  # before the file is touched: a refused value leaves it as it was

    fd, temporary = _create_temporary(path)
    try:
        _keep_existing_mode(fd, temporary, path)
        with os.fdopen(fd, "wb") as file:
            write_npz(file, arrays)
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


def load(path: "str | os.PathLike[str]", map_location: Any = None, pickle_module: Any = None, *,
         weights_only: "bool | None" = None, mmap: Any = None, **pickle_load_args: Any) -> Any:
    """Load a checkpoint written by :func:`save` (or by ``torch.save``) from a file name or an open binary file;
    returns the saved object.

    Tensors come back as Tensors (leaves, ``requires_grad=False``), arrays as
    arrays, NumPy scalars as NumPy scalars of their dtype, numbers as numbers.  A plain ``.npz`` written by ``numpy.savez``
    (no layout entry) loads as a dict of Tensors keyed by entry name.

    A file written by ``torch.save`` (a zip holding ``data.pkl``) whose content is
    tensors, dicts, lists, tuples, numbers, strings, ``None`` and ``torch.Size``
    (a ``state_dict()``, an optimizer's, a training checkpoint) is read by :mod:`taugrad.serialization.pth` without unpickling;
    anything else in it is refused with :class:`CheckpointError`.

    ``map_location`` says where tensors go, as torch's: None puts each where it
    was saved from (a CUDA tensor back on CUDA), a device or string puts all
    there, a dict maps saved locations to new ones (``{'cuda:0': 'cpu'}``), a
    callable ``f(tensor, location)`` returns the tensor to use (None: where
    ``map_location=None`` would put it, as torch's default restore location).
    Tensors of a PyTorch file count as saved from the CPU.
    A whole module (written by :func:`save` from a Module) is rebuilt from
    classes that are already imported and subclass ``Module``, never by calling
    anything the file names.  With ``weights_only`` ``None`` or ``True`` (torch's
    default since 2.6) its classes must also have been allowed with
    :func:`add_safe_globals` or :class:`safe_globals`, else
    :class:`WeightsOnlyError` tells to pass ``weights_only=False`` if the file is
    trusted.  Plain data reads the same whatever ``weights_only`` is.
    ``mmap`` is accepted so that torch code runs unchanged.
    """
    place = _placer(map_location)
    if hasattr(path, "read"):  # an open binary file or io.BytesIO: read whole, then as a file would be
        where = f"cannot load checkpoint from {type(path).__name__}"
        source: Any = io.BytesIO(path.read())
    else:
        source = os.fspath(path)
        where = f"cannot load checkpoint {source!r}"
        if os.path.isdir(source):
            raise IsADirectoryError(f"cannot load checkpoint: {source!r} is a directory")
        if not os.path.exists(source):
            raise FileNotFoundError(f"cannot load checkpoint: no file at {source!r}")
    torch_file = _read_torch_file(source, where)
    if torch_file is not _NOT_TORCH:
        return torch_file if map_location is None else _place_all(torch_file, place)
    return read_npz(source, place, where, extension=module_reader(weights_only is not False))


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


def _make_torch_tensor(array: np.ndarray, requires_grad: bool) -> Any:
    return Tensor(array, requires_grad=requires_grad)


_NOT_TORCH = object()


def _read_torch_file(path: Any, where: str) -> Any:
    """The object in a ``torch.save`` zip at ``path`` (a name or a binary file), or ``_NOT_TORCH`` if it is not one."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError):
        return _NOT_TORCH  # read_npz gives the precise message
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
            raise CheckpointError(f"{where}: the PyTorch archive is corrupt ({first_line(err)})") from None

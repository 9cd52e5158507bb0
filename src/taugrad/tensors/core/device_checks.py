"""Checks of values on a device that do not make the host wait for it.

On the CPU a bad class target or embedding index raises at once.  On a GPU,
asking "is any index bad?" reads a flag back to the host, and that read waits
for every kernel queued before it: in a training step, the whole forward pass.
The host then sits idle instead of queueing the backward pass, which cost a
fifth of a large MLP's step on an H200.

So an op on a device computes its flag there and leaves it here with
:func:`defer`, computing meanwhile with a safe stand-in (index 0), so that no
kernel reads outside an array.  The next read of any value to the host
(``.item()``, ``bool()``, ``.tolist()``, printing, ``.cpu()``, saving,
DLPack export, ``taugrad.cuda.synchronize()``) calls :func:`raise_pending`
first, which raises the op's own error.  No number computed from a bad index
reaches the user: every way to see one passes through that read.  This is
when PyTorch's CUDA kernels report a bad index too (a device-side assert,
seen at the next synchronizing call).
"""
from __future__ import annotations

import threading
from typing import Dict, Hashable, Tuple

import numpy as np

#: (op, size) -> (the device's 0-d "some index was bad" flag, the error type, its message)
_PENDING: Dict[Hashable, Tuple[object, type, str]] = {}
#: another thread may leave a check between a read's taking of the flags and its clearing them
_LOCK = threading.Lock()


def defer(key: Hashable, bad, error_type: type, message: str) -> None:
    """Leave the device's 0-d boolean ``bad`` to be read at the next host read.

    Checks with the same ``key`` are or-ed on the device (one kernel), so a
    loop that reads nothing for many steps keeps one flag per key, not one per step.
    """
    with _LOCK:
        earlier = _PENDING.get(key)
        _PENDING[key] = (bad if earlier is None else earlier[0] | bad, error_type, message)


def raise_pending() -> None:
    """Read the pending flags (this waits for the device) and raise the first check that failed."""
    if not _PENDING:
        return
    with _LOCK:
        pending = list(_PENDING.values())
        _PENDING.clear()
    if not any(bool(bad) for bad in _either_per_device(pending)):
        return
    for bad, error_type, message in pending:
        if bool(bad):
            raise error_type(f"{message} (found on the device, which is checked without waiting for it: "
                             f"raised at the first read of a value after that op)")


def _either_per_device(pending) -> list:
    """One flag per device, or-ed there: the usual case (nothing failed) reads one number per device."""
    by_device: dict = {}
    for bad, _, _ in pending:
        key = str(getattr(bad, "device", ""))
        by_device[key] = bad if key not in by_device else by_device[key] | bad
    return list(by_device.values())


def outside_on_device(index, size: int, key: Hashable, error_type: type, message: str, allowed=None,
                      negatives: bool = False):
    """The mask of ``index`` entries outside ``[0, size)``, with "none is, but ``allowed``" left pending.

    ``negatives``: ``[-size, size)`` is the valid range (a negative index
    counts from the end).  ``index`` is an integer array on a device; the
    caller replaces the masked entries by a safe index before using them
    (CuPy wraps an index outside the array around instead of raising).
    """
    if negatives and index.dtype.kind == "i":
        wide = index if index.dtype.itemsize == 8 else index.astype(np.int64)  # index + size must not overflow
        outside = as_unsigned(wide + size) >= 2 * size
    else:
        outside = as_unsigned(index) >= size
    bad = outside if allowed is None else outside & (index != allowed)
    defer(key, bad.any(), error_type, message)
    return outside


_UNSIGNED_TWINS: Dict[np.dtype, np.dtype] = {}


def as_unsigned(index):
    """An integer array seen as the unsigned type of its size: a negative index becomes huge.

    So ``as_unsigned(i) >= n`` tests both bounds in one pass.
    """
    if index.dtype.kind == "u":
        return index
    twin = _UNSIGNED_TWINS.get(index.dtype)
    if twin is None:  # a handful of integer dtypes exist, so the cache stays small
        twin = _UNSIGNED_TWINS[index.dtype] = np.dtype(index.dtype.str.replace("i", "u"))
    return index.view(twin)


def checked_index(index, size: int, key: Hashable, message: str):
    """``index`` (integers, negatives counting from the end) checked against ``[-size, size)``.

    On the CPU an entry outside raises ``IndexError(message)`` at once.  On a
    device the check is left pending (see the module's docstring) and the
    entries outside are replaced by 0 meanwhile, so no kernel reads or writes
    outside the array (CuPy would wrap them around).
    """
    if isinstance(index, np.ndarray):  # NumPy's, or the recording subclass of taugrad.compile (the CPU too)
        if index.size and (index.min() < -size or index.max() >= size):
            raise IndexError(message)
        return index
    outside = outside_on_device(index, size, key, IndexError, message, negatives=True)
    return index * ~outside  # the array's own operators: this module knows no array module

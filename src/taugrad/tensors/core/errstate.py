"""Silencing NumPy's warnings for IEEE special results (log(0) = -inf, 0/0 = nan, overflow).

Those values are the answer, as in PyTorch, which does not warn either;
``taugrad.detect_anomaly()`` is the tool that reports where they appear.
Used by the ops that make special values out of finite inputs (unary
functions, division, powers) and around the backward pass; ``+ - *`` are left
out: they only warn on overflow or on infinities already there.

:func:`quiet` has the effect of ``np.errstate(divide="ignore",
invalid="ignore", over="ignore")``, which builds its settings anew on each
entry (about 11k machine instructions, as much as three small ufunc calls).
On NumPy 2 the settings live in a context variable, so the silent version of
whatever is current is built once (by ``np.errstate`` itself) and reused.

The same ``quiet()`` serves every array backend: CuPy's kernels never warn
about special values (they have no error state), so only NumPy needs silencing.
"""
from __future__ import annotations

import numpy as np

# NumPy 2 keeps the floating-point error settings in this context variable
from numpy._core._ufunc_config import _extobj_contextvar as _ERROR_STATE

#: current error settings -> the same settings with divide/invalid/over ignored.
#: Keys are NumPy's settings objects, compared by identity; holding them keeps
#: an identity from being reused.
_SILENT_VERSION = {}


def _silent_version(current):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # builds on `current`
        silent = _ERROR_STATE.get()
    if len(_SILENT_VERSION) >= 32:  # settings changed many times: start over
        _SILENT_VERSION.clear()
    _SILENT_VERSION[current] = silent
    return silent


def silence():
    """:func:`quiet` without the ``with``: returns the token that :func:`restore` takes.

    For the hottest callers (the backward pass, cross-entropy), where a
    ``with`` block's two extra Python calls show in a training step.
    """
    current = _ERROR_STATE.get()
    silent = _SILENT_VERSION.get(current)
    return _ERROR_STATE.set(silent if silent is not None else _silent_version(current))


#: undo :func:`silence` with the token it returned
restore = _ERROR_STATE.reset


class _Quiet:
    """``quiet()``'s context manager (one per ``with``: threads and nesting are safe)."""

    __slots__ = ("_token",)

    def __enter__(self):
        self._token = silence()
        return self

    def __exit__(self, *exc_info):
        restore(self._token)


def quiet() -> _Quiet:
    """A ``with`` block in which NumPy stays silent about inf and nan results."""
    return _Quiet()

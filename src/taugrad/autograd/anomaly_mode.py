"""``torch.autograd.detect_anomaly`` and ``set_detect_anomaly``: PyTorch's anomaly mode.

PyTorch's mode checks only the backward pass, and only for nan: with it on,
the first local rule that returns a gradient holding nan raises::

    Function 'LogBackward0' returned nan values in its 0th output; the op was created at train.py:12 ...

and the message names the line that created that node (PyTorch prints the
forward traceback as a warning instead).  A forward pass that makes inf or
nan on purpose (``log(0)`` removed later by a mask) runs as under PyTorch.
``check_nan=False`` records the lines and checks nothing.

taugrad's own, stricter tool is :func:`taugrad.detect_anomaly`, which also stops
at the first forward op that *produces* nan or inf from finite inputs, and at
inf as well as nan (:mod:`taugrad.debug.anomaly`).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from taugrad.debug.anomaly import get_mode, set_mode

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


def is_anomaly_enabled() -> bool:
    """``torch.is_anomaly_enabled()``: True while anomaly mode (either style) is on in this thread."""
    return get_mode()[0]


def is_anomaly_check_nan_enabled() -> bool:
    """``torch.is_anomaly_check_nan_enabled()``: True while anomaly mode is on and checks for nan."""
    enabled, _, check_nan = get_mode()
    return enabled and check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled(mode, check_nan=True)``: switch PyTorch's anomaly mode on or off."""
    set_mode(enabled, torch_style=True, check_nan=check_nan)


class detect_anomaly:  # noqa: N801  (torch's name)
    """Context manager and decorator: PyTorch's anomaly mode inside the block (see the module)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)
        self._saved: list = []

    def __enter__(self) -> None:
        self._saved.append(get_mode())
        set_mode(True, torch_style=True, check_nan=self.check_nan)

    def __exit__(self, *exc_info: object) -> None:
        enabled, torch_style, check_nan = self._saved.pop()
        set_mode(enabled, torch_style, check_nan)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class set_detect_anomaly:  # noqa: N801  (torch's name)
    """``torch.autograd.set_detect_anomaly(mode, check_nan=True)``: sets the mode at once (a call or a
    ``with`` block); leaving the block puts back what was there before."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._saved = get_mode()
        set_mode(mode, torch_style=True, check_nan=check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        set_mode(*self._saved)

"""Grad mode: whether operations record a graph, per thread, as in PyTorch.

:class:`no_grad`, :class:`enable_grad`, :class:`set_grad_enabled` switch it;
:func:`is_grad_enabled` reads it.  Both engines' higher-order code and the
tensor ops read :data:`STATE` directly (one attribute read per op).
"""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable, TypeVar

class _GradModeState(threading.local):
    """Per-thread flag: does the forward pass record a graph?"""

    enabled = True


#: this thread's grad mode (``STATE.enabled``)
STATE = _GradModeState()


def is_grad_enabled() -> bool:
    """True when operations record the graph that ``backward()`` needs."""
    return STATE.enabled


F = TypeVar("F", bound=Callable[..., Any])


class _GradModeSwitch:
    """Context manager and decorator that sets grad mode, then restores it.

    The modes to restore are kept per thread (and as a stack, so one instance
    can be nested): an instance shared by threads, such as a decorated
    function's, must give each thread back its own mode.
    """

    _mode: bool

    def __new__(cls, orig_func: Any = None) -> Any:
        # bare ``@no_grad`` (no parentheses) hands the function to the class
        if orig_func is None:
            return super().__new__(cls)
        if not callable(orig_func):
            raise TypeError(f"{cls.__name__}() takes no arguments, got {type(orig_func).__name__}")
        return cls()(orig_func)

    def __init__(self, orig_func: Any = None) -> None:
        self._local = threading.local()

    def _saved(self) -> list:
        """This thread's stack of modes to restore."""
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def __enter__(self) -> "_GradModeSwitch":
        self._saved().append(STATE.enabled)
        STATE.enabled = self._mode
        return self

    def __exit__(self, *exc_info: object) -> None:
        STATE.enabled = self._saved().pop()

    def __call__(self, fn: F) -> F:
        if not callable(fn):
            raise TypeError(f"{type(self).__name__} decorates functions, got {type(fn).__name__}")
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self, fn)  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def _wrap_generator(switch: _GradModeSwitch, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A generator function whose body runs in ``switch``'s mode at every resumption.

    Entering the mode around the call alone would not do: a generator's body
    only runs on ``next()``, and between yields the caller's own mode applies.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gen = fn(*args, **kwargs)
        resume: Callable[[], Any] = lambda: gen.send(None)
        while True:
            try:
                with switch:
                    response = resume()
            except StopIteration as stop:
                return stop.value
            try:
                request = yield response
            except GeneratorExit:
                with switch:
                    gen.close()
                raise
            except BaseException as exc:  # thrown in by the caller: forward it to the body
                resume = functools.partial(gen.throw, exc)
            else:
                resume = functools.partial(gen.send, request)

    return wrapper


class no_grad(_GradModeSwitch):
    """Do not record a graph inside this block (or decorated function).

    Like ``torch.no_grad``: results of operations have no parents and need no
    memory for backward.  The setting is per thread.  Usable as ``with
    no_grad():``, ``@no_grad()`` or ``@no_grad``; a decorated generator runs
    every step of its body without grad.
    """

    _mode = False


class enable_grad(_GradModeSwitch):
    """Record the graph inside this block even within ``no_grad`` (same forms as :class:`no_grad`)."""

    _mode = True


class set_grad_enabled(_GradModeSwitch):
    """Switch graph recording on or off for the calling thread, like ``torch.set_grad_enabled``.

    * ``set_grad_enabled(False)`` as a plain call changes the mode at once;
    * ``with set_grad_enabled(False):`` restores the previous mode on exit;
    * ``@set_grad_enabled(False)`` runs the decorated function in that mode
      (decorating leaves the current mode alone).
    """

    def __new__(cls, mode: bool) -> "set_grad_enabled":
        return object.__new__(cls)

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self._mode = bool(mode)
        # the mode changes now (plain-call form); a ``with`` on this object
        # then has to restore the mode from before the call, not the new one
        self._local.before_call = STATE.enabled
        STATE.enabled = self._mode

    def __enter__(self) -> "set_grad_enabled":
        before = self._local.__dict__.pop("before_call", None)
        self._saved().append(STATE.enabled if before is None else before)
        STATE.enabled = self._mode
        return self

    def __call__(self, fn: F) -> F:
        # decorating is not running: undo the switch made by the constructor
        before = self._local.__dict__.pop("before_call", None)
        if before is not None:
            STATE.enabled = before
        return super().__call__(fn)


class _InferenceState(threading.local):
    """Per-thread depth of the ``inference_mode(True)`` blocks now running."""

    depth = 0


_INFERENCE = _InferenceState()


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` (on this thread), as ``torch.is_inference_mode_enabled``."""
    return _INFERENCE.depth > 0


class inference_mode(_GradModeSwitch):
    """``torch.inference_mode``: no graph is recorded inside the block or decorated function.

    taugrad has no separate "inference tensors": PyTorch's mode also skips the
    version counters and view tracking to save time, and refuses to use its
    results in a later graph; here it is :class:`no_grad` plus the flag read by
    :func:`is_inference_mode_enabled`.  ``inference_mode(False)`` changes
    nothing (grad mode stays as it is), as PyTorch's.  Usable as ``with
    inference_mode():``, ``@inference_mode()`` and bare ``@inference_mode``.
    """

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode):  # bare ``@inference_mode``
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: Any = True) -> None:
        super().__init__()
        if not isinstance(mode, bool):
            raise TypeError(f"inference_mode: mode must be a bool, got {type(mode).__name__}")
        self._on = mode

    def __enter__(self) -> "inference_mode":
        self._saved().append(STATE.enabled)
        if self._on:
            STATE.enabled = False
            _INFERENCE.depth += 1
        return self

    def __exit__(self, *exc_info: object) -> None:
        STATE.enabled = self._saved().pop()
        if self._on:
            _INFERENCE.depth -= 1

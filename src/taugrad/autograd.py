"""The one engine shared by ``Value`` and ``Tensor``.

Autograd is graph bookkeeping plus local derivatives plus reverse accumulation.
This module holds the part that does not depend on what a node carries:

* :func:`topological_order` walks the graph *iteratively* (an explicit stack,
  never Python recursion, so a chain of a million nodes is fine) and returns the
  interior nodes with every parent before its children.  Running the local rules
  over that list in reverse is reverse-mode differentiation.
* grad mode (:func:`no_grad`, :func:`enable_grad`, :func:`set_grad_enabled`,
  :func:`is_grad_enabled`), kept per thread like PyTorch's.

The node protocol is tiny: a node has ``_prev``, the tuple of its parents
(empty for a leaf).  Each node type (``Value``, ``Tensor``) keeps its own fast
local rules and its own idea of what a gradient is; only the traversal is shared.
"""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable, Iterable, List, Protocol, Sequence, TypeVar


class Node(Protocol):
    """What the traversal needs from a node: the tuple of its parents."""

    _prev: Sequence[Any]


N = TypeVar("N", bound=Node)


def topological_order(roots: Iterable[N]) -> List[N]:
    """Interior nodes reachable from ``roots``, each listed after all its parents.

    Leaves (nodes whose ``_prev`` is empty) are left out: they have no local rule
    to run, they only receive gradient.  The walk is a depth-first post-order with
    explicit stacks (the current path and an iterator over each node's parents), so its depth
    is bounded by memory, not by ``sys.getrecursionlimit()``.
    """
    order: List[N] = []
    visited = set()
    append, visit = order.append, visited.add
    for root in roots:
        if not root._prev or root in visited:
            continue
        visit(root)
        # two parallel stacks: the path from the root, and for each node on it
        # an iterator over the parents not yet looked at (two stacks rather than
        # one of pairs: no tuple to build and unpack per step)
        path, pending = [root], [iter(root._prev)]
        while pending:
            for parent in pending[-1]:
                if parent._prev and parent not in visited:
                    visit(parent)
                    path.append(parent)
                    pending.append(iter(parent._prev))
                    break
            else:  # every parent is placed: the node can follow them
                pending.pop()
                append(path.pop())
    return order


# ---------------------------------------------------------------------------
# grad mode
# ---------------------------------------------------------------------------


class _GradModeState(threading.local):
    """Per-thread flag: does the forward pass record a graph?"""

    enabled = True


_state = _GradModeState()


def is_grad_enabled() -> bool:
    """True when operations record the graph that ``backward()`` needs."""
    return _state.enabled


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
        self._saved().append(_state.enabled)
        _state.enabled = self._mode
        return self

    def __exit__(self, *exc_info: object) -> None:
        _state.enabled = self._saved().pop()

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
        self._local.before_call = _state.enabled
        _state.enabled = self._mode

    def __enter__(self) -> "set_grad_enabled":
        before = self._local.__dict__.pop("before_call", None)
        self._saved().append(_state.enabled if before is None else before)
        _state.enabled = self._mode
        return self

    def __call__(self, fn: F) -> F:
        # decorating is not running: undo the switch made by the constructor
        before = self._local.__dict__.pop("before_call", None)
        if before is not None:
            _state.enabled = before
        return super().__call__(fn)

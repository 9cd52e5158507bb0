"""``taugrad.detect_anomaly()``: stop at the first nan or inf, and say where it came from.

While anomaly detection is on (in the calling thread):

* every op that builds a Tensor checks its result: if the result holds a nan
  or an inf although none of the op's inputs did, the op *produced* it and
  :class:`AnomalyError` is raised at once, naming the op, its input shapes and
  the line of the user's code that called it;
* every graph node remembers that line, so the backward pass can name it too:
  the first local rule that returns a nan or inf gradient from a finite one
  raises :class:`AnomalyError` with the node's op, shapes and creation line.

"Produced" matters: ``scores + mask`` with ``-inf`` in an attention mask is
fine (the inf came in), ``log(0)`` is not (the inf came out of the op).

PyTorch's own mode (``torch.autograd.detect_anomaly()``, here
:mod:`taugrad.autograd.anomaly_mode`) checks less, and code written for it
relies on that: only the backward pass, and only nan (``log(0)`` in a forward
pass that a mask later removes is fine there).  The same switch runs in that
style when :func:`set_mode` is given ``torch_style=True``: forward ops only
record their line, and the first rule that returns nan raises PyTorch's
message, "Function 'LogBackward0' returned nan values in its 0th output.",
with the line that created the node.

Cost when off: the op constructor reads one module-level counter
(:data:`ACTIVE`, the number of threads with detection on); the backward pass
reads it once per pass.  When on, each op also walks a few stack frames
(``sys._getframe``, no traceback objects) and scans its result with
``np.isfinite``.
"""
from __future__ import annotations

import functools
import linecache
import os
import sys
import threading
from types import SimpleNamespace
from typing import Any, Callable, Optional, Tuple, TypeVar

import numpy as np

from taugrad.tensors.core.grad_fn import grad_fn_of
from taugrad.tensors.core.node import ANOMALY, NodeExtras

__all__ = ["detect_anomaly", "AnomalyError", "is_anomaly_enabled", "creation_site"]

# frames in the taugrad package are the engine's; the first frame outside it is the user's line
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

#: ``[threads with detection on, check_forward]``: the op constructor tests only
#: the count (zero almost always), then calls the check (see taugrad.tensors.core.node)
ACTIVE = ANOMALY
_count_lock = threading.Lock()


class _AnomalyState(threading.local):
    enabled = False
    torch_style = False  # PyTorch's checks: the backward pass only, nan only
    check_nan = True  # PyTorch's ``check_nan``: False records creation lines and checks nothing


_state = _AnomalyState()


class AnomalyError(RuntimeError):
    """An op produced nan or inf (in the forward or backward pass) under ``detect_anomaly()``.

    Attributes: ``op`` (the op's name), ``phase`` (``'forward'`` or
    ``'backward'``), ``shapes`` (its input shapes), ``site`` (``(filename,
    line number, function)`` of the user's code that created the op, or None).
    """

    def __init__(self, message: str, op: str = "", phase: str = "", shapes: tuple = (), site=None):
        super().__init__(message)
        self.op = op
        self.phase = phase
        self.shapes = shapes
        self.site = site


def is_anomaly_enabled() -> bool:
    """True while ``detect_anomaly()`` is on in the calling thread."""
    return _state.enabled


def _set(mode: bool) -> None:
    mode = bool(mode)
    if mode == _state.enabled:
        return
    with _count_lock:
        ACTIVE[1] = check_forward
        ACTIVE[0] += 1 if mode else -1
    _state.enabled = mode


def get_mode() -> Tuple[bool, bool, bool]:
    """``(enabled, torch_style, check_nan)`` of the calling thread."""
    return _state.enabled, _state.torch_style, _state.check_nan


def set_mode(enabled: bool, torch_style: bool = False, check_nan: bool = True) -> None:
    """Switch detection on or off in the calling thread, in taugrad's style or PyTorch's (see the module)."""
    _state.torch_style = bool(torch_style)
    _state.check_nan = bool(check_nan)
    _set(enabled)


F = TypeVar("F", bound=Callable[..., Any])


class detect_anomaly:
    """Context manager and decorator: raise :class:`AnomalyError` at the first nan/inf an op produces.

    ``with taugrad.detect_anomaly(): loss = model(x); loss.backward()``.  The
    setting is per thread; ``detect_anomaly(False)`` switches it off inside an
    enabled block.  Off by default.
    """

    def __init__(self, mode: bool = True) -> None:
        self._mode = bool(mode)
        self._saved: list = []  # a stack, so one instance can be nested

    def __enter__(self) -> "detect_anomaly":
        self._saved.append(get_mode())
        set_mode(self._mode)  # taugrad's checks, even inside PyTorch's mode
        return self

    def __exit__(self, *exc_info: object) -> None:
        set_mode(*self._saved.pop())

    def __call__(self, fn: F) -> F:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


# ---------------------------------------------------------------------------
# where an op was created
# ---------------------------------------------------------------------------

Site = Tuple[str, int, str]


def creation_site(skip: int = 1) -> Optional[Site]:
    """``(filename, line, function)`` of the innermost caller outside the taugrad package.

    Walks ``frame.f_back`` from the caller: cheap (no traceback objects, no
    source reading).  Returns None if every frame is inside taugrad.
    """
    try:
        frame = sys._getframe(skip)
    except ValueError:  # pragma: no cover - shallower stack than asked
        return None
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR):
            return filename, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return None


def describe_site(site: Optional[Site]) -> str:
    if site is None:
        return "at an unknown line (the op was created while detect_anomaly() was off)"
    filename, line, function = site
    text = linecache.getline(filename, line).strip()
    where = f"at {filename}:{line} in {function}"
    return f"{where}: {text}" if text else where


# ---------------------------------------------------------------------------
# the checks
# ---------------------------------------------------------------------------


def _non_finite(array: Any) -> Optional[str]:
    """None if ``array`` is all finite (or not floating), else e.g. 'nan (2 of 6 values)'."""
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "fc":
        return None
    finite = np.isfinite(array)
    if finite.all():
        return None
    nans = int(np.isnan(array).sum())
    infs = array.size - int(finite.sum()) - nans
    kinds = " and ".join(f"{name}" for name, count in (("nan", nans), ("inf", infs)) if count)
    return f"{kinds} ({array.size - int(finite.sum())} of {array.size} values)"


def _op_name(rule: Any, ctx: Any) -> str:
    name_of = rule.name_of
    if name_of is not None:
        try:
            return name_of(SimpleNamespace(_ctx=ctx))
        except Exception:  # a custom name_of that needs more than the ctx
            pass
    return rule.op


def _shapes(parents: tuple) -> str:
    return ", ".join(str(tuple(p.shape)) for p in parents) or "none"


def check_forward(data: Any, parents: tuple, rule: Any, ctx: Any) -> Optional["NodeExtras"]:
    """Called by the op constructor when :data:`ACTIVE` is non-zero.

    Returns the extras to store on the new node (its creation site) when this
    thread has detection on, else None; raises if the op produced nan/inf.
    """
    if not _state.enabled:
        return None
    site = creation_site(2)
    if _state.torch_style:  # PyTorch checks no forward result; it only keeps the line for backward's message
        return NodeExtras(site)
    problem = _non_finite(data)
    if problem is not None and all(_non_finite(p._data) is None for p in parents):
        op = _op_name(rule, ctx)
        raise AnomalyError(
            f"forward of '{op}' produced {problem} from finite inputs of shape {_shapes(parents)}; "
            f"the op was called {describe_site(site)}",
            op=op, phase="forward", shapes=tuple(tuple(p.shape) for p in parents), site=site,
        )
    return NodeExtras(site)


def _torch_check(node: Any, parent_grads: tuple) -> None:
    """PyTorch's check: raise at the first rule that returned a nan gradient."""
    if not _state.check_nan:
        return
    for index, pg in enumerate(parent_grads):
        array = pg if pg is None or isinstance(pg, np.ndarray) else getattr(pg, "_data", None)
        if isinstance(array, np.ndarray) and array.dtype.kind in "fc" and np.isnan(array).any():
            extras = node._extras
            site = None if extras is None else extras.site
            name = grad_fn_of(node).name()
            raise AnomalyError(
                f"Function '{name}' returned nan values in its {index}th output; the op was created "
                f"{describe_site(site)}", op=name, phase="backward", shapes=tuple(tuple(p.shape) for p in node._prev),
                site=site)


def check_backward(node: Any, g: Any, parent_grads: tuple, op: str) -> None:
    """Raise if a local rule returned nan/inf for some parent although ``g`` was finite."""
    if _state.torch_style:
        return _torch_check(node, parent_grads)
    if _non_finite(getattr(g, "_data", g) if not isinstance(g, np.ndarray) else g) is not None:
        return  # the nan came in with the gradient: an earlier node (or the caller) made it
    for index, pg in enumerate(parent_grads):
        if pg is None:
            continue
        problem = _non_finite(pg if isinstance(pg, np.ndarray) else getattr(pg, "_data", None))
        if problem is not None:
            extras = node._extras
            site = None if extras is None else extras.site
            raise AnomalyError(
                f"backward of '{op}' produced {problem} in the gradient of its input {index} "
                f"(input shapes {_shapes(node._prev)}, output shape {tuple(node.shape)}) from a finite "
                f"output gradient; the op was created {describe_site(site)}",
                op=op, phase="backward", shapes=tuple(tuple(p.shape) for p in node._prev), site=site,
            )

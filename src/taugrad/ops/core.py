"""What every op family shares: recording a result node, operands, axes, errors.

Local rules
-----------
Each op ``f(a, b, ...)`` has a module-level rule

    ``rule(g, out, ins, node) -> (grad_a, grad_b, ...)``

where ``g`` is d(loss)/d(out), ``out`` the op's output, ``ins`` its inputs,
``node`` the output Tensor (for ``node._ctx`` constants and for
``node._prev[i].requires_grad``).  The rule returns one gradient per parent
(``None`` where there is none), each of the parent's shape.

The same rule serves two modes (issue 6 builds on this):

* first-order (the fast path): ``g``, ``out`` and ``ins`` are raw arrays;
* ``create_graph=True``: they are the Tensors themselves, so the rule's
  arithmetic records a graph that can be differentiated again.

Rules therefore use only what arrays and Tensors share: operators, ``.sum(axis=,
keepdims=)``, ``.mean(...)``, ``.reshape``, ``.swapaxes``, ``.T``, ``.astype``,
indexing, and the small namespace :mod:`taugrad.ops.anyarray` for functions.

``@rule(name, reads=...)`` attaches the op name (for errors and ``repr``) and
which values the rule reads (``'out'`` and/or parent indices): the in-place
check of :mod:`taugrad.tensor_engine` only complains about tensors a rule
actually needs.

In-place modification
---------------------
``CLOCK[0]`` counts in-place ops.  A node remembers the clock when recorded
(``_clock``); an in-place op sets the modified storage's ``_version`` to the new
clock.  So "was a tensor this node reads modified after the node was recorded?"
is ``version > node._clock``, and when the clock has not moved since the node
was recorded (the usual forward-then-backward) the check is one comparison.
"""
from __future__ import annotations

import operator

import numpy as np

from taugrad.anomaly import ACTIVE as _ANOMALY_THREADS
from taugrad.anomaly import check_forward as _check_anomaly
from taugrad.autograd import _state as _grad_mode
from taugrad._tensor import Tensor, to_array

ndarray = np.ndarray
_new = object.__new__

#: type of array -> its array module.  The seam for another backend (CuPy).
ARRAY_MODULES = {np.ndarray: np}

#: one-element list: number of in-place ops so far (see module docstring)
CLOCK = [0]


def array_module(array):
    """The array library that owns ``array`` (NumPy today)."""
    return ARRAY_MODULES.get(type(array), np)


# ---------------------------------------------------------------------------
# rules
# ---------------------------------------------------------------------------


#: ``gives`` values: what a rule's first-order gradients are (see :func:`rule`)
NEW = "new"
G_OR_NEW = "g or new"


def rule(op: str, reads=(), twice: bool = True, gives=None):
    """Decorator naming an op's local rule and the values it reads.

    ``reads``: iterable of parent indices and/or ``'out'``;
    ``twice``: False if the rule cannot run in ``create_graph`` mode;
    ``gives``: what the first-order rule returns, so the backward pass knows
    which gradients it alone holds (and may later overwrite, see
    :func:`overwriting`):

    * :data:`NEW` -- arrays the rule made, one per parent, kept nowhere else;
    * :data:`G_OR_NEW` -- each one is either ``g`` itself or such a new array;
    * ``None`` (default) -- anything, e.g. views of ``g``: nothing is overwritten.
    """

    def mark(fn):
        fn.op = op
        fn.reads = tuple(reads)
        fn.twice = twice
        fn.gives = gives
        fn.overwrite = None
        return fn

    return mark


def overwriting(base_rule):
    """Decorator registering a variant of ``base_rule`` that may write into ``g``.

    The first-order backward pass calls the variant instead of ``base_rule``
    when the incoming gradient ``g`` is an array that only the pass holds (made
    by an earlier rule; never the user's ``gradient=``, never one a hook saw),
    so the variant can work in ``g``'s memory like the in-place ``d *= mask``
    of a hand-written backward.  Each gradient it returns is ``g`` itself or a
    new array (as :data:`G_OR_NEW`).
    """

    def attach(fn):
        base_rule.overwrite = fn
        return fn

    return attach


def _released_rule(g, out, ins, node):  # pragma: no cover - never called
    raise AssertionError("released nodes are caught before their rule runs")


_released_rule.op = "released"
_released_rule.reads = ()
_released_rule.twice = True
_released_rule.gives = None
_released_rule.overwrite = None
#: the rule of an interior node after ``backward()`` freed its graph
RELEASED = _released_rule


# ---------------------------------------------------------------------------
# making results
# ---------------------------------------------------------------------------


def quiet():
    """Silence NumPy's warnings for IEEE special results (log(0) = -inf, 0/0 = nan, overflow).

    Those values are the answer, as in PyTorch, which does not warn either;
    ``taugrad.detect_anomaly()`` is the tool that reports where they appear.
    Used by the ops that make special values out of finite inputs (unary
    functions, division, powers) and around the backward pass; ``+ - *`` are
    left out: they only warn on overflow or on infinities already there.

    Same effect as ``np.errstate(divide="ignore", invalid="ignore",
    over="ignore")``, which builds its settings anew on each entry (about 11k
    machine instructions, as much as three small ufunc calls).  On NumPy 2 the
    settings live in a context variable, so the silent version of whatever is
    current is built once (by ``np.errstate`` itself) and reused.
    """
    return _Quiet()


class _Quiet:
    """``quiet()``'s context manager (one per ``with``: threads and nesting are safe)."""

    __slots__ = ("_token",)

    def __enter__(self):
        self._token = silence()
        return self

    def __exit__(self, *exc_info):
        restore(self._token)


try:  # NumPy >= 2: floating-point error settings are a context variable
    from numpy._core._ufunc_config import _extobj_contextvar as _ERROR_STATE
except ImportError:  # pragma: no cover - NumPy 1.x: np.errstate every time
    _ERROR_STATE = None

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


if _ERROR_STATE is not None:

    def silence():
        """:func:`quiet` without the ``with``: returns the token that :func:`restore` takes.

        For the hottest callers (the backward pass, cross-entropy), where a
        ``with`` block's two extra Python calls show in a training step.
        """
        current = _ERROR_STATE.get()
        silent = _SILENT_VERSION.get(current)
        return _ERROR_STATE.set(silent if silent is not None else _silent_version(current))

    restore = _ERROR_STATE.reset

else:  # pragma: no cover - NumPy 1.x

    def silence():
        state = np.errstate(divide="ignore", invalid="ignore", over="ignore")
        state.__enter__()
        return state

    def restore(state):
        state.__exit__(None, None, None)


_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)


def make(data, parents: tuple, rule_fn, ctx=None) -> Tensor:
    """The result Tensor of an op; a graph node if grad mode is on and a parent requires grad."""
    if type(data) is not ndarray:
        data = as_array(data)
    t = _new(Tensor)
    t.data = data
    t._grad = None
    t._version = 0
    t._base = None
    # detect_anomaly() (issue 7): the only cost when it is off is this test of a counter
    t._hooks = _check_anomaly(data, parents, rule_fn, ctx) if _ANOMALY_THREADS[0] else None
    if _grad_mode.enabled:
        for p in parents:
            if p._requires_grad:
                dtype = data.dtype
                # float32/float64 by identity first: .kind is one more lookup on every op
                if dtype is not _FLOAT32 and dtype is not _FLOAT64 and dtype.kind == "c":
                    raise _complex_graph_error(rule_fn)
                t._requires_grad = True
                t._prev = parents
                t._rule = rule_fn
                t._ctx = ctx
                t._clock = CLOCK[0]
                return t
    t._requires_grad = False
    t._prev = ()
    t._rule = None
    t._ctx = None
    t._clock = 0
    return t


class ComplexGradError(TypeError):
    """A complex result would need a gradient: refused (the rules are for real functions)."""


def _complex_graph_error(rule_fn) -> TypeError:
    # the local rules are written for real functions; complex gradients need
    # conjugates (Wirtinger calculus), so refuse instead of returning wrong numbers
    name = getattr(rule_fn, "op", "op")
    return ComplexGradError(
        f"{name}: the result is complex and an input requires grad; taugrad differentiates real "
        f"functions only (take .real / .abs() first, or detach())"
    )


def make_view(data, source: Tensor, parents: tuple, rule_fn, ctx=None) -> Tensor:
    """Like :func:`make` for ops whose result may share ``source``'s storage.

    The view shares the version counter of ``source``'s storage, so an in-place
    change through either one is seen by the backward of ops that read the other.
    """
    t = make(data, parents, rule_fn, ctx)
    t._base = source if source._base is None else source._base
    return t


def constant(data) -> Tensor:
    """A result that never takes part in a graph (comparisons, argmax...)."""
    if type(data) is not ndarray:
        data = as_array(data)
    t = _new(Tensor)
    t.data = data
    t._grad = None
    t._requires_grad = False
    t._prev = ()
    t._rule = None
    t._ctx = None
    t._clock = 0
    t._version = 0
    t._base = None
    t._hooks = None
    return t


def as_array(data):
    """NumPy returns scalars for 0-d results; a Tensor always holds an array."""
    if isinstance(data, np.generic):
        return np.asarray(data)
    if type(data) in ARRAY_MODULES:
        return data
    return np.asarray(data)


def operand(x, like: Tensor) -> Tensor:
    """The other operand of a binary op as a Tensor.

    Python numbers take ``like``'s dtype when it is floating (a float32 tensor
    stays float32, as in PyTorch); arrays keep theirs; lists follow ``tensor()``.
    """
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float, np.number, np.bool_)) and not isinstance(x, np.ndarray):
        dtype = like.data.dtype if like.data.dtype.kind in "fc" else None
        if dtype is None:
            return constant(to_array(x.item() if isinstance(x, np.generic) else x))
        return constant(np.asarray(x, dtype=dtype))
    return constant(to_array(x))


def is_python_scalar(x) -> bool:
    t = type(x)
    return t is float or t is int


# ---------------------------------------------------------------------------
# axes and errors
# ---------------------------------------------------------------------------


def normalize_dim(dim, ndim: int, op: str) -> int:
    """A dimension index in ``range(ndim)``; negative counts from the end."""
    try:
        d = operator.index(dim)  # ints and NumPy ints only: a float dim (inf, 1.5) is a mistake
    except TypeError:
        raise TypeError(f"{op}: dim must be an int, got {dim!r}") from None
    if not -ndim <= d < ndim:
        if ndim == 0 and d in (0, -1):
            raise IndexError(f"{op}: dim {dim} out of range for a 0-d tensor")
        raise IndexError(f"{op}: dim {dim} out of range for a tensor with {ndim} dimension(s)")
    return d + ndim if d < 0 else d


def normalize_dims(dim, ndim: int, op: str):
    """Reduction axes as a sorted tuple, or None for "all axes".

    Accepts an int or a tuple/list of ints, negative ones counting from the end.
    A 0-d tensor accepts dim 0 or -1 (as in PyTorch) and reduces nothing.
    """
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        dims = dim
    else:
        dims = (dim,)
    if ndim == 0:
        for d in dims:
            if d not in (0, -1):
                raise IndexError(f"{op}: dim {d} out of range for a 0-d tensor")
        return ()
    out = tuple(sorted(normalize_dim(d, ndim, op) for d in dims))
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: dim {tuple(dims)} repeats a dimension")
    return out


def pick(primary, alias, default, name_primary: str, name_alias: str, op: str):
    """Resolve a PyTorch argument and its NumPy alias (``dim``/``axis``)."""
    if alias is None:
        return default if primary is None else primary
    if primary is not None and primary is not default:
        raise TypeError(f"{op}: pass either {name_primary} or {name_alias}, not both")
    return alias


def broadcast_error(op: str, a, b) -> ValueError:
    return ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot broadcast")


def requires_grad_of(parents) -> bool:
    if not _grad_mode.enabled:
        return False
    for p in parents:
        if p.requires_grad:
            return True
    return False

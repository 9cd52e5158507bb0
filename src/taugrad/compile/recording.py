"""Recording what a step computes, one NumPy call at a time.

During a capture the arrays of the step's leaves (parameters, gradients,
inputs) are swapped for :class:`RecArray` views of the same memory.  A
``RecArray`` carries the number of the *slot* (a value of the tape) it holds,
and intercepts NumPy's override protocols (``__array_ufunc__`` for operators,
ufuncs and their methods, ``__array_function__`` for ``np.*`` functions) plus
the ndarray methods that do not dispatch (views, ``astype``, ``copy``,
``__setitem__``...).  Each outermost call is computed on plain arrays
underneath and appended to the :class:`Tape` as a :class:`Kernel`
``(callable, arguments with slots in place of arrays, result slot)``; its
result comes back wrapped, so the next call is recorded too.

Arrays made without an array argument (``np.zeros(shape)``) come from
creation functions that are wrapped for the capture: they become *created*
slots holding their value, reset from a snapshot on replay if a kernel
writes into them.  Python that reads a value (``bool``, ``float``, ``item``,
printing) is handled by :mod:`taugrad.compile.reads`.
"""
from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional

import numpy as np

INPUT, CONST, CREATED, RESULT, VIEW = "input", "const", "created", "result", "view"

#: bound now: during a capture ``np.asarray`` is the recording version (see patches.py)
_asarray = np.asarray


class Unsupported(Exception):
    """The step did something the recorder cannot replay faithfully; the function runs eagerly."""


class SlotRef:
    """A placeholder for slot ``index`` inside a kernel's recorded arguments."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"%{self.index}"


class Slot:
    """One value of the tape: where it comes from, and what the capture saw in it."""

    __slots__ = ("index", "kind", "value", "base", "location", "snapshot", "written", "kernel")

    def __init__(self, index: int, kind: str, value: np.ndarray, base: Optional[int] = None,
                 location: Any = None, kernel: Optional[int] = None) -> None:
        self.index = index
        self.kind = kind
        self.value = value  # the plain array the capture computed (or held)
        self.base = base  # for a view: the slot whose memory it shares
        self.location = location  # for an input: where replay finds it
        self.snapshot = None  # for a created array written later: its value at creation
        self.written = False
        self.kernel = kernel  # the kernel that produced it


class Kernel:
    """One recorded call: ``fn(*args, **kwargs)``, slots given as :class:`SlotRef`."""

    __slots__ = ("fn", "args", "kwargs", "result", "reads", "writes", "kind", "extra")

    def __init__(self, fn: Callable, args: tuple, kwargs: dict, result: Optional[int], reads: List[int],
                 writes: List[int], kind: str, extra: Any = None) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.result = result
        self.reads = reads
        self.writes = writes
        self.kind = kind  # "ufunc", "reduce", "method", "function", "view", "draw", "live", "guard", "reset"
        self.extra = extra

    def __repr__(self) -> str:
        name = getattr(self.fn, "__name__", type(self.fn).__name__)
        return f"<{self.kind} {name} {self.args} -> {self.result}>"


class Tape:
    """The kernels and slots of one capture."""

    def __init__(self) -> None:
        self.slots: List[Slot] = []
        self.kernels: List[Kernel] = []
        self.const_ids: Dict[int, int] = {}  # id(plain array) -> its const slot
        self.keep: List[Any] = []  # arrays whose ids key const_ids stay alive
        self.recs: List[weakref.ref] = []  # every RecArray made: what is still alive at the end escaped
        self.poisoned: Optional[str] = None  # why the capture cannot be replayed
        self.number = next(_TAPE_NUMBERS)

    def new_slot(self, kind: str, value: np.ndarray, **kw) -> Slot:
        slot = Slot(len(self.slots), kind, value, **kw)
        self.slots.append(slot)
        return slot

    def poison(self, why: str) -> None:
        if self.poisoned is None:
            self.poisoned = why


#: a C iterator, not a generator: a thread switch inside a generator makes another thread's ``next`` raise
#: "generator already executing", whereas ``next`` on ``itertools.count`` runs without releasing the GIL
_TAPE_NUMBERS = itertools.count(1)


class _Capturing(threading.local):
    tape: Optional[Tape] = None
    live: int = 0  # >0 inside a call replayed live (optimizer.step): nothing recorded there


CAPTURE = _Capturing()


def recording() -> Optional[Tape]:
    """The tape of this thread's capture, or None (outside a capture, or inside a live call)."""
    tape = CAPTURE.tape
    if tape is None or CAPTURE.live or tape.poisoned is not None:
        return None
    return tape


# ---------------------------------------------------------------------------
# wrapping and unwrapping
# ---------------------------------------------------------------------------


def plain(x):
    """The plain ndarray behind a RecArray (same memory), else ``x``."""
    if isinstance(x, RecArray):
        base = x.base
        if type(base) is np.ndarray and base.shape == x.shape and base.strides == x.strides \
                and base.dtype == x.dtype and base.__array_interface__["data"][0] == x.__array_interface__["data"][0]:
            return base
        return np.ndarray.view(x, np.ndarray)
    return x


def wrap(tape: Tape, value, slot: Slot):
    """``value`` (a plain array or NumPy scalar) as a RecArray holding ``slot``."""
    if not isinstance(value, np.ndarray):
        value = _asarray(value)
        slot.value = value
    rec = np.ndarray.view(value, RecArray)
    rec._slot = slot.index
    rec._tape = tape.number
    tape.recs.append(weakref.ref(rec))
    return rec


def slot_of(tape: Tape, x) -> Optional[int]:
    """The slot ``x`` holds in ``tape``, registering plain arrays as constants; None for non-arrays."""
    if isinstance(x, RecArray):
        if x._tape == tape.number and x._slot is not None:
            return x._slot
        if x._tape != tape.number:  # a RecArray of an older capture (a cache): its value is a constant
            x = plain(x)
        else:
            raise Unsupported("an array derived from the step by a NumPy call the recorder does not intercept "
                              f"(shape {tuple(x.shape)})")
    if isinstance(x, np.ndarray):
        index = tape.const_ids.get(id(x))
        if index is None:
            index = tape.new_slot(CONST, x).index
            tape.const_ids[id(x)] = index
            tape.keep.append(x)
        return index
    return None


def encode(tape: Tape, obj, reads: List[int]):
    """``(template, plain)``: ``obj`` with arrays replaced by SlotRefs, and by their plain arrays."""
    if isinstance(obj, np.ndarray):
        index = slot_of(tape, obj)
        reads.append(index)
        return SlotRef(index), plain(obj)
    if isinstance(obj, (list, tuple)):
        if not obj:
            return obj, obj
        pairs = [encode(tape, o, reads) for o in obj]
        kind = type(obj) if type(obj) in (list, tuple) else tuple
        return kind(p[0] for p in pairs), kind(p[1] for p in pairs)
    if isinstance(obj, dict):
        pairs = {k: encode(tape, v, reads) for k, v in obj.items()}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()}
    return obj, obj


def unwrap_all(obj):
    """``obj`` with every RecArray replaced by its plain array (nested lists, tuples, dicts)."""
    if isinstance(obj, RecArray):
        return plain(obj)
    if isinstance(obj, (list, tuple)) and obj:
        kind = type(obj) if type(obj) in (list, tuple) else tuple
        return kind(unwrap_all(o) for o in obj)
    if isinstance(obj, dict):
        return {k: unwrap_all(v) for k, v in obj.items()}
    return obj


def _owner(a: np.ndarray):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _memory_of(tape: Tape, index: int):
    value = tape.slots[index].value
    return _owner(value) if isinstance(value, np.ndarray) else None


def record(tape: Tape, fn: Callable, args: tuple, kwargs: dict, kind: str, written=None):
    """Run ``fn`` on plain arrays, append the kernel and return its result wrapped.

    ``written``: a callable giving the slots the call writes in place (``out=``,
    ``__setitem__``, ``ufunc.at``); a call that returns one of its ``out`` arrays
    returns that slot again.  Anything the recorder cannot follow poisons the
    tape (the function will run eagerly) and the call is computed as usual.
    """
    try:
        reads: List[int] = []
        targs, pargs = encode(tape, args, reads)
        tkw, pkw = encode(tape, kwargs, reads)
        writes = list(written()) if written is not None else []
        for w in writes:
            _mark_written(tape, w)
    except Unsupported as why:
        tape.poison(str(why))
        return fn(*unwrap_all(args), **unwrap_all(kwargs))
    result = fn(*pargs, **pkw)
    kernel = Kernel(fn, targs, tkw, None, reads, writes, kind)
    tape.kernels.append(kernel)
    if result is None:
        return None
    if isinstance(result, tuple):  # several outputs (divmod, frexp): one slot each
        return tuple(_result_slot(tape, kernel, r, reads, writes, i) for i, r in enumerate(result))
    return _result_slot(tape, kernel, result, reads, writes, None)


def _mark_written(tape: Tape, index: int) -> None:
    slot = tape.slots[index]
    slot.written = True
    while slot.kind == VIEW:
        slot = tape.slots[slot.base]
        slot.written = True
    if slot.kind == CONST:
        raise Unsupported("a step writes into an array it did not make (a NumPy array held outside the step)")


def _result_slot(tape: Tape, kernel: Kernel, result, reads: List[int], writes: List[int], position):
    if not isinstance(result, (np.ndarray, np.generic)):
        if position is None:
            return result
        raise Unsupported(f"{getattr(kernel.fn, '__name__', kernel.fn)} returned a non-array in a tuple")
    if isinstance(result, np.ndarray):
        for w in writes:  # out= returns the out array itself
            held = tape.slots[w].value
            if held is result or _same_view(held, result):
                if position is None:
                    kernel.result = None
                    return wrap(tape, result, tape.slots[w])
        owner = _owner(result)
        for r in reads:
            if _memory_of(tape, r) is owner and owner is not None:
                slot = tape.new_slot(VIEW, result, base=r, kernel=len(tape.kernels) - 1)
                break
        else:
            slot = tape.new_slot(RESULT, result, kernel=len(tape.kernels) - 1)
    else:
        slot = tape.new_slot(RESULT, _asarray(result), kernel=len(tape.kernels) - 1)
    if position is None:
        kernel.result = slot.index
    else:
        kernel.extra = (kernel.extra or ()) + ((position, slot.index),)
    if slot.kind == VIEW:
        kernel.kind = "view" if kernel.kind in ("method", "function") else kernel.kind
    return wrap(tape, slot.value, slot)


def _same_view(a, b) -> bool:
    return (isinstance(a, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype and a.strides == b.strides
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def created(tape: Tape, value):
    """A value made without array arguments: a created slot holding it."""
    if not isinstance(value, np.ndarray):
        return value
    slot = tape.new_slot(CREATED, value, kernel=len(tape.kernels))
    slot.snapshot = value.copy(order="K")
    return wrap(tape, value, slot)


# ---------------------------------------------------------------------------
# the recording array
# ---------------------------------------------------------------------------


def _outs(tape: Tape, kwargs: dict) -> List[int]:
    out = kwargs.get("out")
    if out is None:
        return []
    outs = out if isinstance(out, tuple) else (out,)
    return [slot_of(tape, o) for o in outs if o is not None]


class RecArray(np.ndarray):
    """An ndarray whose operations are recorded while a capture runs in this thread.

    Outside a capture (or inside a live call) it computes as a plain array
    and returns plain arrays.
    """

    _slot: Optional[int] = None
    _tape: int = 0

    def __array_finalize__(self, obj) -> None:
        self._slot = None
        self._tape = getattr(obj, "_tape", 0) if isinstance(obj, RecArray) else 0

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        tape = recording()
        if tape is None:
            result = getattr(ufunc, method)(*unwrap_all(inputs), **unwrap_all(kwargs))
            return None if method == "at" else result
        if method == "at":
            def written():
                return [slot_of(tape, inputs[0])]
        else:
            def written():
                return _outs(tape, kwargs)
        out = kwargs.get("out")
        if isinstance(out, tuple) and len(out) == 1 and method != "at":
            kwargs = dict(kwargs, out=out[0])
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        kind = "ufunc" if method == "__call__" else ("at" if method == "at" else "reduce")
        result = record(tape, fn, inputs, kwargs, kind, written)
        out = kwargs.get("out")
        if isinstance(out, RecArray) and isinstance(result, RecArray) and result._slot == out._slot:
            return out  # ``a += b`` keeps ``a`` the same object, as NumPy does
        return result

    def __array_function__(self, func, types, args, kwargs):
        tape = recording()
        if tape is None:
            return func(*unwrap_all(args), **unwrap_all(kwargs))
        def written():
            out = _outs(tape, kwargs)
            if func is np.copyto:
                out.append(slot_of(tape, args[0] if args else kwargs["dst"]))
            return out

        return record(tape, func, args, kwargs, "function", written)

    # value reads: see taugrad.compile.reads (installed there)

    def __reduce__(self):
        return plain(self).__reduce__()


def _method(name: str, writes_self: bool = False):
    base = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        tape = recording()
        if tape is None:
            return base(plain(self), *unwrap_all(args), **unwrap_all(kwargs))
        def written():
            return ([slot_of(tape, self)] if writes_self else []) + _outs(tape, kwargs)

        return record(tape, base, (self,) + args, kwargs, "method", written)

    method.__name__ = name
    return method


#: ndarray methods that compute without dispatching through NumPy's protocols
_METHODS = ("reshape", "transpose", "ravel", "view", "astype", "copy", "flatten", "squeeze", "swapaxes",
            "diagonal", "take", "repeat", "nonzero", "argmax", "argmin", "argsort", "cumsum", "cumprod",
            "dot", "clip", "round", "conj", "conjugate", "searchsorted", "compress", "choose", "trace",
            "sum", "mean", "max", "min", "prod", "any", "all", "std", "var", "ptp", "__getitem__",
            "__copy__", "__deepcopy__")
_WRITING_METHODS = ("__setitem__", "fill", "sort", "put", "itemset", "partition", "resize", "setfield")

for _name in _METHODS:
    if hasattr(np.ndarray, _name):
        setattr(RecArray, _name, _method(_name))
for _name in _WRITING_METHODS:
    if hasattr(np.ndarray, _name):
        setattr(RecArray, _name, _method(_name, writes_self=True))


def _property(name: str):
    def getter(self):
        tape = recording()
        if tape is None:
            return getattr(plain(self), name)
        return record(tape, _attribute(name), (self,), {}, "method")

    return property(getter)


_ATTRIBUTES: Dict[str, Callable] = {}


def _attribute(name: str) -> Callable:
    fn = _ATTRIBUTES.get(name)
    if fn is None:
        def fn(a):
            return getattr(a, name)
        fn.__name__ = name
        _ATTRIBUTES[name] = fn
    return fn


for _name in ("T", "mT", "real", "imag", "flat"):
    if hasattr(np.ndarray, _name):
        setattr(RecArray, _name, _property(_name))

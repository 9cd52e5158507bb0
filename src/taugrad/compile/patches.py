"""What is swapped in while a capture runs (process-wide, acting only in the capturing thread).

* NumPy's creation and conversion functions: an array made without array
  arguments becomes a *created* slot (so writing into it later is recorded);
  ``np.array(list_of_step_values)`` is recorded as a kernel.
* ``Optimizer.step`` and the learning-rate schedulers' ``step``: recorded as
  *live* calls, run again on every replay, so hyperparameters, step counters
  and schedules are read afresh (the optimizers update arrays in place).
* Every taugrad ``Generator``'s NumPy generator: each draw is recorded as a
  kernel that draws again on replay, from the generator's state at that time.

The swaps are reference counted, so two threads may capture at once.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, List

import numpy as np

from taugrad.compile.recording import CAPTURE, Kernel, RecArray, created, record, recording, slot_of
from taugrad.optim import lr_scheduler
from taugrad.optim.optimizer import Optimizer
from taugrad.tensors.core.generator import Generator

_CREATORS = ("zeros", "ones", "empty", "full", "arange", "eye", "identity", "linspace", "array", "asarray",
             "asanyarray", "ascontiguousarray", "zeros_like", "ones_like", "empty_like", "full_like", "frombuffer")
_CONVERTERS = ("array", "asarray", "asanyarray", "ascontiguousarray")

_LOCK = threading.Lock()
_ACTIVE = [0]
_SAVED: List[tuple] = []


def _has_rec(obj) -> bool:
    if isinstance(obj, RecArray):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_rec(o) for o in obj)
    if isinstance(obj, dict):
        return any(_has_rec(o) for o in obj.values())
    return False


def _creator(name: str, original: Callable) -> Callable:
    def patched(*args, **kwargs):
        tape = recording()
        if tape is None:
            return original(*args, **kwargs)
        if _has_rec(args) or _has_rec(kwargs):
            if name in ("asarray", "asanyarray") and len(args) == 1 and not kwargs and isinstance(args[0], RecArray):
                return args[0]
            return record(tape, original, args, kwargs, "function")
        if name in _CONVERTERS and args and isinstance(args[0], np.ndarray):
            result = original(*args, **kwargs)
            if result is args[0] or np.shares_memory(result, args[0]):
                return result  # the held array itself (a view): read live by the plan
            # a copy of an array held outside the step (a global the user may change in place): copied
            # again on every replay, so the replay reads what the array holds then
            return record(tape, original, args, kwargs, "function")
        return created(tape, original(*args, **kwargs))

    patched.__name__ = name
    patched.__wrapped__ = original
    return patched


def _live(original: Callable, kind: str) -> Callable:
    def live(self, *args, **kwargs):
        tape = recording()
        if tape is None:
            return original(self, *args, **kwargs)
        if _has_rec(args) or any(hasattr(a, "_data") for a in args) or kwargs.get("closure") or \
                (args and callable(args[0])):
            tape.poison(f"{type(self).__name__}.step() with arguments (a closure or a metric)")
            return original(self, *args, **kwargs)
        bindings, reads, writes = [], [], []
        if isinstance(self, Optimizer):
            for group in self.param_groups:
                for p in group["params"]:
                    grad = getattr(p, "_grad", None)
                    gslot = slot_of(tape, grad._data) if grad is not None else None
                    bindings.append((p, grad, gslot))
                    if gslot is not None:
                        reads.append(gslot)
                    pslot = slot_of(tape, p._data) if hasattr(p, "_data") else None
                    if pslot is not None:
                        writes.append(pslot)
        tape.kernels.append(Kernel(original, (self,), {}, None, reads, writes, "live", extra=bindings))
        CAPTURE.live += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            CAPTURE.live -= 1

    live.__wrapped__ = original
    return live


class Draw:
    """A random draw replayed from the generator's current NumPy generator."""

    __slots__ = ("generator", "name", "__name__")

    def __init__(self, generator: Generator, name: str) -> None:
        self.generator = generator
        self.name = name
        self.__name__ = f"draw.{name}"

    def __call__(self, *args, **kwargs):
        rng = self.generator.__dict__["_rng"]
        return getattr(rng, self.name)(*args, **kwargs)


class _RecordingRng:
    """Stands for a Generator's NumPy generator during a capture: draws become kernels."""

    def __init__(self, generator: Generator, real: Any) -> None:
        self._generator = generator
        self._real = real

    def __getattr__(self, name: str):
        attr = getattr(self._real, name)
        if name.startswith("_") or not callable(attr):
            return attr
        generator = self._generator

        def draw(*args, **kwargs):
            tape = recording()
            if tape is None:
                return attr(*args, **kwargs)
            return record(tape, Draw(generator, name), args, kwargs, "draw")

        return draw


def _rng_get(self):
    real = self.__dict__["_rng"]
    if CAPTURE.tape is None:
        return real
    return _RecordingRng(self, real)


def _rng_set(self, value) -> None:
    self.__dict__["_rng"] = value
    tape = CAPTURE.tape
    if tape is not None and not CAPTURE.live:
        tape.poison("a generator was reseeded inside the compiled function")


def install() -> None:
    """Swap the recording versions in (counted: the first caller swaps, the last restores)."""
    with _LOCK:
        _ACTIVE[0] += 1
        if _ACTIVE[0] > 1:
            return
        saved = []
        for name in _CREATORS:
            original = getattr(np, name)
            saved.append((np, name, original))
            setattr(np, name, _creator(name, original))
        saved.append((Optimizer, "step", Optimizer.__dict__["step"]))
        Optimizer.step = _live(Optimizer.__dict__["step"], "optimizer")
        for cls in vars(lr_scheduler).values():
            if isinstance(cls, type) and "step" in cls.__dict__ and cls.__module__ == lr_scheduler.__name__:
                saved.append((cls, "step", cls.__dict__["step"]))
                setattr(cls, "step", _live(cls.__dict__["step"], "scheduler"))
        saved.append((Generator, "_rng", None))
        Generator._rng = property(_rng_get, _rng_set)
        _SAVED[:] = saved


def uninstall() -> None:
    with _LOCK:
        _ACTIVE[0] -= 1
        if _ACTIVE[0] > 0:
            return
        for owner, name, original in reversed(_SAVED):
            if original is None:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        _SAVED.clear()

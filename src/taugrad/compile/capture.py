"""Running a function once while recording it, and turning the recording into a :class:`Plan`.

The leaves' arrays (held parameters and buffers, their gradients, the
inputs) are swapped for recording views of the same memory, the function runs
eagerly, and afterwards every tensor of the step's state is given back a
plain array: its own (leaves) or the one the capture computed (new
gradients).  Anything still holding a recorded array after that escaped the
step (a list the function appended to, an attribute it set): replaying would
leave it stale, so the function runs eagerly instead.
"""
from __future__ import annotations

import gc
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from taugrad.compile import patches
from taugrad.compile.plan import Plan, build
from taugrad.compile.recording import (CAPTURE, CREATED, INPUT, RESULT, VIEW, RecArray, SlotRef, Tape,
                                       Unsupported, plain, slot_of, wrap)
from taugrad.compile.state import Attr, Found, read_path, step_into
from taugrad.tensors.core.node import Tensor


class Captured:
    """The outcome of one capture: the eager result, and the plan or why there is none."""

    def __init__(self, result: Any, plan: Optional[Plan], why: str) -> None:
        self.result = result
        self.plan = plan
        self.why = why


def _substitute(obj, path: tuple, new):
    """``obj`` with the element at ``path`` replaced by ``new`` (lists, tuples and dicts copied)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(obj, dict):
        out = dict(obj)
        out[head] = _substitute(obj[head], rest, new)
        return out
    out = list(obj)
    out[head] = _substitute(obj[head], rest, new)
    return type(obj)(out) if isinstance(obj, tuple) else out


def _getter(path: tuple, root_getters: Dict[str, Callable]) -> Callable:
    """getter(args, kwargs) -> the array at ``path`` for this call."""
    head = path[0]
    if head == "arg":
        first, rest = path[1], path[2:]

        def start(args, kwargs):
            return args[first]
    elif head == "kwarg":
        first, rest = path[1], path[2:]

        def start(args, kwargs):
            return kwargs[first]
    else:
        root = root_getters[head]
        rest = path[1:]

        def start(args, kwargs):
            return root()
    if not rest:
        def get(args, kwargs):
            obj = start(args, kwargs)
            return obj._data if isinstance(obj, Tensor) else obj
        return get

    def get_nested(args, kwargs):
        obj = start(args, kwargs)
        for key in rest:
            obj = step_into(obj, key)
        return obj._data if isinstance(obj, Tensor) else obj
    return get_nested


def _grad_getter(t: Tensor) -> Callable:
    def get(args, kwargs):
        return t._grad._data
    return get


def capture(fn: Callable, args: tuple, kwargs: dict, found: Found, root_getters: Dict[str, Callable]) -> Captured:
    """Run ``fn(*args, **kwargs)`` eagerly, recording it; the plan, or why it cannot be replayed."""
    tape = Tape()
    swapped: List[Tuple[Tensor, np.ndarray, RecArray]] = []
    dynamic: Dict[int, Callable] = {}
    entry_grads: Dict[int, Any] = {}

    def swap(t: Tensor, location, getter: Optional[Callable]) -> Optional[int]:
        array = t._data
        if type(array) is not np.ndarray:
            raise Unsupported(f"a tensor on {type(array).__name__} arrays (only NumPy arrays are recorded)")
        slot = tape.new_slot(INPUT, array, location=location)
        rec = wrap(tape, array, slot)
        t._data = rec
        swapped.append((t, array, rec))
        if getter is not None:
            dynamic[slot.index] = getter
        return slot.index

    try:
        for t in found.held:
            swap(t, ("held", t), None)
        for t in found.held:
            if t._grad is not None:
                entry_grads[id(t)] = t._grad
                swap(t._grad, ("grad", t), _grad_getter(t))
        for path, _ in found.inputs:
            obj = read_path(path, lambda head: root_getters[head](), args, kwargs)  # this call's object
            getter = _getter(path, root_getters)
            if isinstance(obj, Tensor):
                swap(obj, ("input", path), getter)
            elif type(obj) is np.ndarray and path[0] in ("arg", "kwarg") and not any(isinstance(k, Attr) for k in path):
                slot = tape.new_slot(INPUT, obj, location=("input", path))
                dynamic[slot.index] = getter
                rec = wrap(tape, obj, slot)
                if path[0] == "arg":
                    args = _substitute(args, path[1:], rec)
                else:
                    kwargs = _substitute(kwargs, path[1:], rec)
    except Unsupported as why:
        for t, array, _ in swapped:
            t._data = array
        return Captured(fn(*args, **kwargs), None, str(why))

    buffers_before = [(m, tuple(m._buffers.items())) for m in found.modules]
    patches.install()
    CAPTURE.tape = tape
    try:
        result = fn(*args, **kwargs)
    finally:
        CAPTURE.tape = None
        patches.uninstall()
        for t, array, rec in swapped:
            if t._data is rec:
                t._data = array
            else:
                tape.poison("the function replaced a tensor's array (t.data = ...)")
    del args, kwargs
    for m, before in buffers_before:
        if tuple(m._buffers.items()) != before:
            tape.poison(f"{type(m).__name__} replaced a buffer inside the function")
    bindings, persistent = _final_state(tape, found, entry_grads)
    template, eager_result = _outputs(tape, result, persistent)
    del result
    if tape.poisoned is None:
        _check_escapes(tape)
    if tape.poisoned is not None:
        return Captured(eager_result, None, tape.poisoned)
    try:
        plan = build(tape, {}, dynamic, persistent, bindings, template)
    except Unsupported as why:
        return Captured(eager_result, None, str(why))
    plan.entry_grads = tuple(id(t) in entry_grads for t in found.held)
    plan.held_arrays = tuple(t._data for t in found.held)
    return Captured(eager_result, plan, "")


def _final_state(tape: Tape, found: Found, entry_grads: Dict[int, Any]):
    """The ``.grad`` each held tensor is left with ((tensor, grad, slot)), given back plain arrays.

    A tensor left with the ``.grad`` object it came in with is not bound: a
    replay reads and writes whatever ``.grad`` it finds (the input's getter), and
    re-binding the capture's object at the end would put back a gradient that
    another function (or the user) has replaced since, with its stale values.
    """
    bindings = []
    persistent = set()
    for t in found.held:
        grad = t._grad
        if grad is not None and grad is entry_grads.get(id(t)):
            continue  # its array was swapped back above (a replaced array poisons the capture)
        if grad is None:
            bindings.append((t, None, None))
            continue
        data = grad._data
        if isinstance(data, RecArray) and data._tape == tape.number and data._slot is not None:
            grad._data = plain(data)
            bindings.append((t, grad, data._slot))
            persistent.add(data._slot)
        else:
            bindings.append((t, grad, None))
    for k in tape.kernels:
        if k.kind == "live":
            for _, grad, gslot in k.extra:
                if gslot is not None:
                    persistent.add(gslot)
                if grad is not None and isinstance(grad._data, RecArray):
                    grad._data = plain(grad._data)
    return bindings, persistent


def _outputs(tape: Tape, result, persistent: set):
    """(template, value): the return value with recorded arrays as SlotRefs, and as detached copies."""
    if isinstance(result, Tensor):
        data = result._data
        if isinstance(data, RecArray) and data._tape == tape.number:
            index = slot_of(tape, data)
            persistent.add(index)
            return ("tensor", SlotRef(index)), Tensor(plain(data).copy())
        return result, result
    if isinstance(result, RecArray):
        if result._tape == tape.number:
            index = slot_of(tape, result)
            persistent.add(index)
            return ("array", SlotRef(index)), plain(result).copy()
        return plain(result), plain(result)
    if isinstance(result, (list, tuple)):
        pairs = [_outputs(tape, r, persistent) for r in result]
        kind = type(result) if type(result) in (list, tuple) else tuple
        return ("seq", kind, [p[0] for p in pairs]), kind(p[1] for p in pairs)
    if isinstance(result, dict):
        pairs = {k: _outputs(tape, v, persistent) for k, v in result.items()}
        return ("dict", {k: p[0] for k, p in pairs.items()}), {k: p[1] for k, p in pairs.items()}
    return ("const", result), result


def make_outputs(template, values: list):
    """The return value of a replay from the output template (copies: each call's result is its own)."""
    kind = template[0] if isinstance(template, tuple) and template and isinstance(template[0], str) else None
    if kind == "tensor":
        return Tensor(values[template[1].index].copy())
    if kind == "array":
        return values[template[1].index].copy()
    if kind == "seq":
        return template[1](make_outputs(t, values) for t in template[2])
    if kind == "dict":
        return {k: make_outputs(t, values) for k, t in template[1].items()}
    if kind == "const":
        return template[1]
    return template


def _check_escapes(tape: Tape) -> None:
    """Poison the tape if a recorded value is still referenced from outside the step's state."""
    tainted = _tainted(tape)

    def escaped():
        out = []
        for ref in tape.recs:
            rec = ref()
            if rec is None or rec._tape != tape.number or rec._slot is None:
                continue
            slot = tape.slots[rec._slot]
            if rec._slot in tainted and slot.kind != INPUT:  # a leaf's wrapper shares the leaf's own memory
                out.append(slot)
        return out

    if escaped():
        gc.collect()
        left = escaped()
        if left:
            tape.poison(f"an array computed inside the function (shape {tuple(left[0].value.shape)}) is still referenced "
                        f"after it returned (appended to a list, stored as an attribute...): a replay would "
                        f"leave it stale")


def _tainted(tape: Tape) -> set:
    """Slots whose value depends on the step's inputs or random draws (the rest are constants, safe to cache)."""
    tainted = {s.index for s in tape.slots if s.kind == INPUT}
    for k in tape.kernels:
        if k.kind == "draw" or any(r in tainted for r in k.reads):
            if k.result is not None:
                tainted.add(k.result)
            for w in k.writes:
                tainted.add(w)
                slot = tape.slots[w]
                while slot.kind == VIEW:
                    slot = tape.slots[slot.base]
                    tainted.add(slot.index)
    return tainted

"""A tape turned into a replayable plan: buffers allocated once, steps bound to them.

Every value of the tape is either *fixed* (the same array object on every
replay: a parameter, a constant, a buffer the plan owns, a view of one) or
*dynamic* (an input re-read each call, or the fresh result of a kernel that
cannot write into a buffer).  A kernel that can write into a buffer (ufuncs
and their reductions, ``copy``/``astype`` as ``np.copyto``, ``sum``...) gets
``out=`` its slot's buffer.  Buffers of temporaries are shared when their
lifetimes do not overlap: a buffer is free again after the last kernel that
reads or writes it *or any view of it*; values that survive the call
(gradients, outputs, what a live call reads) are never shared.  Views of fixed
arrays are taken once, when the plan is built, and their kernels dropped.

A step is ``(fn, args, kwargs, result, patches, build)``: ``args`` is a list
and ``kwargs`` a dict bound once; when a dynamic value is made, it is written
into the places (``patches``) of the later steps that read it.  A step whose
dynamic argument sits in a tuple (an index ``x[rows, t]``) rebuilds its
arguments each time (``build``).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from taugrad.compile.recording import CONST, CREATED, INPUT, RESULT, VIEW, Kernel, SlotRef, Tape, Unsupported

#: functions (besides ufuncs and their methods) that take ``out=`` and give the same numbers with it
_OUT_FUNCTIONS = {np.concatenate, np.dot, np.take, np.einsum, np.cumsum}
_OUT_METHODS = {np.ndarray.sum, np.ndarray.max, np.ndarray.min, np.ndarray.prod, np.ndarray.cumsum,
                np.ndarray.any, np.ndarray.all}
_COPY_METHODS = {np.ndarray.copy, np.ndarray.astype, np.ndarray.__copy__}


_NO_SHARING = False


def _copy_into(out, src):
    np.copyto(out, src, casting="unsafe")
    return out


class Plan:
    """The replayable form of one capture."""

    def __init__(self) -> None:
        self.steps: List[tuple] = []
        self.inputs: List[Tuple[int, Callable, list]] = []  # (slot, getter(args, kwargs), patches)
        self.values: List[Any] = []  # slot -> its array (fixed) or the latest (dynamic)
        self.bindings: List[tuple] = []  # after the steps: (tensor, grad Tensor or None, slot or None)
        self.outputs: Any = None
        self.safe_until = 0
        self.buffer_bytes = 0
        self.all_bindings: List[tuple] = []
        self.fixed: List[bool] = []


def _out_mode(kernel: Kernel, value) -> Optional[str]:
    """How the kernel can write its result into a buffer: 'out', 'copy', or None."""
    if kernel.extra is not None or not isinstance(value, np.ndarray):
        return None
    if "out" in kernel.kwargs:
        return None
    fn = kernel.fn
    if kernel.kind == "ufunc":
        return "out" if fn.nout == 1 else None
    if kernel.kind == "reduce":
        return "out" if getattr(fn, "__name__", "") in ("reduce", "accumulate") else None
    if kernel.kind == "method":
        if fn in _COPY_METHODS and len(kernel.args) >= 1:
            return "copy"
        if fn in _OUT_METHODS:
            return "out"
        if fn is np.ndarray.mean and value.dtype.itemsize >= 4:
            return "out"
        return None
    if kernel.kind == "function" and fn in _OUT_FUNCTIONS:
        return "out"
    return None


def build(tape: Tape, held_ids: Dict[int, Any], dynamic_inputs: Dict[int, Callable], persistent: set,
          bindings: list, outputs_template: Any) -> Plan:
    """The plan of ``tape``.

    ``held_ids``: input slots bound by identity (parameters, buffers);
    ``dynamic_inputs``: input slot -> getter(args, kwargs) for what is re-read;
    ``persistent``: slots whose value outlives the call; ``bindings``: the final
    ``.grad`` of each parameter; ``outputs_template``: the return value with
    :class:`SlotRef` for arrays.
    """
    slots, kernels = tape.slots, tape.kernels
    n = len(slots)
    plan = Plan()
    values: List[Any] = [None] * n
    fixed = [False] * n
    modes: Dict[int, str] = {}
    for s in slots:
        if s.kind == INPUT:
            if s.index in dynamic_inputs:
                continue
            values[s.index] = s.value
            fixed[s.index] = True
        elif s.kind == CONST or (s.kind == CREATED and not s.written):
            values[s.index] = s.value
            fixed[s.index] = True
    for k in kernels:
        if k.kind in ("live", "guard") or k.result is None:
            if k.extra is not None and k.kind not in ("live", "guard"):
                raise Unsupported(f"{getattr(k.fn, '__name__', k.fn)} gives several arrays")
            continue
        value = slots[k.result].value
        mode = _out_mode(k, value)
        if mode is not None and slots[k.result].kind == RESULT and \
                np.empty_like(value, order="K").strides == value.strides:
            modes[k.result] = mode
    # lifetimes: the last kernel touching a slot or any view of it
    last = [-1] * n
    root = list(range(n))
    for s in slots:
        if s.kind == VIEW:
            root[s.index] = root[s.base]
    for i, k in enumerate(kernels):
        for r in list(k.reads) + list(k.writes) + ([k.result] if k.result is not None else []):
            last[root[r]] = i
    keep = {root[s] for s in persistent}
    # buffers, in kernel order, shared among same-layout temporaries
    pool: Dict[tuple, List[np.ndarray]] = {}
    owner_of: Dict[int, int] = {}
    created_at: Dict[int, List[int]] = {}
    for s in slots:
        if s.kind == CREATED and s.written:
            created_at.setdefault(s.kernel or 0, []).append(s.index)
    freeing: Dict[int, List[int]] = {}

    def allocate(index: int, like: np.ndarray) -> np.ndarray:
        key = (like.shape, like.dtype.str, like.strides)
        free = pool.get(key)
        if index in keep and slots[index].kind == RESULT:
            buf = slots[index].value  # what the capture computed: the state it left stays right
        elif free and not _NO_SHARING:
            buf = free.pop()
        else:
            buf = np.empty_like(like, order="K")
            plan.buffer_bytes += buf.nbytes
        values[index] = buf
        fixed[index] = True
        if index not in keep and last[index] >= 0:
            freeing.setdefault(last[index], []).append(index)
        return buf

    def release(i: int) -> None:
        for index in freeing.pop(i, ()):
            buf = values[index]
            pool.setdefault((buf.shape, buf.dtype.str, buf.strides), []).append(buf)

    first_persistent = len(kernels)
    for i, k in enumerate(kernels):
        if k.kind == "live" or any(slots[root[w]].kind == INPUT or root[w] in keep for w in k.writes) or \
                (k.result is not None and root[k.result] in keep and slots[k.result].kind == RESULT):
            first_persistent = min(first_persistent, i)
            break
    patches: Dict[int, list] = {}
    steps = plan.steps

    def bind(template, dynamic_refs: list):
        """``template`` with fixed slots filled in; dynamic ones left as None and listed."""
        if isinstance(template, SlotRef):
            if fixed[template.index]:
                return values[template.index]
            dynamic_refs.append(template.index)
            return None
        if isinstance(template, list):
            return [bind(t, dynamic_refs) for t in template]
        if isinstance(template, tuple):
            inner: list = []
            bound = tuple(bind(t, inner) for t in template)
            if inner:
                dynamic_refs.append(("tuple",))
                dynamic_refs.extend(inner)
            return bound
        if isinstance(template, dict):
            return {k: bind(v, dynamic_refs) for k, v in template.items()}
        return template

    def register(container, key, template) -> bool:
        """Record where the dynamic slots of ``template`` go; False if one sits in a tuple."""
        if isinstance(template, SlotRef):
            if not fixed[template.index]:
                patches.setdefault(template.index, []).append((container, key))
            return True
        if isinstance(template, list):
            value = container[key]
            return all(register(value, j, t) for j, t in enumerate(template))
        if isinstance(template, tuple):
            return not any(_has_dynamic(t, fixed) for t in template)
        if isinstance(template, dict):
            value = container[key]
            return all(register(value, j, t) for j, t in template.items())
        return True

    for i, k in enumerate(kernels):
        for index in created_at.get(i, ()):
            buf = allocate(index, slots[index].value)
            steps.append((_copy_into, [buf, slots[index].snapshot], {}, -1, None, None))
        if k.kind == "live":
            steps.append((_bind_grads, [list(k.extra), values, fixed], {}, -1, None, None))
            plan.all_bindings.extend(k.extra)
            steps.append((k.fn, [k.args[0]], {}, -1, None, None))
            release(i)
            continue
        result = k.result
        if result is not None and slots[result].kind == VIEW and fixed[slots[result].base] and \
                not _has_dynamic((k.args, k.kwargs), fixed):
            dummy: list = []
            view = k.fn(*bind(list(k.args), dummy), **bind(dict(k.kwargs), dummy))
            values[result] = view
            fixed[result] = True
            release(i)
            continue
        args = list(k.args)
        kwargs = dict(k.kwargs)
        fn = k.fn
        if k.kind == "guard":
            args.append(i < first_persistent or first_persistent == len(kernels))
        mode = modes.get(result) if result is not None else None
        if mode is not None:
            buf = allocate(result, slots[result].value)
            if mode == "out":
                kwargs["out"] = buf
            else:
                fn = _copy_into
                args = [buf, args[0]]
                kwargs = {}
        refs: list = []
        bound_args = bind(args, refs)
        bound_kwargs = bind(kwargs, refs)
        if ("tuple",) in refs:
            builder = _Builder(args, kwargs, fixed, values)
            step = [fn, None, None, -1, None, builder]
        else:
            step = [fn, bound_args, bound_kwargs, -1, None, None]
            holder = [bound_args, bound_kwargs]
            register(holder, 0, args)
            register(holder, 1, kwargs)
        if result is not None and not fixed[result]:
            step[3] = result
        steps.append(step)
        release(i)
    # dynamic results patch their readers; inputs are bound at the start
    for j, step in enumerate(steps):
        if isinstance(step, list):
            if step[3] >= 0:
                step[4] = patches.get(step[3], [])
            steps[j] = tuple(step)
    for index, getter in dynamic_inputs.items():
        plan.inputs.append((index, getter, patches.get(index, [])))
    plan.values = values
    plan.fixed = fixed
    plan.bindings = bindings
    plan.outputs = outputs_template
    plan.safe_until = first_persistent
    for p, grad, gslot in plan.all_bindings + list(bindings):
        if grad is not None and gslot is not None and fixed[gslot]:
            grad._data = values[gslot]
    return plan


def _has_dynamic(template, fixed) -> bool:
    if isinstance(template, SlotRef):
        return not fixed[template.index]
    if isinstance(template, (list, tuple)):
        return any(_has_dynamic(t, fixed) for t in template)
    if isinstance(template, dict):
        return any(_has_dynamic(t, fixed) for t in template.values())
    return False


class _Builder:
    """Arguments rebuilt on each replay (a dynamic array inside a tuple: an index ``x[rows, t]``).

    Each argument is turned once into a maker: a constant (nothing dynamic
    in it), one slot, a flat tuple of slots and constants (the common index
    tuple), or the general recursive template.
    """

    __slots__ = ("values", "arg_makers", "kw_makers")

    def __init__(self, args, kwargs, fixed, values) -> None:
        self.values = values
        self.arg_makers = [self._maker(t, fixed) for t in args]
        self.kw_makers = [(k, self._maker(v, fixed)) for k, v in kwargs.items()]

    def _maker(self, template, fixed):
        if not _has_dynamic(template, fixed):
            return (0, template)  # resolved on each call (fixed values are bound by the time it runs)
        if isinstance(template, SlotRef):
            return (1, template.index)
        if isinstance(template, tuple) and all(isinstance(t, SlotRef) or not _has_dynamic(t, fixed)
                                               and not isinstance(t, (list, tuple, dict)) for t in template):
            return (2, tuple((t.index, None) if isinstance(t, SlotRef) else (-1, t) for t in template))
        return (3, template)

    def _make(self, maker):
        kind, what = maker
        values = self.values
        if kind == 1:
            return values[what]
        if kind == 2:
            return tuple([values[i] if i >= 0 else v for i, v in what])
        return self.resolve(what)

    def resolve(self, template):
        if isinstance(template, SlotRef):
            return self.values[template.index]
        if isinstance(template, list):
            return [self.resolve(t) for t in template]
        if isinstance(template, tuple):
            return tuple([self.resolve(t) for t in template])
        if isinstance(template, dict):
            return {k: self.resolve(v) for k, v in template.items()}
        return template

    def __call__(self):
        make = self._make
        return [make(m) for m in self.arg_makers], {k: make(m) for k, m in self.kw_makers}


def _bind_grads(bindings, values, fixed) -> None:
    """Give each parameter the ``.grad`` the capture saw at this point (before a live call, at the end)."""
    for p, grad, gslot in bindings:
        p._grad = grad
        if grad is not None and gslot is not None and not fixed[gslot]:
            grad._data = values[gslot]


def replay(plan: Plan, args: tuple, kwargs: dict):
    """Run the plan's steps; the parameters' ``.grad`` as the capture left them."""
    values = plan.values
    for index, getter, patches in plan.inputs:
        v = getter(args, kwargs)
        values[index] = v
        for container, key in patches:
            container[key] = v
    for fn, a, kw, result, patches, builder in plan.steps:
        if builder is not None:
            a, kw = builder()
        v = fn(*a, **kw)
        if result >= 0:
            values[result] = v
            for container, key in patches:
                container[key] = v
    _bind_grads(plan.bindings, values, plan.fixed)

"""What a compiled function touches, and the guard that says whether a plan still applies.

The step's *state* is found from the function itself: its arguments, the
object of a bound method, its closure and the globals its code names.  In
there, ``nn.Module`` objects (their parameters and buffers, the ``training``
flags of every submodule), optimizers (their parameters) and tensors or
arrays (inputs).  Parameters and buffers are bound to a plan by identity;
inputs are re-read on every call.
"""
from __future__ import annotations

import types
from typing import Any, Dict, List, Tuple

import numpy as np

from taugrad.debug.anomaly import is_anomaly_enabled
from taugrad.grad_mode import STATE as GRAD_MODE
from taugrad.nn.module import Module
from taugrad.optim.optimizer import Optimizer
from taugrad.tensors.core.node import Tensor

_SCALARS = (bool, int, float, complex, str, bytes, type(None))


def _code_names(code: types.CodeType, out: set) -> set:
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_names(const, out)
    return out


class Attr(str):
    """A step of a path that is an attribute (``batch.x``), not an item (``batch[0]``)."""

    __slots__ = ()


def step_into(obj, key):
    """One step along a discovered path: an attribute or an item."""
    return getattr(obj, key) if isinstance(key, Attr) else obj[key]


#: how many objects discovery visits at most: past it, the function runs eagerly (it could not watch them all)
MAX_VISITED = 10000

#: objects whose attributes discovery does not walk: they hold no tensors of the step (or only through
#: what is walked anyway), or walking them would visit an interpreter's worth of objects
_OPAQUE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
           types.CodeType, types.FrameType, np.random.Generator, np.dtype, np.generic, range, slice)


class Found:
    """The modules, optimizers, parameters (held) and input tensors (re-read) of a function.

    The walk goes through lists, tuples, dicts and the attributes of plain
    objects (a batch object's ``.x``), at any depth: a tensor the function can
    reach and the walk did not see would become a constant of the plan, and
    replay stale numbers when the object later holds another tensor.
    """

    def __init__(self) -> None:
        self.modules: List[Module] = []
        self.optimizers: List[Optimizer] = []
        self.held: List[Tensor] = []  # parameters and buffers: bound by identity
        self.inputs: List[Tuple[Any, Tensor]] = []  # (path, tensor or array) re-read each call
        self.truncated = False  # more than MAX_VISITED objects: the function must run eagerly
        self._seen: set = set()

    def add(self, obj, path, depth: int = 0) -> None:
        if id(obj) in self._seen or isinstance(obj, _SCALARS) or isinstance(obj, _OPAQUE):
            return
        if len(self._seen) >= MAX_VISITED or depth > 64:
            self.truncated = True
            return
        if isinstance(obj, Module):
            self._seen.add(id(obj))
            for m in obj.modules():
                if id(m) not in {id(x) for x in self.modules}:
                    self.modules.append(m)
                for t in list(m._parameters.values()) + list(m._buffers.values()):
                    self._hold(t)
        elif isinstance(obj, Optimizer):
            self._seen.add(id(obj))
            self.optimizers.append(obj)
            for group in obj.param_groups:
                for p in group["params"]:
                    self._hold(p)
        elif isinstance(obj, Tensor) and obj._requires_grad and not obj._prev:
            self._hold(obj)  # a leaf that learns: bound by identity, its .grad is state
        elif isinstance(obj, (Tensor, np.ndarray)):
            if path is not None:
                self._seen.add(id(obj))
                self.inputs.append((path, obj))
        elif isinstance(obj, (list, tuple)):
            self._seen.add(id(obj))
            for i, o in enumerate(obj):
                self.add(o, None if path is None else path + (i,), depth + 1)
        elif isinstance(obj, dict):
            self._seen.add(id(obj))
            for k, o in list(obj.items()):
                self.add(o, None if path is None else path + (k,), depth + 1)
        elif isinstance(getattr(obj, "__dict__", None), dict):  # a plain object: its attributes
            self._seen.add(id(obj))
            for k, o in list(vars(obj).items()):
                self.add(o, None if path is None else path + (Attr(k),), depth + 1)

    def _hold(self, t) -> None:
        if isinstance(t, Tensor) and id(t) not in self._seen:
            self._seen.add(id(t))
            self.held.append(t)


def function_roots(fn) -> Dict[str, Any]:
    """The objects a function reaches without arguments: bound object, closure, named globals."""
    roots: Dict[str, Any] = {}
    target = fn
    if isinstance(fn, types.MethodType):
        roots["self"] = fn.__self__
        target = fn.__func__
    elif isinstance(fn, Module):
        roots["self"] = fn
        target = type(fn).forward
    code = getattr(target, "__code__", None)
    if code is None:
        return roots
    for name, cell in zip(code.co_freevars, getattr(target, "__closure__", None) or ()):
        try:
            roots[f"closure:{name}"] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    g = getattr(target, "__globals__", {})
    for name in _code_names(code, set()):
        if name in g and not isinstance(g[name], (types.ModuleType, types.FunctionType, type)):
            roots[f"global:{name}"] = g[name]
    return roots


def discover(fn, args: tuple, kwargs: dict) -> Found:
    found = Found()
    roots = function_roots(fn)
    for name, obj in roots.items():
        found.add(obj, (name,))
    for i, a in enumerate(args):
        found.add(a, ("arg", i))
    for k, a in kwargs.items():
        found.add(a, ("kwarg", k))
    # inputs that are parameters are held, not re-read
    held = {id(t) for t in found.held}
    found.inputs = [(p, t) for p, t in found.inputs if id(t) not in held]
    return found


def read_path(path, fn_roots_getter, args, kwargs):
    """The object at ``path`` for this call's arguments (or the function's closure/globals)."""
    head = path[0]
    if head == "arg":
        obj, rest = args[path[1]], path[2:]
    elif head == "kwarg":
        obj, rest = kwargs[path[1]], path[2:]
    else:
        obj, rest = fn_roots_getter(head), path[1:]
    for key in rest:
        obj = step_into(obj, key)
    return obj


def signature(obj, depth: int = 0):
    """The part of an argument a plan depends on: shapes, dtypes, devices, flags, scalar values."""
    # strides too: the buffers of a plan are laid out like the capture's values, and a reduction or product
    # over another layout adds in another order (other bits), so a new layout of the same shape captures again
    if isinstance(obj, Tensor):
        if obj._requires_grad and not obj._prev:  # a learnable leaf is bound by identity: another one, another plan
            return ("leaf", id(obj))
        d = obj._data
        return (type(d), d.shape, d.dtype, getattr(d, "strides", None), obj._requires_grad)
    if isinstance(obj, np.ndarray):
        return (type(obj), obj.shape, obj.dtype, obj.strides)
    if isinstance(obj, _SCALARS):
        return (type(obj), obj)
    if isinstance(obj, (list, tuple)) and depth < 3:
        return (type(obj),) + tuple([signature(o, depth + 1) for o in obj])
    if isinstance(obj, dict) and depth < 3:
        return (dict,) + tuple([(k, signature(v, depth + 1)) for k, v in obj.items()])
    return ("id", id(obj))


def aliases_of(args: tuple, kwargs: dict) -> tuple:
    """Which arguments are the same tensor or array object.

    Discovery finds an object once, so a capture where two arguments are one
    tensor reads the second through the first; a call with two distinct
    tensors needs its own plan (and vice versa).
    """
    ids = [id(a) for a in list(args) + list(kwargs.values()) if isinstance(a, (Tensor, np.ndarray))]
    if len(set(ids)) == len(ids):
        return ()
    return tuple([ids.index(i) for i in ids])


def call_key(args: tuple, kwargs: dict, found: "Found", aliases: tuple) -> tuple:
    """The cache key of a call.

    Grad mode, argument signatures and aliasing, every module's ``training``
    flag and Python scalar attributes (a dropout ``p``, a slope: recorded as
    constants), which held tensors require a gradient (a frozen parameter gets
    no ``.grad`` and no update), and the optimizers' parameter groups (the
    live ``step`` is given the gradients of the parameters it had at capture;
    the parameters themselves are compared by identity in ``_plan_applies``).
    """
    return (GRAD_MODE.enabled, tuple([signature(a) for a in args]),
            tuple([(k, signature(v)) for k, v in kwargs.items()]) if kwargs else (),
            aliases,
            tuple([tuple([v for v in m.__dict__.values() if type(v) in _SCALAR_ATTRS]) for m in found.modules]),
            tuple([t._requires_grad for t in found.held]),
            tuple([tuple([len(g["params"]) for g in o.param_groups]) for o in found.optimizers]))


_SCALAR_ATTRS = (bool, int, float, type(None))


def must_run_eagerly(found: Found) -> str:
    """Why this call cannot be captured or replayed (hooks, anomaly mode, too much to watch), or ''."""
    if found.truncated:
        return f"the function reaches more than {MAX_VISITED} objects; taugrad.compile cannot watch them all"
    if is_anomaly_enabled():
        return "anomaly detection is on"
    for m in found.modules:
        if any(m.__dict__.get(name) for name in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                                                 "_backward_pre_hooks")):
            return f"{type(m).__name__} has a forward or backward hook"
    for t in found.held:
        if t._extras is not None:
            return "a parameter has a hook (register_hook / retain_grad)"
    return ""


def optimizer_params(found: "Found") -> tuple:
    """Each optimizer's parameter groups as tuples of tensors (compared by identity)."""
    return tuple([tuple([tuple(g["params"]) for g in o.param_groups]) for o in found.optimizers])

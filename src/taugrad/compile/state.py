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
from taugrad.tensors.node import Tensor

_SCALARS = (bool, int, float, complex, str, bytes, type(None))


def _code_names(code: types.CodeType, out: set) -> set:
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_names(const, out)
    return out


class Found:
    """The modules, optimizers, parameters (held) and input tensors (re-read) of a function."""

    def __init__(self) -> None:
        self.modules: List[Module] = []
        self.optimizers: List[Optimizer] = []
        self.held: List[Tensor] = []  # parameters and buffers: bound by identity
        self.inputs: List[Tuple[Any, Tensor]] = []  # (path, tensor or array) re-read each call
        self._seen: set = set()

    def add(self, obj, path, depth: int = 0) -> None:
        if id(obj) in self._seen or depth > 3:
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
            for k, o in obj.items():
                self.add(o, None if path is None else path + (k,), depth + 1)

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
        obj = obj[key]
    return obj


def signature(obj, depth: int = 0):
    """The part of an argument a plan depends on: shapes, dtypes, devices, flags, scalar values."""
    if isinstance(obj, Tensor):
        d = obj._data
        return (type(d), d.shape, d.dtype, obj._requires_grad)
    if isinstance(obj, np.ndarray):
        return (type(obj), obj.shape, obj.dtype)
    if isinstance(obj, _SCALARS):
        return (type(obj), obj)
    if isinstance(obj, (list, tuple)) and depth < 3:
        return (type(obj),) + tuple([signature(o, depth + 1) for o in obj])
    if isinstance(obj, dict) and depth < 3:
        return (dict,) + tuple([(k, signature(v, depth + 1)) for k, v in obj.items()])
    return ("id", id(obj))


def call_key(args: tuple, kwargs: dict, modules: List[Module]) -> tuple:
    """The cache key of a call: grad mode, argument signatures, every module's ``training`` flag."""
    return (GRAD_MODE.enabled, tuple([signature(a) for a in args]),
            tuple([(k, signature(v)) for k, v in kwargs.items()]) if kwargs else (),
            tuple([m.training for m in modules]))


def must_run_eagerly(found: Found) -> str:
    """Why this call cannot be captured or replayed (hooks, anomaly mode), or ''."""
    if is_anomaly_enabled():
        return "anomaly detection is on"
    for m in found.modules:
        if m.__dict__.get("_forward_hooks"):
            return f"{type(m).__name__} has a forward hook"
    for t in found.held:
        if t._extras is not None:
            return "a parameter has a hook (register_hook / retain_grad)"
    return ""

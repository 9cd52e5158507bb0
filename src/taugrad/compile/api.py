"""``taugrad.compile``: capture a step once, replay its array kernels afterwards."""
from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional

import numpy as np

from taugrad.compile.capture import capture, make_outputs
from taugrad.compile.plan import Plan, replay
from taugrad.compile.reads import CompileWarning, Diverged, warn_eager
from taugrad.compile.state import (Attr, aliases_of, call_key, discover, function_roots, must_run_eagerly,
                                   optimizer_params, read_path, signature)
from taugrad.tensors.core.node import Tensor

__all__ = ["compile", "CompiledFunction", "CompileWarning"]


def _root_getters(fn) -> Dict[str, Callable]:
    """name -> a function re-reading that root (a global by name, a closure cell) on each call."""
    getters: Dict[str, Callable] = {}
    target = getattr(fn, "__func__", fn)
    code = getattr(target, "__code__", None)
    if getattr(fn, "__self__", None) is not None:
        owner = fn.__self__
        getters["self"] = lambda: owner
    if code is None:
        return getters
    for name, cell in zip(code.co_freevars, getattr(target, "__closure__", None) or ()):
        getters[f"closure:{name}"] = (lambda c: lambda: c.cell_contents)(cell)
    g = target.__globals__
    for name in function_roots(fn):
        if name.startswith("global:"):
            getters[name] = (lambda n: lambda: g[n])(name[7:])
    return getters


class CompiledFunction:
    r"""A function whose calls replay the array kernels recorded on an earlier call.

    The first call with a new *guard key* (grad mode, the arguments' shapes,
    dtypes and array types, Python scalar arguments by value, and every
    discovered module's ``training`` flag) runs eagerly while recording; later
    calls with that key replay the recorded kernels into buffers allocated
    once, provided the parameters still hold the arrays the plan was bound to
    and have (or lack) a ``.grad`` as at the capture.  Otherwise the call
    captures again; at most ``cache_size`` plans are kept per function (the
    least recently used is dropped).

    ``stats``: counts of captures, replays and eager calls.
    """

    def __init__(self, fn: Callable, cache_size: int = 8) -> None:
        if not callable(fn):
            raise TypeError(f"taugrad.compile expects a callable, got {type(fn).__name__}")
        if not isinstance(cache_size, int) or cache_size < 1:
            raise ValueError(f"taugrad.compile: cache_size must be a positive int, got {cache_size!r}")
        self.fn = fn
        self.cache_size = cache_size
        self.plans: "OrderedDict[tuple, Plan]" = OrderedDict()
        self.eager_reason: Optional[str] = None
        self.stats = {"captures": 0, "replays": 0, "eager": 0}
        self._found = None
        self._root_getters = _root_getters(fn)
        self._name = getattr(fn, "__qualname__", getattr(fn, "__name__", type(fn).__name__))
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.eager_reason is not None:
            self.stats["eager"] += 1
            return self.fn(*args, **kwargs)
        found = self._found
        roots = self._roots_now() if found is not None else None
        aliases = aliases_of(args, kwargs)
        inputs = None
        if found is not None and roots == self._found_roots and aliases == self._found_aliases and \
                all(found_arg is a for found_arg, a in self._found_args(args, kwargs)):
            inputs = self._inputs_key(found, args, kwargs)  # None: a path no longer leads anywhere
        if inputs is None:
            # The globals and closure cells the function names are re-read: a rebound name (a new model or
            # optimizer, a changed Python float) must be rediscovered and keyed, not replayed with the old one.
            self._root_getters = _root_getters(self.fn)
            self._set_root_modes()
            found = self._found = discover(self.fn, args, kwargs)
            self._found_objects = self._object_args(args, kwargs)
            self._found_roots = roots = self._roots_now()
            self._found_aliases = aliases  # discovery finds an object passed twice once: its inputs depend on it
            inputs = self._inputs_key(found, args, kwargs) or ()
        why = must_run_eagerly(found)
        if why:
            if found.truncated:  # not a passing state (as a hook is): say so once, and stay eager
                self.eager_reason = why
                self.plans.clear()
                warn_eager(self._name, why)
            self.stats["eager"] += 1
            return self.fn(*args, **kwargs)
        key = call_key(args, kwargs, found, aliases) + inputs + roots
        plan = self.plans.get(key)
        if plan is not None and self._plan_applies(plan, found):
            self.plans.move_to_end(key)
            try:
                replay(plan, args, kwargs)
            except Diverged as diverged:
                if not diverged.args[0]:
                    raise RuntimeError(f"taugrad.compile({self._name}): a value-dependent check inside the "
                                       f"function took another path than when it was captured, after the step "
                                       f"had changed state; run it without taugrad.compile") from None
                self.stats["eager"] += 1
                return self.fn(*args, **kwargs)
            self.stats["replays"] += 1
            return make_outputs(plan.outputs, plan.values)
        self.stats["captures"] += 1
        captured = capture(self.fn, args, kwargs, found, self._root_getters)
        if captured.plan is None:
            self.eager_reason = captured.why
            self.plans.clear()
            warn_eager(self._name, captured.why)
        else:
            captured.plan.optimizer_params = optimizer_params(found)
            self.plans[key] = captured.plan
            self.plans.move_to_end(key)
            while len(self.plans) > self.cache_size:
                self.plans.popitem(last=False)
        return captured.result

    def _roots_now(self) -> tuple:
        """What the plan depends on in the function's globals and closure: scalars and containers by value,
        learnable leaves, modules, optimizers and other objects by identity, data tensors by signature,
        NumPy arrays by both (the plan reads that very array).

        How each root is read is decided when it is discovered (``_root_modes``); a root rebound to an
        object of another kind gives another tuple, so it is discovered again.
        """
        out = []
        for name, get, mode in self._root_modes:
            try:
                obj = get()
            except (KeyError, ValueError):  # an undefined global, an empty closure cell
                out.append(None)
                continue
            if mode == 0:
                out.append(id(obj))
            elif mode == 1:
                out.append(signature(obj))
            else:
                out.append((signature(obj), id(obj)))
        return tuple(out)

    def _set_root_modes(self) -> None:
        modes = []
        for name, get in self._root_getters.items():
            try:
                obj = get()
            except (KeyError, ValueError):
                modes.append((name, get, 0))
                continue
            if isinstance(obj, np.ndarray):
                mode = 2
            elif isinstance(obj, (Tensor, _PLAIN_TYPES, list, tuple, dict)):
                mode = 1
            else:  # modules, optimizers, functions, other objects
                mode = 0
            modes.append((name, get, mode))
        self._root_modes = modes

    def _object_args(self, args, kwargs):
        """The arguments discovery depends on: modules, optimizers, learnable leaves, containers (not data)."""
        return [a for a in list(args) + list(kwargs.values())
                if not isinstance(a, _PLAIN_TYPES) and not isinstance(a, np.ndarray)
                and not (isinstance(a, Tensor) and not a._requires_grad)]

    def _found_args(self, args, kwargs):
        """Pairs (object found with, object now) for the non-array arguments (modules, optimizers...)."""
        now = self._object_args(args, kwargs)
        if len(now) != len(self._found_objects):
            return [(None, 0)]
        return zip(self._found_objects, now)

    def _inputs_key(self, found, args, kwargs) -> Optional[tuple]:
        """The signature of every discovered input as this call finds it along its path (None: a path broke).

        A NumPy array the capture could not wrap (reached through a global, a
        closure or an attribute) is read by the plan as that very array, so a
        different array there needs another plan: its identity is in the key.
        """
        out = []
        for path, _ in found.inputs:
            try:
                obj = read_path(path, lambda head: self._root_getters[head](), args, kwargs)
            except (LookupError, AttributeError, TypeError, ValueError):
                return None
            if isinstance(obj, np.ndarray) and (path[0] not in ("arg", "kwarg") or
                                                any(isinstance(k, Attr) for k in path)):
                out.append((signature(obj), id(obj)))
            else:
                out.append(signature(obj))
        return tuple(out)

    @staticmethod
    def _plan_applies(plan: Plan, found) -> bool:
        """The parameters hold the arrays the plan is bound to, and have a .grad where the capture saw one."""
        held = found.held
        arrays = plan.held_arrays
        grads = plan.entry_grads
        if len(arrays) != len(held):
            return False
        for t, array, had_grad in zip(held, arrays, grads):
            if t._data is not array or (t._grad is not None) != had_grad:
                return False
        # a parameter group changed (add_param_group, a list edited): the live step would be given stale grads
        for o, groups in zip(found.optimizers, plan.optimizer_params):
            for g, params in zip(o.param_groups, groups):
                if any(p is not q for p, q in zip(g["params"], params)):
                    return False
        return True


_PLAIN_TYPES = (bool, int, float, complex, str, bytes, type(None))


def compile(fn: Optional[Callable] = None, *, cache_size: int = 8):  # noqa: A001 - torch.compile's name
    r"""Capture ``fn`` on its first call and replay the recorded array kernels on later calls.

    Usable as ``step = taugrad.compile(step)``, ``@taugrad.compile`` or
    ``@taugrad.compile(cache_size=4)``.  ``fn`` may run a forward pass,
    ``backward()`` and an optimizer step (or any part of that).  A replay
    computes the same numbers, bit for bit, as an eager call would.  See
    :class:`CompiledFunction` for the guard and the README's "Compiling a
    training step" for what is replayed, what runs eagerly and why.
    """
    if fn is None:
        return lambda f: CompiledFunction(f, cache_size=cache_size)
    return CompiledFunction(fn, cache_size=cache_size)

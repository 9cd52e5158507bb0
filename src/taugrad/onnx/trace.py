"""Recording a model's forward pass: every registered op call, and the modules exported whole.

While an export runs, each op of the registry (:mod:`taugrad.tensors.core.rule`)
is replaced, wherever it is bound (``Tensor`` methods and properties, and the
module globals of taugrad that hold the same function), by a wrapper that runs
the op and then hands the call to its converter.  Only the outermost op call
is recorded: an op that calls another op records once.  ``Module.__call__`` is
wrapped too, to know which module is running (for error messages) and to
export some modules whole (an LSTM layer runs a fused op of its own; ONNX has
one node for it).  Everything is restored when the export ends, also after an
error, so the model and taugrad behave as before.

A call none of whose arguments is traced computes a constant: nothing is
recorded and its result is stored as an initializer where a traced op reads it.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List

from taugrad.nn.module import Module
from taugrad.onnx.graph import ExportError, Graph
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.core.rule import OPS


def leaves(obj: Any) -> List[Any]:
    """The leaves of nested tuples, lists and dicts, in order."""
    if isinstance(obj, (tuple, list)):
        return [leaf for item in obj for leaf in leaves(item)]
    if isinstance(obj, dict):
        return [leaf for item in obj.values() for leaf in leaves(item)]
    return [obj]


class Tracer:
    """Holds the graph, the running module's name and the op converters during one export."""

    def __init__(self, graph: Graph, names: Dict[int, str], converters: Dict[str, Callable],
                 module_converters: Dict[type, Callable]) -> None:
        self.graph = graph
        self.module_names = names
        self.converters = converters
        self.module_converters = module_converters
        self.depth = 0
        self.modules: List[str] = []
        self.undo: List[Callable[[], None]] = []
        self.clean: set = set()  # ids of untraced tensors known to descend from no traced value

    def where(self) -> str:
        return self.modules[-1] if self.modules else ""

    def fail(self, op: str) -> ExportError:
        module = self.where()
        place = f" (used in module '{module}')" if module else " (used in the model's forward)"
        return ExportError(f"onnx.export: no ONNX form for op '{op}'{place}")

    def check_constant(self, x: Tensor) -> None:
        """Refuse to store as a constant a tensor computed from the inputs by an op the trace did not see."""
        if id(x) in self.clean or getattr(x, "_rule", None) is None:
            return
        stack, seen = [x], {id(x)}
        while stack:
            node = stack.pop()
            for parent in getattr(node, "_prev", ()):
                if id(parent) in self.clean:
                    continue
                if self.graph.traced(parent):
                    rule = getattr(node, "_rule", None)
                    name_of = getattr(rule, "name_of", None)
                    raise self.fail(name_of(node) if name_of else getattr(rule, "op", "unknown"))
                if id(parent) not in seen:
                    seen.add(id(parent))
                    stack.append(parent)
        self.clean.update(seen)  # no traced ancestor: never walked again
        self.graph.keep.append(x)

    def record(self, name: str, args: tuple, kwargs: dict, out: Any) -> None:
        operands = leaves(args) + leaves(kwargs)
        for x in operands:
            if isinstance(x, Tensor) and not self.graph.traced(x):
                self.check_constant(x)
        if not any(self.graph.traced(x) for x in operands):
            return
        if not any(isinstance(y, Tensor) for y in leaves(out)):  # a Python value (a device, a flag): fixed here
            return
        convert = self.converters.get(name)
        if convert is None:
            raise self.fail(name)
        convert(self.graph, out, *args, **kwargs)

    # -- patching -------------------------------------------------------------

    def wrap_op(self, name: str, forward: Callable) -> Callable:
        tracer = self

        def recorded(*args, **kwargs):
            if tracer.depth:
                return forward(*args, **kwargs)
            tracer.depth += 1
            try:
                out = forward(*args, **kwargs)
            finally:
                tracer.depth -= 1
            tracer.record(name, args, kwargs, out)
            return out

        recorded.__wrapped__ = forward
        return recorded

    def wrap_call(self, call: Callable) -> Callable:
        tracer = self

        def traced_call(module, *args, **kwargs):
            tracer.modules.append(tracer.module_names.get(id(module), type(module).__name__))
            try:
                convert = tracer.module_converters.get(type(module))
                if tracer.depth or convert is None or not any(
                        tracer.graph.traced(x) for x in leaves(args) + leaves(kwargs)):
                    return call(module, *args, **kwargs)
                tracer.depth += 1
                try:
                    out = call(module, *args, **kwargs)
                finally:
                    tracer.depth -= 1
                convert(tracer, module, out, *args, **kwargs)
                return out
            finally:
                tracer.modules.pop()

        return traced_call

    def set(self, owner: Any, attr: str, value: Any) -> None:
        old = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
        setattr(owner, attr, value)
        self.undo.append(lambda: setattr(owner, attr, old))

    def install(self, functions: Dict[str, Callable] = None, modules: List[Any] = ()) -> None:
        """Wrap every registered op, and ``functions`` (name -> a function that is no registered op).

        An op a module keeps as an attribute (a Transformer layer's ``activation``) is wrapped there too.
        """
        wrapped = {}
        for name, fn in (functions or {}).items():
            wrapped[id(fn)] = self.wrap_op(name, fn)
        for entry in OPS.values():
            fn = self.wrap_op(entry.name, entry.forward)
            wrapped[id(entry.forward)] = fn
            for attr in entry.methods:
                if Tensor.__dict__.get(attr) is entry.forward:
                    self.set(Tensor, attr, fn)
            for attr in entry.properties:
                self.set(Tensor, attr, property(fn))
            self.set(entry, "forward", fn)
        for modname, module in list(sys.modules.items()):
            if module is None or not modname.startswith("taugrad") or modname.startswith("taugrad.onnx"):
                continue
            space = getattr(module, "__dict__", {})
            for attr, value in list(space.items()):
                if callable(value) and id(value) in wrapped and not isinstance(value, type):
                    self.set(module, attr, wrapped[id(value)])
        for module in modules:
            for attr, value in list(vars(module).items()):
                if callable(value) and id(value) in wrapped:
                    self.set(module, attr, wrapped[id(value)])
        self.set(Module, "__call__", self.wrap_call(Module.__call__))
        graph = self.graph

        def detach(x, _detach=Tensor.detach):  # a detached traced value is still the same value in the graph
            out = _detach(x)
            if graph.traced(x):
                graph.bind(out, graph.names[id(x)])
            return out

        self.set(Tensor, "detach", detach)

    def remove(self) -> None:
        while self.undo:
            self.undo.pop()()

"""The engine side of ``taugrad check``: drive a learner's ``Value`` class.

This module imports nothing but the standard library, because it also runs in
the sandbox process next to the learner's code (``sandbox.py`` loads it by
path, without importing the ``taugrad`` package and NumPy).

A graph to build is a list of *terms* ``[kind, payload, args]``, children
first, as the expression parser stores them:

* ``["var", "a", []]``: a leaf, ``Cls(inputs["a"])``;
* ``["num", 2.0, []]``: a plain Python number (so ``2 + a`` calls ``__radd__``);
* ``["neg", None, [i]]``, ``["call", "tanh", [i]]``, ``["op", "*", [i, j]]``;
* ``["sum", None, [i, j, ...]]``: the builtin ``sum()``, which starts from 0.

Learner objects are only ever compared by identity: their ``__eq__`` and
``__bool__`` may be anything.
"""
from __future__ import annotations

import math
import operator
import os
import traceback

OPS = ("add", "mul", "pow", "sub", "div", "neg", "relu", "tanh", "exp", "log", "sigmoid")
METHODS = {"add": "__add__", "mul": "__mul__", "pow": "__pow__", "sub": "__sub__", "div": "__truediv__",
           "neg": "__neg__", "relu": "relu", "tanh": "tanh", "exp": "exp", "log": "log", "sigmoid": "sigmoid"}
REFLECTED = {"add": "__radd__", "mul": "__rmul__", "sub": "__rsub__", "div": "__rtruediv__", "pow": "__rpow__"}
PARENT_NAMES = ("_prev", "parents", "_parents", "_children", "children", "prev", "inputs")
LABEL_NAMES = ("_op", "op", "_operation")
BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow}


class LearnerError(Exception):
    """The learner's code raised: carries a one-line summary and their trimmed traceback."""

    def __init__(self, stage: str, error: BaseException, source: str | None):
        self.stage = stage
        self.kind = type(error).__name__
        self.message = _one_line(str(error))
        self.frames = learner_frames(error, source)
        super().__init__(f"{self.kind}: {self.message}" if self.message else self.kind)

    def to_dict(self) -> dict:
        return {"stage": self.stage, "type": self.kind, "message": self.message, "frames": self.frames}


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def learner_frames(error: BaseException, source: str | None) -> list:
    """The traceback lines of ``error`` that are in the learner's file (theirs to read, not ours)."""
    if not source:
        return []
    wanted = os.path.realpath(source)
    lines = []
    for frame in traceback.extract_tb(error.__traceback__):
        if os.path.realpath(frame.filename) == wanted:
            lines.append(f'  File "{os.path.basename(frame.filename)}", line {frame.lineno}, in {frame.name}')
            if frame.line:
                lines.append(f"    {frame.line.strip()}")
    return lines[-12:]  # a deep recursion repeats one frame thousands of times


def as_float(x, what: str) -> float:
    """A learner's ``data`` or ``grad`` as a float, or a LearnerError that says what it was."""
    try:
        return float(x)
    except (TypeError, ValueError, OverflowError) as err:
        raise LearnerError("read", TypeError(f"{what} is {x!r} ({type(x).__name__}), not a real number"),
                           None) from err


class Probe:
    """One learner class: what it supports, and graphs built and differentiated with it."""

    def __init__(self, cls, source: str | None = None):
        self.cls = cls
        self.source = source
        self.attributes = self._attributes()
        self.ops = [op for op in OPS if _defines(cls, METHODS[op])]
        self.reflected = [op for op, name in REFLECTED.items() if op in self.ops and _defines(cls, name)]
        self.value_exponent = "pow" in self.ops and self._works(lambda: self.cls(1.5) ** self.cls(2.0))

    # -- what the class has ---------------------------------------------------
    def _attributes(self) -> dict:
        cls = self.cls
        try:
            a = cls(2.0)
        except BaseException as err:  # noqa: BLE001 - any failure of the learner's constructor is reported
            raise LearnerError("construct", err, self.source) from None
        for name in ("data", "grad"):
            if not _has(a, name):
                raise Unusable(f"{cls.__name__}(2.0) has no attribute '{name}'")
        if not callable(getattr(cls, "backward", None)):
            raise Unusable(f"{cls.__name__} has no backward() method")
        found = {"data": "data", "grad": "grad", "backward": "backward()", "parents": None, "op": None}
        out = self._first_node(a)
        if out is not None:
            b = out[1]
            node = out[0]
            for name in PARENT_NAMES + tuple(_instance_names(node)):
                holder = _get(node, name)
                if _holds(holder, a) and _holds(holder, b):
                    found["parents"] = name
                    break
            for name in LABEL_NAMES:
                if isinstance(_get(node, name), str):
                    found["op"] = name
                    break
        return found

    def _first_node(self, a):
        for make in (lambda b: a * b, lambda b: a + b):
            try:
                b = self.cls(3.0)
                return make(b), b
            except BaseException:  # noqa: BLE001 - a missing or broken op: try the next one
                continue
        return None

    def _works(self, thunk) -> bool:
        try:
            return isinstance(thunk(), self.cls)
        except BaseException:  # noqa: BLE001 - an optional form that fails is simply not offered
            return False

    def info(self) -> dict:
        return {"class": self.cls.__name__, "ops": self.ops, "reflected": self.reflected,
                "value_exponent": self.value_exponent, "attributes": self.attributes}

    # -- building and differentiating ----------------------------------------
    def build(self, terms, inputs):
        """(root, leaves by name) of ``terms`` built with the learner's class."""
        built, leaves = self.build_all(terms, inputs)
        root = built[-1]
        return (root if isinstance(root, self.cls) else self.cls(root)), leaves

    def build_all(self, terms, inputs):
        """(every term's result, leaves by name): numbers stay Python numbers."""
        cls = self.cls
        leaves = {}
        built = []
        for kind, payload, args in terms:
            if kind == "var":
                if payload not in leaves:
                    leaves[payload] = cls(float(inputs[payload]))
                result = leaves[payload]
            elif kind == "num":
                result = float(payload)
            elif kind == "neg":
                result = -built[args[0]]
            elif kind == "call":
                x = built[args[0]]
                result = getattr(x if isinstance(x, cls) else cls(x), payload)()
            elif kind == "sum":
                result = sum(built[i] for i in args)
            else:
                left, right = built[args[0]], built[args[1]]
                if not isinstance(left, cls) and not isinstance(right, cls):
                    left = cls(left)
                result = BINARY[payload](left, right)
            built.append(result)
        return built, leaves

    def evaluate(self, terms, inputs, calls: int = 1) -> dict:
        """Forward value and the leaves' gradients after each of ``calls`` ``backward()`` calls."""
        try:
            root, leaves = self.build(terms, inputs)
        except BaseException as err:  # noqa: BLE001 - the learner's forward pass failed
            raise LearnerError("forward", err, self.source) from None
        value = as_float(root.data, "the result's data")
        grads = []
        for _ in range(calls):
            try:
                root.backward()
            except BaseException as err:  # noqa: BLE001 - the learner's backward pass failed
                raise LearnerError("backward", err, self.source) from None
            grads.append({name: as_float(leaf.grad, f"{name}.grad") for name, leaf in leaves.items()})
        return {"value": value, "grads": grads}

    def chain(self, n: int) -> dict:
        """``x + z + z + ... + z`` (n additions of two Values): x.grad should be 1 and z.grad n."""
        cls = self.cls
        try:
            x, z = cls(0.5), cls(0.25)
            v = x
            for _ in range(n):
                v = v + z
            v.backward()
            return {"grads": [{"x": as_float(x.grad, "x.grad"), "z": as_float(z.grad, "z.grad")}]}
        except RecursionError as err:
            return {"recursion": True, "error": LearnerError("backward", err, self.source).to_dict()}
        except LearnerError:
            raise
        except BaseException as err:  # noqa: BLE001
            raise LearnerError("backward", err, self.source) from None

    def handle(self, request: dict) -> dict:
        """Answer one request of the sandbox protocol (also called directly in-process)."""
        try:
            if request["do"] == "evaluate":
                return self.evaluate(request["terms"], request["inputs"], request.get("calls", 1))
            if request["do"] == "chain":
                return self.chain(int(request["n"]))
            return {"error": {"stage": "protocol", "type": "ValueError", "message": f"unknown request {request['do']!r}",
                              "frames": []}}
        except LearnerError as err:
            return {"error": err.to_dict()}


class Unusable(Exception):
    """The class lacks something every check needs (data, grad, backward)."""


def _defines(cls, name: str) -> bool:
    return getattr(cls, name, None) is not None and getattr(object, name, None) is None


def _has(obj, name: str) -> bool:
    try:
        getattr(obj, name)
        return True
    except BaseException:  # noqa: BLE001 - a raising property counts as missing
        return False


def _get(obj, name: str):
    try:
        return getattr(obj, name, None)
    except BaseException:  # noqa: BLE001
        return None


def _instance_names(node) -> list:
    names = list(getattr(node, "__dict__", {}) or {})
    for klass in type(node).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return names


def _holds(collection, item) -> bool:
    if not isinstance(collection, (tuple, list, set, frozenset)):
        return False
    return any(x is item for x in collection)


def is_finite(x: float) -> bool:
    return isinstance(x, float) and math.isfinite(x)

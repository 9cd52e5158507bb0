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

import linecache
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
    theirs: dict = {}  # filename -> whether it is the learner's file (a deep recursion repeats one file)
    frames = []
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        filename = frame.f_code.co_filename
        if filename not in theirs:
            theirs[filename] = os.path.realpath(filename) == wanted
        if theirs[filename]:
            frames.append((filename, lineno, frame.f_code.co_name))
    lines = []
    for filename, lineno, name in frames[-6:]:  # a deep recursion repeats one frame thousands of times
        lines.append(f'  File "{os.path.basename(filename)}", line {lineno}, in {name}')
        text = linecache.getline(filename, lineno).strip()
        if text:
            lines.append(f"    {text}")
    return lines


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
        """``x + z + z + ... + z`` (n additions of two Values): x.grad should be 1 and z.grad n.

        A RecursionError is answered with the stage that raised it: building the
        chain (``"forward"``: an op walks the graph recursively) or ``backward()``.
        """
        cls = self.cls
        stage = "forward"
        try:
            x, z = cls(0.5), cls(0.25)
            chain = [x]
            for _ in range(n):
                chain.append(chain[-1] + z)
            stage = "backward"
            chain[-1].backward()
            return {"grads": [{"x": as_float(x.grad, "x.grad"), "z": as_float(z.grad, "z.grad")}]}
        except RecursionError as err:
            answer = {"recursion": True, "stage": stage, "error": LearnerError(stage, err, self.source).to_dict()}
            if stage == "backward":
                answer["fails_near"] = _deepest_failing(chain)
            return answer
        except LearnerError:
            raise
        except BaseException as err:  # noqa: BLE001
            raise LearnerError(stage, err, self.source) from None

    def structure(self, terms, inputs) -> dict:
        """How the root of ``terms`` hangs together, after one ``backward()``.

        ``root_grad``: the root's own gradient (1 when backward() seeds it);
        ``reach``: per leaf, ``"direct"`` (a parent of the root), ``"indirect"``
        (reached through other nodes: the op is composed, like ``a + (-b)``) or
        ``"none"`` (the result is not connected to it); ``composed``: whether
        the root has a parent that is not a leaf (``a - b`` built as
        ``a + (-b)``).  Both None when the class's parent attribute is unknown.
        """
        try:
            root, leaves = self.build(terms, inputs)
        except BaseException as err:  # noqa: BLE001 - the learner's forward pass failed
            raise LearnerError("forward", err, self.source) from None
        try:
            root.backward()
        except BaseException as err:  # noqa: BLE001
            raise LearnerError("backward", err, self.source) from None
        parents_name = self.attributes.get("parents")
        reach = None
        if parents_name:
            direct = _get(root, parents_name)
            seen, stack, found = set(), [root], set()
            while stack and len(seen) < 10_000:
                node = stack.pop()
                if id(node) in seen:
                    continue
                seen.add(id(node))
                found.add(id(node))
                held = _get(node, parents_name)
                if isinstance(held, (tuple, list, set, frozenset)):
                    stack.extend(held)
            reach = {name: ("direct" if _holds(direct, leaf) else "indirect" if id(leaf) in found else "none")
                     for name, leaf in leaves.items()}
            mine = {id(leaf) for leaf in leaves.values()}
            composed = isinstance(direct, (tuple, list, set, frozenset)) and any(id(p) not in mine for p in direct)
        else:
            composed = None
        return {"root_grad": as_float(root.grad, "the result's grad"), "reach": reach, "composed": composed}

    def rule_alone(self, symbol: str) -> dict:
        """Run ``a symbol b``'s own ``_backward()`` once, by hand, with every grad at 10 beforehand.

        A rule that adds (``+=``) leaves ``10 + its share`` in a and b; one that
        assigns (``=``) leaves only its share.  None when nodes have no callable
        ``_backward`` (the rule cannot be run alone).
        """
        try:
            a, b = self.cls(1.5), self.cls(-0.5)
            out = BINARY[symbol](a, b)
            rule = _get(out, "_backward")
            if not callable(rule):
                return {"grads": None}
            a.grad, b.grad, out.grad = 10.0, 10.0, 1.0
            rule()
            return {"grads": {"a": as_float(a.grad, "a.grad"), "b": as_float(b.grad, "b.grad")}}
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
            if request["do"] == "structure":
                return self.structure(request["terms"], request["inputs"])
            if request["do"] == "rule_alone":
                return self.rule_alone(request["symbol"])
            return {"error": {"stage": "protocol", "type": "ValueError", "message": f"unknown request {request['do']!r}",
                              "frames": []}}
        except LearnerError as err:
            return {"error": err.to_dict()}


def _deepest_failing(chain: list) -> int:
    """About the shortest prefix of ``chain`` whose ``backward()`` raises RecursionError (bisected on the one chain)."""
    lo, hi = 1, len(chain) - 1
    while hi - lo > max(10, hi // 50):
        mid = (lo + hi) // 2
        try:
            chain[mid].backward()
            lo = mid
        except RecursionError:
            hi = mid
        except BaseException:  # noqa: BLE001 - another failure says nothing about the depth: look shallower
            hi = mid
    return hi


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

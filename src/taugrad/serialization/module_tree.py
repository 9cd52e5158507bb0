"""Whole modules as data: ``save(model, f)`` writes the module tree, ``load(f, weights_only=False)`` rebuilds it.

A module is written as a record per submodule: its class's module and
qualified name, its parameters and buffers (in registration order, ``None``
entries kept), its non-persistent buffer names, its children in order, and its
plain attributes (numbers, strings, bools, ``None``, dtypes, devices, tensors,
arrays, and lists, tuples and dicts of those; ``training`` among them).  The
records and a table of the tensors they hold go into the checkpoint header
beside the layout; a layout node ``{"module": i}`` names record ``i``,
``{"t": j}`` tensor ``j``, so a submodule or a parameter reached twice (tied
weights) is one object again after loading.

Loading never imports and never calls anything the file names: a class is
looked up in a module that is already in ``sys.modules`` (through the
dictionaries of the module and class, so no module ``__getattr__`` runs), must
be a subclass of :class:`taugrad.nn.Module`, and is instantiated with
``object.__new__`` (no ``__init__``, no ``__new__`` of the class); its saved
state is then put into the instance's ``__dict__``.  The one kind of function a
module may hold is one of ``taugrad.nn.functional``'s (a Transformer layer's
``activation``), stored by name and looked up there.  Anything else that is not
data (a lambda, an arbitrary object, a hook) makes ``save`` refuse, naming the
attribute, rather than write a file that would load as a different model.
"""
from __future__ import annotations

import pickle
import sys
import types
from collections import OrderedDict
from typing import Any, Callable, Dict, List

import numpy as np

import taugrad.nn.functional as functional
from taugrad.nn.module import Module, Parameter
from taugrad.serialization.npz import CheckpointError, _Flattener, _rebuild
from taugrad.tensors.core.backend import device as Device
from taugrad.tensors.core.backend import device_of, to_host
from taugrad.tensors.core.device import as_device
from taugrad.tensors.core.dtypes import as_dtype
from taugrad.tensors.core.dtypes import dtype as DType
from taugrad.tensors.core.node import Tensor

__all__ = ["ModuleFlattener", "module_reader", "WeightsOnlyError", "SAFE_GLOBALS", "class_name"]

#: the instance-dictionary entries a module record holds in its own fields rather than as attributes
_REGISTRIES = ("_parameters", "_buffers", "_modules", "_non_persistent_buffers")

#: classes and functions that ``load(weights_only=True)`` may rebuild (``serialization.add_safe_globals``)
SAFE_GLOBALS: List[Any] = []


class WeightsOnlyError(CheckpointError, pickle.UnpicklingError):
    """A whole module loaded with ``weights_only=True`` whose classes were not allowed.

    Also a ``pickle.UnpicklingError``, the class torch raises there, so ``except`` clauses written for torch catch
    it (the ``pickle`` module is imported for that class only: nothing is unpickled).
    """


def class_name(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def _lookup(module_name: Any, qualname: Any) -> Any:
    """The object ``module_name``'s ``qualname`` names, if that module is already imported; else None.

    Walks plain ``__dict__`` entries only: no import, no module ``__getattr__``, no descriptor runs.
    """
    if not isinstance(module_name, str) or not isinstance(qualname, str):
        return None
    module = sys.modules.get(module_name)
    if module is None:
        return None
    obj: Any = module
    for part in qualname.split("."):
        namespace = getattr(obj, "__dict__", None)
        if not isinstance(namespace, (dict, types.MappingProxyType)) or part not in namespace:
            return None
        obj = namespace[part]
    return obj


def _is_hook_registry(name: str) -> bool:
    """``_forward_hooks``, ``_backward_pre_hooks`` and the like: registries of callables, never saved."""
    return name.startswith("_") and "hook" in name


def _is_functional(value: Any) -> bool:
    return isinstance(value, types.FunctionType) and vars(functional).get(value.__name__) is value


class ModuleFlattener(_Flattener):
    """The checkpoint flattener that also writes modules, dtypes, devices and ``nn.functional`` functions."""

    def __init__(self) -> None:
        super().__init__()
        self.records: List[Any] = []
        self.record_of: Dict[int, int] = {}
        self.tensors: List[Dict[str, Any]] = []
        self.tensor_of: Dict[int, int] = {}
        self.functions: List[str] = []
        self.inside_module = 0

    def extra_header(self) -> Dict[str, Any]:
        if not self.records:
            return {}
        return {"modules": self.records, "tensors": self.tensors, "functions": self.functions}

    def layout(self, value: Any, path: str, depth: int) -> Any:
        if isinstance(value, Module):
            return {"module": self.module(value, path or type(value).__name__)}
        if self.inside_module and isinstance(value, Tensor):
            return {"t": self.tensor(value, path)}
        if isinstance(value, DType):
            return {"dtype": value.name}
        if isinstance(value, Device):
            return {"device": str(value)}
        if isinstance(value, types.FunctionType):
            if not _is_functional(value):
                raise TypeError(f"cannot save {path or 'value'}: it holds the function "
                                f"{getattr(value, '__qualname__', type(value).__name__)}, which is code, not data "
                                "(only taugrad.nn.functional's functions are saved, by name)")
            if value.__name__ not in self.functions:
                self.functions.append(value.__name__)
            return {"function": value.__name__}
        return super().layout(value, path, depth)

    def tensor(self, t: Tensor, path: str) -> int:
        """The index of ``t`` in the tensor table (added the first time it is met)."""
        index = self.tensor_of.get(id(t))
        if index is not None:
            return index
        if type(t) not in (Tensor, Parameter):
            raise TypeError(f"cannot save {path}: tensors of type {type(t).__name__} are not supported")
        if t.requires_grad and not t.is_leaf:
            raise TypeError(f"cannot save {path}: a tensor that requires grad and is not a leaf "
                            "(the result of an operation); detach it first")
        entry = self.add_array(to_host(t._data), path, is_tensor=True)["tensor"]
        self.tensor_of[id(t)] = len(self.tensors)
        self.tensors.append({"entry": entry, "parameter": isinstance(t, Parameter),
                             "requires_grad": bool(t.requires_grad), "device": str(device_of(t._data))})
        return len(self.tensors) - 1

    def module(self, m: Module, path: str) -> int:
        """The index of ``m``'s record (written the first time it is met)."""
        index = self.record_of.get(id(m))
        if index is not None:
            return index
        cls = type(m)
        if _lookup(cls.__module__, cls.__qualname__) is not cls:
            raise TypeError(f"cannot save {path}: its class {cls.__qualname__} cannot be found again by name "
                            f"in module {cls.__module__} (defined inside a function?); define it at module level")
        index = len(self.records)
        self.record_of[id(m)] = index
        self.records.append(None)  # reserved: a child may refer back to this module
        d = m.__dict__
        self.inside_module += 1
        try:
            parameters = [[n, None if p is None else self.tensor(p, f"{path}.{n}")]
                          for n, p in d["_parameters"].items()]
            buffers = [[n, None if b is None else self.tensor(b, f"{path}.{n}")] for n, b in d["_buffers"].items()]
            children = [[n, None if c is None else self.module(c, f"{path}.{n}")] for n, c in d["_modules"].items()]
            attributes = []
            for name, value in d.items():
                if name in _REGISTRIES:
                    continue
                if _is_hook_registry(name):
                    if value:
                        raise TypeError(f"cannot save {path}: it has hooks registered ({name}), which are code; "
                                        "remove them before saving")
                    continue
                attributes.append([name, self.layout(value, f"{path}.{name}", 0)])
        finally:
            self.inside_module -= 1
        self.records[index] = {"class": [cls.__module__, cls.__qualname__], "parameters": parameters,
                               "buffers": buffers, "non_persistent": sorted(d["_non_persistent_buffers"]),
                               "modules": children, "attributes": attributes}
        return index


def _safe(obj: Any) -> bool:
    return any(obj is entry or (isinstance(entry, tuple) and entry and obj is entry[0]) for entry in SAFE_GLOBALS)


def _check_record(record: Any) -> None:
    keys = {"class", "parameters", "buffers", "non_persistent", "modules", "attributes"}
    if not isinstance(record, dict) or set(record) != keys:
        raise ValueError("a module record has unexpected fields")
    for field in ("parameters", "buffers", "modules", "attributes", "non_persistent"):
        if not isinstance(record[field], list):
            raise ValueError(f"module record field {field!r} is not a list")


def module_reader(weights_only: bool) -> Callable[..., Any]:
    """The ``extension`` for :func:`npz.read_npz`: builds the modules a file holds, after checking its classes.

    With ``weights_only`` every class and function must be in :data:`SAFE_GLOBALS`, as torch asks.
    """

    def extension(header: Dict[str, Any], arrays: Dict[str, np.ndarray], place: Any,
                  where: str) -> Callable[[str, Any], Any]:
        records = header.get("modules", [])
        table = header.get("tensors", [])
        function_names = header.get("functions", [])
        if not isinstance(records, list) or not isinstance(table, list) or not isinstance(function_names, list):
            raise ValueError("malformed module tables")
        for record in records:
            _check_record(record)
        classes = [_find_class(record["class"], where) for record in records]
        functions = {name: _find_function(name, where) for name in function_names}
        if weights_only:
            refused = [class_name(c) for c in dict.fromkeys(classes) if not _safe(c)]
            refused += [class_name(f) for f in functions.values() if not _safe(f)]
            if refused:
                listed = ", ".join(refused)
                raise WeightsOnlyError(
                    f"Weights only load failed ({where}): it holds a whole module, and weights_only=True rebuilds "
                    f"only allowed classes; pass weights_only=False if you trust the file, or allow them with "
                    f"torch.serialization.safe_globals([{listed}])")
        shells = [object.__new__(cls) for cls in classes]
        tensors: Dict[int, Tensor] = {}

        def tensor(index: Any) -> Tensor:
            if index in tensors:
                return tensors[index]
            spec = table[index]
            array = arrays[spec["entry"]]
            location = str(as_device(spec["device"], "load"))
            data = place(Tensor(array), location)._data
            requires_grad = bool(spec["requires_grad"])
            made = Parameter(data, requires_grad) if spec["parameter"] else Tensor(data, requires_grad=requires_grad)
            tensors[index] = made
            return made

        def other(kind: str, content: Any) -> Any:
            if kind == "module":
                return shells[content] if isinstance(content, int) and 0 <= content < len(shells) else \
                    _bad(f"module index {content!r}")
            if kind == "t":
                return tensor(content) if isinstance(content, int) and 0 <= content < len(table) else \
                    _bad(f"tensor index {content!r}")
            if kind == "dtype":
                return as_dtype(str(content))
            if kind == "device":
                return as_device(str(content), "load")
            if kind == "function":
                return functions[content]
            raise ValueError(f"unknown layout kind {kind!r}")

        for shell, record in zip(shells, records):
            state = shell.__dict__
            state["_parameters"] = OrderedDict(
                (str(n), None if i is None else other("t", i)) for n, i in record["parameters"])
            state["_buffers"] = OrderedDict(
                (str(n), None if i is None else other("t", i)) for n, i in record["buffers"])
            state["_non_persistent_buffers"] = {str(n) for n in record["non_persistent"]}
            state["_modules"] = OrderedDict(
                (str(n), None if i is None else other("module", i)) for n, i in record["modules"])
            state["_forward_hooks"] = OrderedDict()
            for name, node in record["attributes"]:
                if not isinstance(name, str) or name in _REGISTRIES or _is_hook_registry(name):
                    raise ValueError(f"unexpected attribute name {str(name)[:60]!r}")  # save never writes hooks
                state[name] = _rebuild(node, arrays, place=place, other=other)
        return other

    return extension


def _bad(what: str) -> Any:
    raise ValueError(f"unexpected {what}")


def _find_class(spec: Any, where: str) -> type:
    """The already-imported Module subclass ``spec`` (``[module, qualname]``) names, or a one-line CheckpointError."""
    if not (isinstance(spec, list) and len(spec) == 2 and all(isinstance(s, str) for s in spec)):
        raise ValueError(f"unexpected class entry {str(spec)[:60]}")
    module_name, qualname = spec
    if module_name not in sys.modules:
        raise CheckpointError(f"{where}: it holds a module of class {module_name}.{qualname}, and module "
                              f"{module_name!r} is not imported; taugrad never imports what a file names, so "
                              f"import it first")
    cls = _lookup(module_name, qualname)
    if cls is None:
        raise CheckpointError(f"{where}: it names class {module_name}.{qualname}, which module {module_name!r} "
                              "does not define")
    if not (isinstance(cls, type) and issubclass(cls, Module)):
        raise CheckpointError(f"{where}: it names {module_name}.{qualname}, which is not a taugrad.nn.Module "
                              "subclass; only modules are rebuilt")
    return cls


def _find_function(name: Any, where: str) -> Any:
    value = vars(functional).get(name) if isinstance(name, str) else None
    if not _is_functional(value):
        raise CheckpointError(f"{where}: it names function {str(name)[:60]!r}, which is not one of "
                              "taugrad.nn.functional's")
    return value

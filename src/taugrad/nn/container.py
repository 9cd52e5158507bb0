"""Containers that register what they hold, with PyTorch's container API.

``ModuleDict``, ``ParameterList`` and ``ParameterDict`` are here, and the list
methods of ``Sequential`` and ``ModuleList`` (:class:`_SequentialMethods`,
:class:`_ModuleListMethods`; the classes are in :mod:`taugrad.nn.layers`).
Entries are registered under their key (``"0"``, ``"1"``... for lists), so
state-dict keys are PyTorch's: ``blocks.encoder.weight``, ``scales.0``.
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable as IterableABC
from itertools import chain
from typing import Any, Iterable, Iterator, Mapping, Optional, Tuple, Union

import numpy as np

from taugrad.nn.module import Module, Parameter
from taugrad.tensors.core.backend import is_array
from taugrad.tensors.core.node import Tensor

__all__ = ["ModuleDict", "ParameterList", "ParameterDict"]


def _absolute(index: Any, length: int, kind: str = "module") -> int:
    """``index`` (an int, or anything with ``__index__``) as a position in ``[0, length)``."""
    if isinstance(index, bool):
        raise TypeError(f"{kind} index must be an integer, got bool")
    try:
        index = operator.index(index)
    except TypeError:
        raise TypeError(f"{kind} index must be an integer or a slice, got {type(index).__name__}") from None
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of range")
    return index % length


def _renumber(module: Module) -> None:
    """Rename the children ``"0"``, ``"1"``... in their order (after a deletion), as PyTorch does."""
    children = list(module._modules.values())
    module._modules.clear()
    for position, child in enumerate(children):
        module._modules[str(position)] = child


class _ModuleSequence:
    """The list API shared by ``Sequential`` and ``ModuleList`` (children keyed by position)."""

    _modules: "OrderedDict[str, Module]"

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __setitem__(self, index: int, module: Module) -> None:
        key = list(self._modules)[_absolute(index, len(self._modules))]
        setattr(self, key, module)

    def __delitem__(self, index: Union[int, slice]) -> None:
        keys = list(self._modules)
        doomed = keys[index] if isinstance(index, slice) else [keys[_absolute(index, len(keys))]]
        for key in doomed:
            delattr(self, key)
        _renumber(self)  # type: ignore[arg-type]

    def pop(self, key: Union[int, slice]) -> Any:
        """Remove and return the module at ``key`` (or the modules of a slice, as a container)."""
        value = self[key]  # type: ignore[index]
        del self[key]
        return value

    def append(self, module: Module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self._modules)), module)  # type: ignore[attr-defined]
        return self

    def extend(self, modules: Iterable[Module]):
        """Append every module of ``modules`` (iterated once); returns self."""
        if not isinstance(modules, IterableABC):
            raise TypeError(f"{type(self).__name__}.extend should be called with an iterable, "
                            f"but got {type(modules).__name__}")
        offset = len(self._modules)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)  # type: ignore[attr-defined]
        return self

    def insert(self, index: int, module: Module):
        """Put ``module`` before position ``index`` (``-len <= index <= len``), shifting the later ones."""
        if not isinstance(module, Module):
            raise TypeError(f"insert: module should be of type Module, got {type(module).__name__}")
        n = len(self._modules)
        index = operator.index(index)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]  # type: ignore[misc]


class _SequentialMethods(_ModuleSequence):
    """``Sequential``'s container API: indexing (a slice keeps the names), ``del``, ``+``, ``*``, ``insert``..."""

    def __getitem__(self, index: Union[int, slice]) -> Any:
        items = list(self._modules.items())
        if isinstance(index, slice):
            return type(self)(OrderedDict(items[index]))
        return items[_absolute(index, len(items))][1]

    def _check_sequential(self, other: Any, op: str) -> None:
        if not isinstance(other, _SequentialMethods):
            raise ValueError(f"{op} operator supports only objects of Sequential class, but {type(other)} is given.")

    def __add__(self, other: Any):
        """A new Sequential: this one's modules, then ``other``'s (the same module objects)."""
        self._check_sequential(other, "add")
        combined = self._plain()
        for module in chain(self, other):
            combined.append(module)
        return combined

    def __iadd__(self, other: Any):
        self._check_sequential(other, "add")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)  # type: ignore[attr-defined]
        return self

    def _factor(self, other: Any) -> int:
        if isinstance(other, bool) or not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return other

    def __mul__(self, other: Any):
        """A new Sequential holding this one's modules ``other`` times over (the same objects, so shared)."""
        times = self._factor(other)
        combined = self._plain()
        for _ in range(times):
            for module in self:
                combined.append(module)
        return combined

    def __rmul__(self, other: Any):
        return self.__mul__(other)

    def __imul__(self, other: Any):
        times = self._factor(other)
        modules = list(self)
        for _ in range(times - 1):
            for module in modules:
                self.append(module)
        return self

    def _plain(self):
        """An empty ``Sequential`` (not a subclass, whose constructor may want arguments), as PyTorch's ``+``."""
        cls = next(c for c in type(self).__mro__ if _SequentialMethods in c.__bases__)
        return cls()


class _ModuleListMethods(_ModuleSequence):
    """``ModuleList``'s container API: indexing (a slice renumbers), ``del``, ``+``, ``+=``, ``insert``..."""

    def __getitem__(self, index: Union[int, slice]) -> Any:
        modules = list(self._modules.values())
        if isinstance(index, slice):
            return type(self)(modules[index])
        return modules[_absolute(index, len(modules))]

    def __iadd__(self, modules: Iterable[Module]):
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]):
        """A new ModuleList: this one's modules, then ``other``'s (the same module objects)."""
        combined = type(self)()
        for module in chain(self, other):
            combined.append(module)
        return combined


def _pairs(entries: Union[Mapping[str, Any], Iterable[Tuple[str, Any]]]) -> Iterable[Tuple[str, Any]]:
    if isinstance(entries, Mapping):
        return entries.items()
    return entries


class ModuleDict(Module):
    """An ordered dict of modules: ``d["name"] = module`` registers it as the child ``name``."""

    def __init__(self, modules: Optional[Union[Mapping[str, Module], Iterable[Tuple[str, Module]]]] = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Union[Mapping[str, Module], Iterable[Tuple[str, Module]]]) -> None:
        for key, module in _pairs(modules):
            self[key] = module

    def _check_new_name(self, name: str, kind: str) -> None:
        # keys such as "train" or "forward" are fine in a dict: only the registries hold them
        if not isinstance(name, str):
            raise TypeError(f"{kind} name must be a string, got {type(name).__name__}")
        if name == "" or "." in name:
            raise KeyError(f"{kind} name must be non-empty and contain no '.', got {name!r}")


def _as_parameter(value: Any) -> Any:
    """Tensors and arrays become Parameters (as PyTorch's containers do); other objects stay as they are."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    if is_array(value):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters registered as ``"0"``, ``"1"``...; Tensors appended become Parameters."""

    def __init__(self, values: Optional[Iterable[Any]] = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    def _key(self, index: int) -> str:
        return str(_absolute(index, self._size, "ParameterList"))

    def __getitem__(self, index: Union[int, slice]) -> Any:
        if isinstance(index, slice):
            out = type(self)()
            for i in range(*index.indices(self._size)):
                out.append(self[i])
            return out
        key = self._key(index)
        return self._parameters[key] if key in self._parameters else self.__dict__[key]

    def __setitem__(self, index: int, value: Any) -> None:
        key = self._key(index)
        value = _as_parameter(value)
        if isinstance(value, Parameter):
            self.register_parameter(key, value)
        else:
            self._parameters.pop(key, None)
            object.__setattr__(self, key, value)

    def _check_new_name(self, name: str, kind: str) -> None:
        pass  # keys are the positions "0", "1"...: always valid, and replacing one is allowed

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self._size))

    def __iadd__(self, values: Iterable[Any]) -> "ParameterList":
        return self.extend(values)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> "ParameterList":
        object.__setattr__(self, "_size", self._size + 1)
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        """Append every value of ``values`` (iterated once; a single Tensor is refused, as PyTorch)."""
        if not isinstance(values, IterableABC) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")

    def extra_repr(self) -> str:
        return _describe(enumerate(self))


def _describe(entries: Iterable[Tuple[Any, Any]]) -> str:
    """PyTorch's lines for parameter containers: ``(key): Parameter containing: [taugrad.float32 of size 2x3]``."""
    lines = []
    for key, value in entries:
        if isinstance(value, Tensor):
            size = "x".join(str(n) for n in value.shape)
            kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
            lines.append(f"  ({key}): {kind} containing: [{value.dtype} of size {size}]")
        else:
            lines.append(f"  ({key}): Object of type: {type(value).__name__}")
    return "\n".join(lines)


class ParameterDict(Module):
    """A dict of parameters: ``d["scale"] = Tensor`` registers a Parameter named ``scale``.

    Built or updated from a plain ``dict``, the keys are taken in *sorted*
    order, as PyTorch does (so ``parameters()``, ``state_dict()`` and an
    optimizer's parameter indices agree with it); an ``OrderedDict``, another
    ParameterDict or an iterable of ``(key, value)`` pairs keeps its order.
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    def _check_new_name(self, name: str, kind: str) -> None:
        if name == "" or "." in name:
            raise KeyError(f"{kind} name must be non-empty and contain no '.', got {name!r}")

    @staticmethod
    def _attr(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string "
                            f"(type is '{type(key).__name__}').")
        return key

    def __getitem__(self, key: str) -> Any:
        if self._attr(key) not in self._keys:
            raise KeyError(key)
        return self._parameters[key] if key in self._parameters else self.__dict__[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._attr(key)
        value = _as_parameter(value)
        self._keys[key] = None
        if isinstance(value, Parameter):
            self.register_parameter(key, value)
        else:
            self._parameters.pop(key, None)
            object.__setattr__(self, key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        if key in self._parameters:
            del self._parameters[key]
        else:
            del self.__dict__[key]

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def keys(self):
        return self._keys.keys()

    def values(self) -> Iterator[Any]:
        return (self[key] for key in self._keys)

    def items(self) -> Iterator[Tuple[str, Any]]:
        return ((key, self[key]) for key in self._keys)

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when it is absent."""
        return self[key] if key in self else default

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value of ``key``; absent, ``default`` is stored under it first."""
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> Tuple[str, Any]:
        """Remove and return the last ``(key, value)`` pair."""
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(list(self._keys)))
        value = self[key]
        del self[key]
        return key, value

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def copy(self) -> "ParameterDict":
        """A new ParameterDict holding the same parameters, in the same order."""
        return ParameterDict(OrderedDict((key, self[key]) for key in self._keys))

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> "ParameterDict":
        """A new ParameterDict with ``keys`` (in their order), each holding ``default``."""
        return ParameterDict((key, default) for key in keys)

    def update(self, parameters: Any) -> None:
        """Add or replace entries: from an ``OrderedDict``/ParameterDict in order, a plain dict in sorted
        key order (as PyTorch), or an iterable of ``(key, value)`` pairs in order (iterated once)."""
        if not isinstance(parameters, IterableABC):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, "
                            f"but got {type(parameters).__name__}")
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs: Iterable = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = parameters
        for j, pair in enumerate(pairs):
            if not isinstance(pair, IterableABC):
                raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is "
                                f"{type(pair).__name__}")
            pair = tuple(pair)
            if len(pair) != 2:
                raise ValueError(f"ParameterDict update sequence element #{j} has length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: "ParameterDict") -> "ParameterDict":
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: "ParameterDict") -> "ParameterDict":
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return _describe(self.items())

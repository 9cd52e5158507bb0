"""Containers that register what they hold: ``ModuleDict``, ``ParameterList``, ``ParameterDict``.

(``Sequential`` and ``ModuleList`` are in :mod:`taugrad.nn.layers`.)  Entries
are registered under their key (``"0"``, ``"1"``... for lists), so state-dict
keys are PyTorch's: ``blocks.encoder.weight``, ``scales.0``.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Iterator, Mapping, Optional, Tuple, Union

import numpy as np

from taugrad.nn.module import Module, Parameter
from taugrad.tensors.core.backend import is_array
from taugrad.tensors.core.node import Tensor

__all__ = ["ModuleDict", "ParameterList", "ParameterDict"]


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
        for value in values or ():
            self.append(value)

    def _key(self, index: int) -> str:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"ParameterList index must be an integer, got {type(index).__name__}")
        if not -self._size <= index < self._size:
            raise IndexError(f"index {index} is out of range for {self._size} parameters")
        return str(int(index) % self._size)

    def __getitem__(self, index: int) -> Any:
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

    def append(self, value: Any) -> "ParameterList":
        object.__setattr__(self, "_size", self._size + 1)
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        for value in values:
            self.append(value)
        return self

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
    """An ordered dict of parameters: ``d["scale"] = Tensor`` registers a Parameter named ``scale``."""

    def __init__(self, parameters: Optional[Union[Mapping[str, Any], Iterable[Tuple[str, Any]]]] = None) -> None:
        super().__init__()
        object.__setattr__(self, "_keys", OrderedDict())
        if parameters is not None:
            self.update(parameters)

    def _check_new_name(self, name: str, kind: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name must be a string, got {type(name).__name__}")
        if name == "" or "." in name:
            raise KeyError(f"{kind} name must be non-empty and contain no '.', got {name!r}")

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        return self._parameters[key] if key in self._parameters else self.__dict__[key]

    def __setitem__(self, key: str, value: Any) -> None:
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

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def values(self):
        return [self[key] for key in self._keys]

    def items(self):
        return [(key, self[key]) for key in self._keys]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def update(self, parameters: Union[Mapping[str, Any], Iterable[Tuple[str, Any]]]) -> None:
        for key, value in _pairs(parameters):
            self[key] = value

    def extra_repr(self) -> str:
        return _describe(self.items())

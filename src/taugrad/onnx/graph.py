"""The ONNX graph under construction: value names, constants and nodes.

Every traced Tensor (an input, or the result of an op computed from one) has
a value name in the graph; a Tensor that is not traced (a parameter, a
buffer, a tensor built inside ``forward`` from constants) becomes an
initializer the first time a traced op reads it, so a model's weights are
stored once each however often they are used.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import onnx
from onnx import helper, numpy_helper

from taugrad.tensors.core.node import Tensor


class ExportError(RuntimeError):
    """The model holds something the exporter cannot write as ONNX."""


def host_array(x: Any) -> np.ndarray:
    """A NumPy copy of a Tensor's (or array's) values, wherever the array lives."""
    data = x._data if isinstance(x, Tensor) else x
    getter = getattr(data, "get", None)  # a device array copies itself to the host
    return np.asarray(getter() if callable(getter) and not isinstance(data, np.ndarray) else data)


def onnx_type(dtype: Any) -> int:
    """The ONNX element type of a NumPy dtype."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


class Graph:
    """Nodes, initializers and the Tensor -> value-name map of one export."""

    def __init__(self) -> None:
        self.nodes: List[onnx.NodeProto] = []
        self.initializers: List[onnx.TensorProto] = []
        self.names: Dict[int, str] = {}
        self.consts: Dict[int, str] = {}  # untraced Tensors already stored as initializers
        self.keep: List[Any] = []  # the traced objects stay alive, so their ids stay unique
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def traced(self, x: Any) -> bool:
        return isinstance(x, Tensor) and id(x) in self.names

    def bind(self, x: Tensor, name: str) -> None:
        self.names[id(x)] = name
        self.keep.append(x)

    def const(self, array: Any, hint: str = "const") -> str:
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(np.asarray(array)), name))
        return name

    def ints(self, values) -> str:
        """An int64 constant (shapes, axes, slice bounds)."""
        return self.const(np.asarray(list(values), dtype=np.int64), "ints")

    def node(self, op: str, inputs: List[str], outputs: int = 1, **attrs) -> Any:
        names = [self.fresh(op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, **attrs))
        return names[0] if outputs == 1 else names

    def value(self, x: Any, dtype: Any = None) -> str:
        """The value name of an operand: a traced Tensor's name, else a constant (cast to ``dtype`` if given)."""
        if self.traced(x):
            name = self.names[id(x)]
            if dtype is not None and np.dtype(dtype) != x._data.dtype:
                name = self.node("Cast", [name], to=onnx_type(dtype))
            return name
        if isinstance(x, Tensor):
            array = host_array(x)
            if dtype is not None:
                array = array.astype(dtype)
            if dtype is not None:
                return self.const(array)
            if id(x) not in self.consts:
                self.consts[id(x)] = self.const(array, "weight")
                self.keep.append(x)
            return self.consts[id(x)]
        array = np.asarray(x, dtype=dtype)
        return self.const(array)

"""PyTorch's legacy tensor types: ``taugrad.FloatTensor``, ``DoubleTensor``, ``LongTensor``...

Old code (and code written from old tutorials) makes tensors with them and
tests types with them::

    x = torch.FloatTensor([1, 2])        # float32 [1., 2.]
    w = torch.FloatTensor(3, 4)          # uninitialised, shape (3, 4)
    isinstance(x, torch.FloatTensor)     # True: a CPU tensor of that dtype

In torch they are not subclasses of ``Tensor``: each is an instance of a
metaclass whose ``isinstance`` asks for the dtype.  Here too: calling one
makes a plain :class:`Tensor` of its dtype, and ``isinstance(t, FloatTensor)``
is ``t.dtype == float32`` for a tensor on the CPU.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from taugrad.tensors.core.backend import CPU, device_of, is_array, to_host
from taugrad.tensors.core.dtypes import from_numpy_dtype
from taugrad.tensors.core.node import Tensor, _holds_python_numbers, make, to_array

__all__ = ["LEGACY_TYPES", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor"]


class tensortype(type):  # noqa: N801  (named as torch.tensortype)
    """The metaclass of the legacy types: calling one constructs, ``isinstance`` checks the dtype."""

    numpy_dtype: np.dtype

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj._data.dtype == cls.numpy_dtype and device_of(obj._data) == CPU

    def __call__(cls, *args, device=None) -> Tensor:
        """``FloatTensor(*sizes)`` (uninitialised), ``FloatTensor(sequence or array)`` (converted, copied),
        ``FloatTensor(tensor)`` (the same tensor, if it has this dtype, else refused as in torch)."""
        name = cls.__name__
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"{name}: legacy constructor expects device type: cpu but device type: {device} "
                               "was passed")
        if not args or all(type(n) is int for n in args):
            for n in args:
                if n < 0:
                    raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(args)}")
            return make(np.zeros(args if args else (0,), dtype=cls.numpy_dtype), (), None)
        if len(args) != 1:
            raise TypeError(f"{name}(): expected sizes (ints) or one sequence of data, got {len(args)} arguments")
        data = args[0]
        if isinstance(data, Tensor):
            if data._data.dtype != cls.numpy_dtype:
                raise TypeError(f"{name}(): expected a tensor of dtype {from_numpy_dtype(cls.numpy_dtype)}, got "
                                f"{data.dtype} (convert it with .to() first)")
            return data
        if isinstance(data, (float, complex, bool)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        if is_array(data):
            array = to_host(data).astype(cls.numpy_dtype)  # a copy, converted (truncated for integers), as torch
        elif isinstance(data, (list, tuple)) and _holds_python_numbers(data):
            array = np.array(to_array(data), dtype=cls.numpy_dtype)
        else:
            array = np.array(data, dtype=cls.numpy_dtype)
        return make(array, (), None)

    def __repr__(cls) -> str:
        return f"<class 'taugrad.{cls.__name__}'>"


def _legacy(name: str, numpy_dtype: Any) -> tensortype:
    cls = tensortype(name, (), {"numpy_dtype": np.dtype(numpy_dtype), "__module__": "taugrad",
                                "__doc__": f"The legacy CPU tensor type of dtype {np.dtype(numpy_dtype).name}: "
                                           f"``{name}(sizes...)``, ``{name}(data)``, ``isinstance(t, {name})``."})
    cls.dtype = from_numpy_dtype(np.dtype(numpy_dtype))
    cls.is_cuda = False
    cls.is_sparse = False
    return cls


FloatTensor = _legacy("FloatTensor", np.float32)
DoubleTensor = _legacy("DoubleTensor", np.float64)
HalfTensor = _legacy("HalfTensor", np.float16)
LongTensor = _legacy("LongTensor", np.int64)
IntTensor = _legacy("IntTensor", np.int32)
ShortTensor = _legacy("ShortTensor", np.int16)
CharTensor = _legacy("CharTensor", np.int8)
ByteTensor = _legacy("ByteTensor", np.uint8)
BoolTensor = _legacy("BoolTensor", np.bool_)
LEGACY_TYPES = {cls.__name__: cls for cls in (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor,
                                               ShortTensor, CharTensor, ByteTensor, BoolTensor)}

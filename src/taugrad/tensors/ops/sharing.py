"""Tensors in shared memory: ``share_memory_`` and ``is_shared`` (for ``torch.multiprocessing``).

``x.share_memory_()`` moves x's array into a block of POSIX shared memory
(:class:`multiprocessing.shared_memory.SharedMemory`) and keeps its shape,
dtype and values: from then on another process that maps the block (a child
made by ``fork``, or one that unpickles the tensor, see
:mod:`taugrad.multiprocessing`) reads and writes the same numbers.  The block
lives as long as the array: when the last reference to it goes, the process
that made the block closes and unlinks it.  CUDA tensors are left as they
are, as in torch (device memory is shared by handle, not copied).

As in torch, sharing moves the storage: a view taken before
``share_memory_()`` keeps the old memory (torch's views follow, since they
share the storage object; here the tensor gets a new array).
"""
from __future__ import annotations

import weakref
from multiprocessing import shared_memory
from multiprocessing.reduction import ForkingPickler
from typing import Dict, Optional, Tuple

from taugrad.tensors.core.backend import device_of
from taugrad.tensors.core.node import Tensor, array_module
from taugrad.tensors.core.rule import register

__all__ = ["share_memory_", "is_shared", "shared_block", "attach_shared", "reduce_for_processes"]

#: id(array) -> (weak reference to the array, its shared-memory block)
_BLOCKS: Dict[int, Tuple[weakref.ref, shared_memory.SharedMemory]] = {}


def _release(key: int, owner: bool):
    def release(_ref) -> None:
        _, block = _BLOCKS.pop(key, (None, None))
        if block is not None:
            block.close()
            if owner:
                block.unlink()
    return release


def _adopt(array, block: shared_memory.SharedMemory, owner: bool) -> None:
    key = id(array)
    _BLOCKS[key] = (weakref.ref(array, _release(key, owner)), block)


def shared_block(data) -> Optional[shared_memory.SharedMemory]:
    """The shared-memory block holding ``data`` (an array made by :func:`share_memory_`), else None."""
    entry = _BLOCKS.get(id(data))
    if entry is not None and entry[0]() is data:
        return entry[1]
    return None


def attach_shared(name: str, shape: tuple, dtype: str, strides: tuple):
    """The array of another process's block ``name`` (for unpickling a shared tensor), mapped, not copied."""
    try:
        block = shared_memory.SharedMemory(name=name, track=False)  # Python >= 3.13: the maker owns the block
    except TypeError:
        # older Pythons register an attached block with the resource tracker too; processes made by
        # multiprocessing share their parent's tracker, which keeps one entry per name, so the maker's
        # unlink is still the one that ends it
        block = shared_memory.SharedMemory(name=name)
    xp = array_module(0.0)  # host memory: the CPU's array module
    array = xp.ndarray(shape, dtype=dtype, buffer=block.buf, strides=strides)
    _adopt(array, block, owner=False)
    return array


def _rebuild_shared(cls, name, shape, dtype, strides, requires_grad):
    tensor = cls.__new__(cls)
    Tensor.__init__(tensor, attach_shared(name, shape, dtype, strides), requires_grad=requires_grad)
    return tensor


def reduce_for_processes(tensor: Tensor):
    """How multiprocessing pickles a tensor: a shared one as its block's name (the memory stays shared), any
    other as a copy (its ordinary pickle).  Files written by ``pickle`` or ``taugrad.save`` always hold values."""
    data = tensor._data
    block = shared_block(data)
    if block is None:
        return tensor.__reduce_ex__(4)
    requires_grad = tensor._requires_grad and tensor._rule is None
    return _rebuild_shared, (type(tensor), block.name, tuple(data.shape), data.dtype.str, tuple(data.strides),
                             requires_grad)


@register("share_memory_", methods=("share_memory_",))
def share_memory_(x: Tensor) -> Tensor:
    """Move x's array into shared memory (values, shape and dtype kept); returns x.  No-op on CUDA or if shared."""
    data = x._data
    if shared_block(data) is not None or device_of(data).type != "cpu":
        return x
    xp = array_module(data)
    block = shared_memory.SharedMemory(create=True, size=max(int(data.nbytes), 1))
    array = xp.ndarray(data.shape, dtype=data.dtype, buffer=block.buf)
    array[...] = data
    _adopt(array, block, owner=True)
    x._data = array
    ForkingPickler.register(type(x), reduce_for_processes)  # Tensor, Parameter...: pickled by exact type
    return x


@register("is_shared", methods=("is_shared",))
def is_shared(x: Tensor) -> bool:
    """True when x's array is in shared memory (after ``share_memory_()``, or as received from another process)."""
    return shared_block(x._data) is not None

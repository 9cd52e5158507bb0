"""Parameters side by side in one buffer on a device, so an optimizer step is a few operations, not a few per parameter.

An optimizer step updates every parameter of a model.  On a GPU each array
operation is a kernel launched from Python (tens of microseconds of host
time), and a model has many small parameters (the lecture's GPT: 94), so a
step run parameter by parameter is mostly launch overhead.  PyTorch launches
one "multi-tensor" kernel over all of them.  taugrad gets the same effect
with the array API alone: when :meth:`Module.to` moves parameters onto a
device it places them in one flat buffer (:func:`pack`), each parameter's
array a view of its slot, and an optimizer whose parameters are
consecutive slots (:func:`span`) updates the one 1-D slice covering them.

Each tensor keeps its identity, shape, dtype, values and memory layout
(row- or column-major: the layout decides how a matrix product rounds, so a
model computes the same numbers before and after); only the arrays
that ``to`` has just made are packed, so no array a user could already hold
stops being the tensor's.  If a tensor's array is later replaced
(``p.data = other``, a dtype change) it is simply no longer in a slot, and
an optimizer goes back to updating parameter by parameter.  NumPy arrays are
never packed: on the CPU a per-parameter update costs no launch, and an
``nn.Linear`` weight keeps the column-major layout BLAS is fastest with.
"""
from __future__ import annotations

import weakref
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from taugrad.tensors.core.backend import array_module, device_of
from taugrad.tensors.core.node import Tensor


class Slot(NamedTuple):
    """Where a packed tensor's array lives: ``buffer[start:stop]``, seen as ``view``.

    ``reversed``: the view is column-major, ``buffer[start:stop]`` holding its
    transpose's elements in row-major order.
    """

    buffer: object
    start: int
    stop: int
    view: object
    reversed: bool


#: id(packed tensor) -> (a weak reference to it, its slot).  Keyed by id, not by the tensor: a
#: WeakKeyDictionary compares keys with ==, which is elementwise for tensors.
_SLOTS: Dict[int, Tuple[weakref.ref, Slot]] = {}


def _forget(key: int) -> Callable[[weakref.ref], None]:
    """The callback that drops a tensor's entry when the tensor is collected."""
    def drop(_ref: weakref.ref) -> None:
        _SLOTS.pop(key, None)
    return drop


def slot_of(t: object) -> Optional[Slot]:
    """The slot of a packed tensor, or None."""
    entry = _SLOTS.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def pack(tensors: Sequence[Tensor]) -> None:
    """Move the device arrays of ``tensors`` into one buffer per (array type, device, dtype), in order.

    Each tensor's array becomes a view of ``buffer[start:stop]`` in the
    array's own layout, holding the same values.  NumPy arrays, and arrays
    neither row- nor column-major, are left as they are.  The caller passes
    only arrays it has just made (nobody else can hold them).
    """
    groups: dict = {}
    for t in tensors:
        array = t._data
        if isinstance(array, np.ndarray) or not (array.flags.c_contiguous or array.flags.f_contiguous):
            continue
        key = (type(array), str(device_of(array)), array.dtype)
        groups.setdefault(key, []).append(t)
    for members in groups.values():
        _pack_group(members)


def _pack_group(members: List[Tensor]) -> None:
    """One buffer for ``members`` (arrays of one backend, device and dtype), each a view of its slot."""
    first = members[0]._data
    total = sum(t._data.size for t in members)
    buffer = array_module(first).empty(total, dtype=first.dtype)  # allocated on the arrays' device
    start = 0
    for t in members:
        array = t._data
        stop = start + array.size
        reverse = not array.flags.c_contiguous
        view = _view(buffer[start:stop], array.shape, reverse)
        view[...] = array
        t._data = view
        _SLOTS[id(t)] = (weakref.ref(t, _forget(id(t))), Slot(buffer, start, stop, view, reverse))
        start = stop


def _view(flat, shape: tuple, reverse: bool):
    """``flat`` seen with ``shape``: row-major, or column-major when ``reverse``."""
    return flat.reshape(shape[::-1]).T if reverse else flat.reshape(shape)


class Span:
    """Consecutive slots of one buffer: ``whole`` is the 1-D slice holding them all.

    An elementwise operation on ``whole`` is that operation on every packed
    array.  Arrays shaped like the packed ones (gradients, optimizer state)
    are laid out to match with :meth:`flatten` and :meth:`views`.
    """

    def __init__(self, whole, slots: List[Slot]) -> None:
        self.whole = whole
        self.slots = slots

    def flatten(self, arrays: Sequence[object]) -> list:
        """``arrays`` (shaped like the slots' views) as 1-D arrays in the slots' element order."""
        return [a.T.reshape(-1) if slot.reversed else a.reshape(-1) for a, slot in zip(arrays, self.slots)]

    def views(self, flat) -> list:
        """Views of the 1-D array ``flat`` (laid out like ``whole``), one per slot, shaped and laid out like it."""
        base = self.slots[0].start
        return [_view(flat[slot.start - base:slot.stop - base], slot.view.shape, slot.reversed)
                for slot in self.slots]


def gathered(arrays: Sequence[object]) -> Optional[Span]:
    """A span over a fresh 1-D copy of ``arrays`` (one backend, device and dtype), or None if they differ.

    Each array's slot keeps its layout (a column-major array's elements are
    copied in its own order), so the copy reads memory in order.  The copy is
    not the arrays' storage: what is written into it must be copied back
    (``array[...] = slot.view``).
    """
    if not arrays:
        return None
    first = arrays[0]
    kind, dtype = type(first), first.dtype
    if any(type(a) is not kind or a.dtype != dtype for a in arrays):
        return None
    if not isinstance(first, np.ndarray) and len({str(device_of(a)) for a in arrays}) != 1:
        return None
    reverse = [not a.flags.c_contiguous and a.flags.f_contiguous for a in arrays]
    whole = array_module(first).concatenate([a.T.reshape(-1) if r else a.reshape(-1)
                                             for a, r in zip(arrays, reverse)])
    slots, start = [], 0
    for a, r in zip(arrays, reverse):
        stop = start + a.size
        slots.append(Slot(whole, start, stop, _view(whole[start:stop], a.shape, r), r))
        start = stop
    return Span(whole, slots)


def span(tensors: Sequence[object], arrays: Sequence[object]) -> Optional[Span]:
    """The span of ``tensors``' slots, or None.

    ``arrays[i]`` is the array of ``tensors[i]``.  A span exists only if each
    array is still its tensor's packed view and the slots follow one another
    in the same buffer.
    """
    if not tensors or isinstance(arrays[0], np.ndarray):
        return None
    slots = []
    for t, array in zip(tensors, arrays):
        slot = slot_of(t)
        if slot is None or slot.view is not array:
            return None
        if slots and (slot.buffer is not slots[-1].buffer or slot.start != slots[-1].stop):
            return None
        slots.append(slot)
    return Span(slots[0].buffer[slots[0].start:slots[-1].stop], slots)

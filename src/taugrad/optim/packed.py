"""An optimizer step over a whole parameter group at once, when its parameters lie side by side in one device buffer.

:meth:`Module.to` places a model's parameters on a device in one flat
buffer (:mod:`taugrad.tensors.core.flat_storage`).  An optimizer whose update rule
is elementwise (every built-in one: each element of ``p`` is updated from the
same elements of ``p``, its gradient and its state) can then run that rule
once, on the 1-D slice holding the group, with the gradients gathered into
one array: a dozen kernel launches per step instead of a dozen per
parameter (PyTorch's multi-tensor "foreach" kernels do the same).  The
numbers are the per-parameter ones: the same operations on the same
elements.  An optimizer with a long rule (Adam: a dozen operations) also
gathers unpacked parameters (on the CPU, or built with ``device=``) into one
array, steps it and copies each parameter back: two copies instead of a
dozen calls per parameter.

The per-parameter state stays PyTorch's layout: ``optimizer.state[p]``
holds, for each state array, a tensor over a view of the group's flat state
array, shaped like ``p``, and for each scalar (the step count) a 0-d tensor
over one element of a host array holding that scalar for every parameter.  Anything else (a
parameter without gradient, states that disagree after a
``load_state_dict``, a subclass with its own rule) takes the per-parameter
path, which reads and writes those same entries.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from taugrad.tensors.core.backend import array_module, is_array
from taugrad.tensors.core.dtypes import DEFAULT_FLOAT
from taugrad.tensors.core.flat_storage import Span, gathered, span
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.inplace import bump_version
from taugrad.optim.state import SCALAR_STATE, state_tensor


#: Above this many elements per parameter on average, a group is stepped parameter by parameter.
#: Gathering the gradients into one array reads and writes each element once more (8 bytes
#: for float32: about 2 us per million elements at an H200's 4.8 TB/s, NVIDIA's figure), and
#: what it saves is two launches per parameter (host time, tens of us each through CuPy's
#: Python layer).  Large parameters (a 4096x4096 weight: 16.8 million elements) keep a GPU
#: busy long enough to hide their launches, so for them the gathering is the only cost left.
LARGEST_AVERAGE_SIZE = 1 << 20


def step_packed(optimizer: Any, group: Dict[str, Any], arrays: Sequence[Any], grads: Sequence[Any]) -> bool:
    """Run ``optimizer._update`` once for all of ``group``; False (nothing done) where it cannot.

    ``arrays`` and ``grads`` are the parameters' arrays and gradient arrays
    (None for no gradient), in the group's order.  Packed parameters are
    updated where they lie.  Others are gathered into one array and copied
    back, for an optimizer that asks for it (``_gather_unpacked``: a rule of
    a dozen operations, on many small parameters, costs more in calls than
    the two copies).
    """
    params = group["params"]
    if not params or not _declared_elementwise(optimizer) or any(g is None for g in grads):
        return False
    cache = optimizer.__dict__.setdefault("_packed_states", {})  # on the optimizer: state_dict() stays torch's
    cached = cache.get(id(params))  # the params list: ``group`` may be a per-step copy (tensor lr)
    packed = span(params, arrays)
    copied = packed is None
    if copied:
        if not getattr(optimizer, "_gather_unpacked", False):
            return False
        packed = _gathered_again(cached, arrays) or gathered(arrays)
        if packed is None or packed.whole.dtype.kind not in "fc":
            return False
    whole = packed.whole
    if not copied and whole.size > LARGEST_AVERAGE_SIZE * len(params):
        return False
    kind, dtype = type(whole), whole.dtype
    if any(type(g) is not kind or g.dtype != dtype for g in grads):
        return False
    ids = [id(p) for p in params]
    states = [optimizer.state[p] for p in params]
    flat_state = _flat_state(cached, ids, packed, states)
    if flat_state is None:
        return False
    flat_grad = array_module(whole).concatenate(packed.flatten(grads))
    optimizer._update(whole, flat_grad, flat_state, group)
    for key, value in flat_state.items():
        if key in SCALAR_STATE and isinstance(value, (int, float)):
            flat_state[key] = DEFAULT_FLOAT[0].type(value).item()  # held as the per-parameter tensors hold it
    if copied:
        for array, slot in zip(arrays, packed.slots):
            array[...] = slot.view
    cache[id(params)] = _share(flat_state, cached, ids, packed, states, list(arrays) if copied else None)
    for p in params:
        if isinstance(p, Tensor):
            bump_version(p)  # a graph recorded before the step can no longer be backpropagated
    return True


def _declared_elementwise(optimizer: Any) -> bool:
    """Whether the class that defines ``optimizer``'s ``_update`` declares its rule elementwise.

    A user's subclass that overrides ``_update`` is not assumed elementwise.
    """
    for cls in type(optimizer).__mro__:
        if "_update" in cls.__dict__:
            return bool(cls.__dict__.get("_elementwise_update", False))
    return False


class _Cached:
    """A group's flat state as last shared out: for whom, over which slots, and the per-parameter tensors.

    ``arrays``: for a gathered group, the parameters' arrays it was gathered
    from (held, so that the same arrays next step can be gathered into the
    same buffer: the slots, and so the views, stay valid).  ``views``: for
    each state key, (the flat array, or for a scalar the host array of its
    per-parameter copies; the per-parameter tensors over it).
    """

    def __init__(self, ids: List[int], packed: Span, arrays: Optional[list], flat_state: Dict[str, Any],
                 views: Dict[str, tuple]) -> None:
        self.ids, self.span, self.arrays, self.flat_state = ids, packed, arrays, flat_state
        self.views = views


def _gathered_again(cached: Optional[_Cached], arrays: Sequence[Any]) -> Optional[Span]:
    """The cached gathered span refilled from ``arrays``, if they are the very arrays it was gathered from."""
    if cached is None or cached.arrays is None or len(cached.arrays) != len(arrays):
        return None
    for held, array in zip(cached.arrays, arrays):
        if held is not array:
            return None
    packed = cached.span
    array_module(packed.whole).concatenate(packed.flatten(arrays), out=packed.whole)
    return packed


def _same_slots(cached: _Cached, packed: Span) -> bool:
    """Whether ``packed`` lays each parameter out where, and in the order, the cached views assume."""
    if cached.span is packed:
        return True
    mine, theirs = cached.span.slots, packed.slots
    if len(mine) != len(theirs):
        return False
    for a, b in zip(mine, theirs):  # a packed tensor's Slot is one object for its lifetime
        if a is not b:
            return False
    return True


def _flat_state(cached: Optional[_Cached], ids: List[int], packed: Span, states) -> Optional[Dict[str, Any]]:
    """The group's flat state: the cached one if the per-parameter states still are its views, else rebuilt.

    None when the per-parameter states cannot be one flat state (different
    keys or step counts, arrays of another shape or backend).
    """
    if cached is not None and cached.ids == ids and _same_slots(cached, packed) and _still_shared(cached, states):
        return cached.flat_state
    if not any(states):
        return {}  # the first step: the rule makes its state, flat
    keys = set(states[0])
    if any(set(s) != keys for s in states):
        return None
    whole = packed.whole
    xp = array_module(whole)
    flat: Dict[str, Any] = {}
    for key in keys:
        values = [_plain(s[key], key) for s in states]
        if all(is_array(v) for v in values):
            if any(type(v) is not type(whole) or v.shape != slot.view.shape for v, slot in zip(values, packed.slots)):
                return None
            flat[key] = xp.concatenate(packed.flatten(values))
        elif any(is_array(v) for v in values) or any(v != values[0] for v in values):
            return None
        else:
            flat[key] = values[0]
    return flat


def _plain(value: Any, key: str) -> Any:
    """A state entry as the rule reads it: a tensor's array, a scalar entry's number."""
    if isinstance(value, Tensor):
        data = value._data
        return data.item() if key in SCALAR_STATE and data.ndim == 0 else data
    return value


def _still_shared(cached: _Cached, states) -> bool:
    """Whether every per-parameter state holds exactly the cached tensors over the cached arrays, unchanged."""
    flat = cached.flat_state
    size = len(flat)
    for state in states:
        if len(state) != size:
            return False
    for key, value in flat.items():
        shared = cached.views.get(key)
        if shared is None:
            return False
        source, tensors, arrays = shared
        if is_array(value):
            if source is not value:
                return False
        elif not (source == value).all():  # a step count changed in place
            return False
        for state, tensor, array in zip(states, tensors, arrays):
            if state.get(key) is not tensor or tensor._data is not array:
                return False
    return True


def _share(flat_state, cached: Optional[_Cached], ids: List[int], packed: Span, states,
           arrays: Optional[list]) -> _Cached:
    """Hand each parameter its part of the flat state: tensors over views of the flat arrays, and over
    one element each of a host array for the scalars."""
    views: Dict[str, tuple] = {}
    reuse = cached is not None and _same_slots(cached, packed)
    for key, value in flat_state.items():
        shared = cached.views.get(key) if reuse else None
        if is_array(value) and value.shape == packed.whole.shape:
            if shared is None or shared[0] is not value:  # new, moved, or the rule replaced it: new views
                parts = packed.views(value)
                shared = (value, [state_tensor(v) for v in parts], parts)
        elif isinstance(value, (int, float)):
            if shared is None or is_array(shared[0]) is False or shared[0].shape != (len(states),):
                host = np.full(len(states), value, dtype=DEFAULT_FLOAT[0])
                parts = [host[i, ...] for i in range(len(states))]  # 0-d views: each its own element
                shared = (host, [state_tensor(v) for v in parts], parts)
            else:
                shared[0][...] = value
        else:  # anything else a rule keeps: the same object for every parameter, not shared out
            for state in states:
                state[key] = value
            continue
        views[key] = shared
        for state, tensor in zip(states, shared[1]):
            state[key] = tensor
    return _Cached(ids, packed, arrays, flat_state, views)

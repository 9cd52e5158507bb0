"""Gradient hooks and retained gradients (``Tensor.register_hook``, ``Tensor.retain_grad``).

A Tensor's ``_extras`` slot is ``None`` for almost every tensor.  When a hook is
registered, ``retain_grad()`` is called or anomaly detection records where the
op was created, it holds a :class:`~taugrad.tensors.core.node.NodeExtras`.  The
backward pass looks at that slot once per node, so tensors without extras
cost one attribute read.

Semantics follow PyTorch:

* ``t.register_hook(fn)``: during backward, ``fn(grad)`` is called with the
  gradient of the loss with respect to ``t`` (a Tensor of ``t``'s shape) when it
  is complete.  If ``fn`` returns something other than None, that becomes the
  gradient (for an interior tensor it flows on to the parents; for a leaf it is
  what is accumulated into ``.grad``).  Hooks run in registration order, each
  seeing the previous one's result.
* ``t.retain_grad()``: an interior tensor keeps its gradient in ``.grad``
  (accumulated across backward calls, after all of its hooks ran).  No-op on a
  leaf.
* Both need ``t.requires_grad``; ``register_hook`` returns a
  :class:`RemovableHandle` whose ``remove()`` unregisters the hook.
"""
from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable

from taugrad.tensors.core.backend import array_module, device_of, same_backend, to_device
from taugrad.tensors.core.node import NodeExtras, Tensor, constant, to_array

__all__ = ["RemovableHandle", "register_hook", "retain_grad", "run_hooks"]

_next_id = itertools.count()


class RemovableHandle:
    """Returned by ``register_hook`` / ``register_forward_hook``; ``remove()`` unregisters.

    Holds only a weak reference to the registry, so a handle kept by the user
    never keeps a tensor or module (or its graph) alive.  Usable as a context
    manager: the hook is removed at the end of the ``with`` block.
    """

    __slots__ = ("_registry", "id")

    def __init__(self, owner: Any, registry_name: str) -> None:
        self.id = next(_next_id)
        self._registry = (weakref.ref(owner), registry_name)

    def remove(self) -> None:
        owner_ref, name = self._registry
        owner = owner_ref()
        if owner is not None:
            registry = getattr(owner, name, None)
            if registry is not None:
                registry.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()


def _extras(tensor: Any) -> NodeExtras:
    extras = tensor._extras
    if extras is None:
        extras = tensor._extras = NodeExtras()
    return extras


def register_hook(tensor: Any, fn: Callable) -> RemovableHandle:
    """Call ``fn(grad)`` when this tensor's gradient is computed; a non-None result replaces it.

    Returns a handle; ``handle.remove()`` unregisters the hook.
    """
    if not callable(fn):
        raise TypeError(f"register_hook expects a callable fn(grad), got {type(fn).__name__}")
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that does not require grad")
    extras = _extras(tensor)
    handle = RemovableHandle(extras, "hooks")
    extras.hooks[handle.id] = fn
    return handle


def retain_grad(tensor: Any) -> None:
    """Keep this interior tensor's gradient in ``.grad`` after backward (no-op for a leaf)."""
    if not tensor.requires_grad:
        raise RuntimeError("retain_grad() on a tensor that does not require grad")
    if tensor._rule is None:  # a leaf gets .grad anyway
        return
    _extras(tensor).retains_grad = True


def retains_grad(tensor: Any) -> bool:
    """True for an interior tensor on which ``retain_grad()`` was called."""
    extras = tensor._extras
    return extras is not None and extras.retains_grad


def _hook_name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def run_hooks(extras: NodeExtras, g: Any, tensor: Any, create_graph: bool) -> Any:
    """The gradient of ``tensor`` after its hooks, and store it if it retains grad.

    ``g`` is an array in a first-order pass, a Tensor with ``create_graph``;
    the result is of the same kind.
    """

    if extras.hooks:
        for fn in list(extras.hooks.values()):
            result = fn(g if create_graph else constant(g))
            if result is None:
                continue
            if isinstance(result, Tensor):
                new = result
            else:
                try:
                    new = constant(to_array(result))
                except TypeError:
                    raise TypeError(
                        f"hook {_hook_name(fn)} returned {type(result).__name__}; return a Tensor, an array or None"
                    ) from None
            if not same_backend(new._data, tensor._data):  # a host array for a device tensor: moved there
                new = constant(to_device(new._data, device_of(tensor._data)))
            if new.shape != tensor.shape:
                raise RuntimeError(
                    f"hook {_hook_name(fn)} returned a gradient of shape {tuple(new.shape)} for a tensor of "
                    f"shape {tuple(tensor.shape)}"
                )
            if new.dtype != tensor.dtype:
                new = new.astype(tensor.dtype) if create_graph else constant(new._data.astype(tensor.dtype))
            g = new if create_graph else new._data
    if extras.retains_grad and tensor._rule is not None:
        if create_graph:
            tensor._grad = g if tensor._grad is None else tensor._grad + g
        else:
            kept = array_module(g).array(g, copy=True)  # the pass may hand ``g`` on to a parent unchanged
            tensor._grad = constant(kept) if tensor._grad is None else constant(tensor._grad._data + kept)
    return g

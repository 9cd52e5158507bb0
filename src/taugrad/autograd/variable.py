"""``Variable``: PyTorch's pre-0.4 wrapper, kept for old scripts as torch keeps it.

Since PyTorch 0.4 every tensor is a Variable: ``Variable(t)`` returns a new
tensor sharing ``t``'s memory, detached from its graph, with
``requires_grad`` as asked (False by default), and ``isinstance(t, Variable)``
is True for every tensor.  ``volatile=`` has no effect (torch warns the same).
"""
from __future__ import annotations

import warnings
from typing import Any

from taugrad.tensors.core.node import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: ``data.detach()`` with ``requires_grad`` set."""

    def __new__(cls, data: Any, requires_grad: bool = False, volatile: bool = False) -> Tensor:  # type: ignore[misc]
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        out.requires_grad_(bool(requires_grad))
        return out

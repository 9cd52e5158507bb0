"""Binds the registered ops to ``Tensor`` as methods, operators and properties.

Each op says in its own definition which ``Tensor`` attributes it provides
(``@register(name, methods=..., properties=...)`` in :mod:`taugrad.tensors.core.rule`);
this module imports every op family, so that all of them are registered, and
sets those attributes.  ``x.exp()`` and ``taugrad.exp(x)`` then run the same
function with no extra call layer.  The autograd methods that are not ops
(``backward``, hooks) are bound here too.
"""
from __future__ import annotations

from taugrad.tensors import engine, hooks
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops import conv, elementwise, index, inplace, losses, matmul, norm, pool, reduce, shape  # noqa: F401  (registers)
from taugrad.tensors.ops import dropout, explog, softmax, trig  # noqa: F401  (registers)
from taugrad.tensors.ops import conversion, creation, gather, random  # noqa: F401  (registers)
from taugrad.tensors.ops import (  # noqa: F401  (registers)
    compare, einsum, elementary, hist, linalg, masking, rearrange, scan, sharing, sorting,
)
from taugrad.tensors.core.rule import OPS

__all__ = ["Tensor"]


def bind_ops() -> None:
    """Set every registered op's methods and properties on ``Tensor``."""
    for entry in OPS.values():
        for name in entry.methods:
            setattr(Tensor, name, entry.forward)
        for name in entry.properties:
            setattr(Tensor, name, property(entry.forward))


bind_ops()
Tensor.backward = engine.backward
Tensor.register_hook = hooks.register_hook
Tensor.retain_grad = hooks.retain_grad
Tensor.retains_grad = property(hooks.retains_grad)

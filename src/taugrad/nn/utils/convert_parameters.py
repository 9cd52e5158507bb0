"""Flattening parameters into one vector and back, as ``torch.nn.utils.convert_parameters``."""
from __future__ import annotations

from typing import Iterable

from taugrad.tensors.core.backend import device_of, to_device
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.inplace import bump_version
from taugrad.tensors.ops.shape import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    r"""All parameters flattened and joined into one 1-d Tensor.

    :math:`v = [\mathrm{vec}(p_1); \dots; \mathrm{vec}(p_n)]`.

    Built as PyTorch builds it, from each parameter's ``view(-1)`` joined by
    ``cat``, so it is part of the graph: a penalty on ``v`` gives each
    parameter its slice of the gradient.  ``parameters`` is iterated once (a
    generator such as ``model.parameters()`` works).
    """
    flat = [p.view(-1) for p in parameters]
    if not flat:
        raise ValueError("parameters_to_vector: expected a non-empty iterable of tensors, got none")
    return cat(flat)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-d ``vec`` into the parameters, in place (the inverse of the above).

    ``parameters`` is iterated once.  As in PyTorch, a ``vec`` longer than the
    parameters need is fine (the rest is unused); one that is too short raises.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, but got: {type(vec).__name__}")
    data = vec._data
    if data.ndim != 1:
        raise TypeError(f"vector_to_parameters: expected a 1-d vector, got shape {tuple(data.shape)}")
    offset = 0
    for p in parameters:
        n = p._data.size
        if offset + n > data.size:
            raise ValueError(f"vector_to_parameters: the vector has {data.size} elements, too few for the "
                             f"parameters (a parameter of shape {tuple(p._data.shape)} would end at {offset + n})")
        piece = data[offset:offset + n].reshape(p._data.shape)
        p._data[...] = to_device(piece, device_of(p._data))
        bump_version(p)
        offset += n

"""``taugrad.nn.utils``: gradient clipping and flattening parameters into one vector (as ``torch.nn.utils``)."""
from __future__ import annotations

import math
from typing import Any, Iterable, Union

import numpy as np

from taugrad.tensors.core.backend import array_module, device_of, is_array, to_device
from taugrad.tensors.core.node import Tensor, as_array, constant
from taugrad.tensors.ops.inplace import bump_version

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def _params(parameters: Union[Tensor, Iterable[Tensor]]) -> list:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _grad_array(p: Tensor):
    grad = p.grad
    return grad._data if isinstance(grad, Tensor) else as_array(grad)


def _beside(x, array):
    """The array ``x`` on ``array``'s device (itself when it is there already: no copy, no sync)."""
    if type(array) is np.ndarray and not (is_array(x) and type(x) is not np.ndarray):
        return x  # NumPy arrays and scalars stay
    return to_device(x if is_array(x) else np.asarray(x), device_of(array))


def clip_grad_norm_(parameters: Union[Tensor, Iterable[Tensor]], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    r"""Scale all gradients together so that their joint ``norm_type``-norm is at most ``max_norm``.

    The total norm is the norm of the per-parameter norms (``max`` of the
    absolute values for ``norm_type=inf``); each gradient is multiplied in
    place by ``min(1, max_norm / (total + 1e-6))``.  Returns the total norm
    *before* clipping, as a 0-d Tensor (float32 unless the gradients are float64:
    PyTorch's dtype of the first gradient) on the first gradient's device.
    Parameters without a gradient are skipped.  A nan or inf total raises with
    ``error_if_nonfinite=True`` (which reads the total back from the device, as
    in PyTorch; otherwise nothing is).
    """
    grads = [_grad_array(p) for p in _params(parameters) if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return Tensor(np.asarray(0.0, dtype=np.float32))
    first = grads[0]
    dtype = first.dtype
    xp = array_module(first)
    if norm_type == math.inf:
        norms = [abs(g).max() if g.size else array_module(g).zeros((), dtype) for g in grads]
        total = xp.stack([_beside(n, first) for n in norms]).astype(dtype, copy=False).max()
    else:
        # the root through the power ufunc: a NumPy scalar's ** would take another path
        # than a 0-d device array's (sqrt), one ulp apart
        norms = [array_module(g).power((abs(g) ** norm_type).sum(), 1.0 / norm_type) for g in grads]
        stacked = xp.stack([_beside(n, first) for n in norms]).astype(dtype, copy=False)
        total = xp.power((stacked ** norm_type).sum(), 1.0 / norm_type)
    total = xp.asarray(total, dtype=dtype)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is "
                           f"{float(total)}; set error_if_nonfinite=False to clip anyway")
    coefficient = xp.minimum(dtype.type(max_norm) / (total + dtype.type(1e-6)), 1.0)
    for p in _params(parameters):
        if p.grad is not None:
            array = _grad_array(p)
            array *= _beside(coefficient, array).astype(array.dtype)
    return constant(total)


def clip_grad_value_(parameters: Union[Tensor, Iterable[Tensor]], clip_value: float, foreach: Any = None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    for p in _params(parameters):
        if p.grad is not None:
            array = _grad_array(p)
            array_module(array).clip(array, -clip_value, clip_value, out=array)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and joined into one 1-d Tensor (a copy, outside the graph)."""
    arrays = [p._data.reshape(-1) for p in parameters]
    if not arrays:
        raise ValueError("parameters_to_vector: no parameters")
    return constant(array_module(arrays[0]).concatenate(arrays))


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-d ``vec`` into the parameters, in place (the inverse of the above)."""
    data = vec._data if isinstance(vec, Tensor) else as_array(vec)
    if data.ndim != 1:
        raise TypeError(f"vector_to_parameters: expected a 1-d vector, got shape {data.shape}")
    params = list(parameters)
    needed = sum(p._data.size for p in params)
    if data.size != needed:
        raise ValueError(f"vector_to_parameters: the vector has {data.size} elements, the parameters {needed}")
    offset = 0
    for p in params:
        n = p._data.size
        p._data[...] = _beside(data[offset:offset + n].reshape(p._data.shape), p._data)
        bump_version(p)
        offset += n

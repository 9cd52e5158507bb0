"""``taugrad.nn.utils``: gradient clipping and flattening parameters into one vector (as ``torch.nn.utils``)."""
from __future__ import annotations

import math
from typing import Any, Iterable, Union

import numpy as np

from taugrad.tensors.node import Tensor
from taugrad.tensors.ops.inplace import bump_version

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def _params(parameters: Union[Tensor, Iterable[Tensor]]) -> list:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _grad_array(p: Tensor) -> np.ndarray:
    grad = p.grad
    return grad._data if isinstance(grad, Tensor) else np.asarray(grad)


def clip_grad_norm_(parameters: Union[Tensor, Iterable[Tensor]], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    r"""Scale all gradients together so that their joint ``norm_type``-norm is at most ``max_norm``.

    The total norm is the norm of the per-parameter norms (``max`` of the
    absolute values for ``norm_type=inf``); each gradient is multiplied in
    place by ``min(1, max_norm / (total + 1e-6))``.  Returns the total norm
    *before* clipping, as a 0-d Tensor (float32 unless the gradients are float64:
    PyTorch's dtype of the first gradient).  Parameters without a gradient are
    skipped.  A nan or inf total raises with ``error_if_nonfinite=True``.
    """
    grads = [_grad_array(p) for p in _params(parameters) if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return Tensor(np.asarray(0.0, dtype=np.float32))
    dtype = grads[0].dtype
    if norm_type == math.inf:
        norms = [np.max(np.abs(g)) if g.size else np.asarray(0, dtype) for g in grads]
        total = np.max(np.asarray(norms, dtype=dtype))
    else:
        norms = [np.sum(np.abs(g) ** norm_type) ** (1.0 / norm_type) for g in grads]
        total = np.sum(np.asarray(norms, dtype=dtype) ** norm_type) ** (1.0 / norm_type)
    total = np.asarray(total, dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is "
                           f"{float(total)}; set error_if_nonfinite=False to clip anyway")
    coefficient = np.minimum(np.asarray(max_norm, dtype=dtype) / (total + np.asarray(1e-6, dtype=dtype)), 1.0)
    for p in _params(parameters):
        if p.grad is not None:
            array = _grad_array(p)
            array *= coefficient.astype(array.dtype)
    return Tensor(total)


def clip_grad_value_(parameters: Union[Tensor, Iterable[Tensor]], clip_value: float, foreach: Any = None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    for p in _params(parameters):
        if p.grad is not None:
            array = _grad_array(p)
            np.clip(array, -clip_value, clip_value, out=array)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and joined into one 1-d Tensor (a copy, outside the graph)."""
    arrays = [p._data.reshape(-1) for p in parameters]
    if not arrays:
        raise ValueError("parameters_to_vector: no parameters")
    return Tensor(np.concatenate(arrays))


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-d ``vec`` into the parameters, in place (the inverse of the above)."""
    data = vec._data if isinstance(vec, Tensor) else np.asarray(vec)
    if data.ndim != 1:
        raise TypeError(f"vector_to_parameters: expected a 1-d vector, got shape {data.shape}")
    params = list(parameters)
    needed = sum(p._data.size for p in params)
    if data.size != needed:
        raise ValueError(f"vector_to_parameters: the vector has {data.size} elements, the parameters {needed}")
    offset = 0
    for p in params:
        n = p._data.size
        p._data[...] = data[offset:offset + n].reshape(p._data.shape)
        bump_version(p)
        offset += n

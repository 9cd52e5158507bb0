"""Gradient clipping, as ``torch.nn.utils.clip_grad``.

Every function takes its ``parameters`` argument *once*: a generator (what
``model.parameters()`` returns), a ``filter``, a list, a tuple or a single
Tensor.  Iterating a generator twice would find it empty the second time and
clip nothing, so the argument is turned into a list before anything else.
"""
from __future__ import annotations

import math
import types
import warnings
from typing import Any, Iterable, Union

import numpy as np

from taugrad.tensors.core.backend import array_module, device_of, is_array, to_device
from taugrad.tensors.core.node import Tensor, as_array, constant

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]

Tensors = Union[Tensor, Iterable[Tensor]]


def tensor_list(tensors: Tensors, op: str = "", warn_empty: bool = False) -> list:
    """``tensors`` as a list, iterated once: ``[t]`` for a single Tensor.

    ``warn_empty``: warn, as PyTorch does, when an empty *generator* was given
    (usually ``model.parameters()`` consumed earlier), since nothing will happen.
    """
    if isinstance(tensors, Tensor):
        return [tensors]
    generator = isinstance(tensors, types.GeneratorType)
    items = list(tensors)
    if warn_empty and generator and not items:
        warnings.warn(f"{op}: `parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    return items


def _grad_array(p: Tensor):
    grad = p.grad
    return grad._data if isinstance(grad, Tensor) else as_array(grad)


def _beside(x, array):
    """The array ``x`` on ``array``'s device (itself when it is there already: no copy, no sync)."""
    if type(array) is np.ndarray and not (is_array(x) and type(x) is not np.ndarray):
        return x  # NumPy arrays and scalars stay
    return to_device(x if is_array(x) else np.asarray(x), device_of(array))


def _total_norm(arrays: list, norm_type: float, error_if_nonfinite: bool):
    """The ``norm_type``-norm of the per-array norms (max of |x| for inf), as a 0-d array of the first's dtype."""
    first = arrays[0]
    dtype = first.dtype
    xp = array_module(first)
    if norm_type == math.inf:
        norms = [abs(g).max() if g.size else array_module(g).zeros((), dtype) for g in arrays]
        total = xp.stack([_beside(n, first) for n in norms]).astype(dtype, copy=False).max()
    else:
        # the root through the power ufunc: a NumPy scalar's ** would take another path
        # than a 0-d device array's (sqrt), one ulp apart
        norms = [array_module(g).power((abs(g) ** norm_type).sum(), 1.0 / norm_type) for g in arrays]
        stacked = xp.stack([_beside(n, first) for n in norms]).astype(dtype, copy=False)
        total = xp.power((stacked ** norm_type).sum(), 1.0 / norm_type)
    total = xp.asarray(total, dtype=dtype)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is "
                           f"{float(total)}; set error_if_nonfinite=False to clip anyway")
    return total


def get_total_norm(tensors: Tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: Any = None) -> Tensor:
    r"""The norm of all ``tensors`` together, as if they were joined into one vector.

    .. math:: \|(t_1, \dots, t_n)\|_p = \Big(\sum_i \|t_i\|_p^p\Big)^{1/p}, \qquad
              \|\cdot\|_\infty = \max_i \max |t_i|

    A 0-d Tensor outside the graph (0.0, float32, for no tensors).  A nan or
    inf total raises with ``error_if_nonfinite=True``.
    """
    arrays = [t._data if isinstance(t, Tensor) else as_array(t) for t in tensor_list(tensors)]
    if not arrays:
        return Tensor(np.asarray(0.0, dtype=np.float32))
    return constant(_total_norm(arrays, float(norm_type), error_if_nonfinite))


def clip_grads_with_norm_(parameters: Tensors, max_norm: float, total_norm: Any, foreach: Any = None) -> None:
    r"""Scale every gradient in place by :math:`\min(1, \text{max\_norm} / (\text{total\_norm} + 10^{-6}))`.

    ``total_norm`` is given (from :func:`get_total_norm`); parameters without a
    gradient are skipped.
    """
    arrays = [_grad_array(p) for p in tensor_list(parameters) if p.grad is not None]
    if not arrays:
        return
    total = total_norm._data if isinstance(total_norm, Tensor) else as_array(total_norm)
    xp = array_module(total)
    dtype = total.dtype if total.dtype.kind == "f" else np.dtype(np.float32)
    coefficient = xp.minimum(dtype.type(float(max_norm)) / (total.astype(dtype) + dtype.type(1e-6)), 1.0)
    for array in arrays:
        array *= _beside(coefficient, array).astype(array.dtype)


def clip_grad_norm_(parameters: Tensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    r"""Scale all gradients together so that their joint ``norm_type``-norm is at most ``max_norm``.

    The total norm :math:`N` is the norm of the per-parameter norms (``max`` of
    the absolute values for ``norm_type=inf``, see :func:`get_total_norm`); each
    gradient is multiplied in place by :math:`\min(1, \text{max\_norm} / (N + 10^{-6}))`.
    Returns :math:`N` *before* clipping, as a 0-d Tensor (float32 unless the
    gradients are float64: PyTorch's dtype of the first gradient) on the first
    gradient's device.  Parameters without a gradient are skipped.  A nan or
    inf total raises with ``error_if_nonfinite=True`` (which reads the total
    back from the device, as in PyTorch; otherwise nothing is).
    """
    params = tensor_list(parameters, "clip_grad_norm_", warn_empty=True)
    grads = [_grad_array(p) for p in params if p.grad is not None]
    if not grads:
        return Tensor(np.asarray(0.0, dtype=np.float32))
    total = _total_norm(grads, float(norm_type), error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return constant(total)


def clip_grad_norm(parameters: Tensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """Deprecated name of :func:`clip_grad_norm_` (warns, as PyTorch)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensors, clip_value: float, foreach: Any = None) -> None:
    r"""Clamp every gradient element into :math:`[-\text{clip\_value}, \text{clip\_value}]`, in place."""
    clip_value = float(clip_value)
    for p in tensor_list(parameters):
        if p.grad is not None:
            array = _grad_array(p)
            array_module(array).clip(array, -clip_value, clip_value, out=array)

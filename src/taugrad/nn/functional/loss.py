"""Losses of ``torch.nn.functional`` composed from registered Tensor ops (the fused ones are in
:mod:`taugrad.tensors.ops.losses`: ``cross_entropy``, ``nll_loss``, ``mse_loss``,
``binary_cross_entropy_with_logits``).

Every loss takes ``reduction`` (``'mean'``, ``'sum'`` or ``'none'``; ``kl_div``
also ``'batchmean'``) and PyTorch's deprecated ``size_average``/``reduce``.
Input and target must have the same shape (``weight`` broadcasts), as PyTorch
requires for these losses apart from a warning it gives instead.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Optional

from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.node import Tensor, constant
from taugrad.tensors.ops import losses as _fused
from taugrad.tensors.ops.elementwise import where
from taugrad.tensors.ops.shape import broadcast_tensors
from taugrad.tensors.ops.losses import legacy_reduction
from taugrad.nn.functional._helpers import input_tensor as _input, pair as _pair, reduce as _reduce

__all__ = [
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
]

_LOG_FLOOR = -100.0  # PyTorch clamps the logs of binary_cross_entropy here, so p = 0 or 1 gives a finite loss


def _broadcast_pair(input: Any, target: Any, op: str):
    """(input, target) of one floating dtype, broadcast to one shape when they differ, with PyTorch's warning.

    The elementwise regression losses (``mse_loss``, ``l1_loss``, ``smooth_l1_loss``,
    ``huber_loss``) broadcast in PyTorch; a (N, 1) prediction against an (N,)
    target becomes (N, N), which is rarely meant, hence the warning.
    """
    x = _input(input, op)
    if x._data.dtype.kind not in "fc":
        raise TypeError(f"{op}: input must be floating, got dtype {x._data.dtype}")
    y = _fused._target_like(target, x, op)
    if y.shape != x.shape:
        warnings.warn(f"Using a target size ({tuple(y.shape)}) that is different to the input size "
                      f"({tuple(x.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=3)
        try:
            x, y = broadcast_tensors(x, y)
        except ValueError:
            raise ValueError(f"{op}: the target size {tuple(y.shape)} must broadcast with the input size "
                             f"{tuple(x.shape)}") from None
    return x, y


def cross_entropy(input: Any, target: Any, weight: Optional[Any] = None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    r"""Cross-entropy of the logits ``input`` against class indices or probabilities ``target``:
    :math:`\ell_n = -\sum_c w_c y_{nc} \log \mathrm{softmax}(x_n)_c` (the fused op
    :func:`taugrad.tensors.ops.losses.cross_entropy`, under PyTorch's argument names)."""
    return _fused.cross_entropy(input, target, weight, size_average, ignore_index, reduce, reduction,
                                label_smoothing)


def nll_loss(input: Any, target: Any, weight: Optional[Any] = None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean") -> Tensor:
    r"""Negative log-likelihood of the log-probabilities ``input`` at the classes ``target``:
    :math:`\ell_n = -w_{y_n} x_{n, y_n}` (the fused op :func:`taugrad.tensors.ops.losses.nll_loss`, under
    PyTorch's argument names)."""
    return _fused.nll_loss(input, target, weight, size_average, ignore_index, reduce, reduction)

def mse_loss(input: Any, target: Any, size_average=None, reduce=None, reduction: str = "mean",
             weight: Optional[Any] = None) -> Tensor:
    r"""Mean squared error :math:`\ell = (x - y)^2`, reduced; a target of another shape is broadcast (with a warning).

    With ``weight`` (the input's shape) each term is :math:`w (x - y)^2` and ``'mean'``
    is :math:`\sum w (x - y)^2 / \sum w`, as PyTorch defines it.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    shape = tuple(_input(input, "mse_loss").shape)
    x, y = _broadcast_pair(input, target, "mse_loss")
    if weight is None:
        return _fused.mse_loss(x, y, reduction)
    w = _fused._target_like(weight, x, "mse_loss")
    if tuple(w.shape) != shape:
        raise ValueError("mse_loss: Weights and input must have the same size.")
    d = x - y
    weighted = d * d * w
    if reduction == "mean":
        return weighted.sum() / w.sum()
    return _reduce(weighted, reduction, "mse_loss")


def l1_loss(input: Any, target: Any, size_average=None, reduce=None, reduction: str = "mean",
            weight: Optional[Any] = None) -> Tensor:
    """``|input - target|``, reduced (gradient 0 where they are equal, as PyTorch).

    With ``weight`` (input's shape) each term is ``w |input - target|`` and ``'mean'`` is
    ``sum(w |d|) / sum(w)``, a weighted mean, as torch defines it.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    x, y = _broadcast_pair(input, target, "l1_loss")
    losses = (x - y).abs()
    if weight is None:
        return _reduce(losses, reduction, "l1_loss")
    return _weighted(losses, weight, x, reduction, "l1_loss")


def _weighted(losses: Tensor, weight: Any, x: Tensor, reduction: str, op: str) -> Tensor:
    """Elementwise weights; ``'mean'`` divides by the sum of the weights rather than the count."""
    w = _fused._target_like(weight, x, op)
    if w.shape != x.shape:
        raise ValueError(f"{op}: weight shape {tuple(w.shape)} must equal the input shape {tuple(x.shape)}")
    weighted = losses * w
    if reduction == "mean":
        return weighted.sum() / w.sum()
    return _reduce(weighted, reduction, op)


def smooth_l1_loss(input: Any, target: Any, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    r"""``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input - target``); ``beta=0`` is L1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    x, y = _broadcast_pair(input, target, "smooth_l1_loss")
    d = x - y
    if beta == 0:
        return _reduce(d.abs(), reduction, "smooth_l1_loss")
    a = d.abs()
    return _reduce(where(a < beta, d * d * (0.5 / beta), a - 0.5 * beta), reduction, "smooth_l1_loss")


def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0,
               weight: Optional[Any] = None) -> Tensor:
    r"""``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``; ``= delta * smooth_l1(beta=delta)``."""
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    x, y = _broadcast_pair(input, target, "huber_loss")
    d = x - y
    a = d.abs()
    losses = where(a < delta, d * d * 0.5, (a - 0.5 * delta) * delta)
    if weight is not None:
        losses = losses * _fused._target_like(weight, x, "huber_loss")
    return _reduce(losses, reduction, "huber_loss")


def binary_cross_entropy(input: Any, target: Any, weight: Optional[Any] = None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    r"""``-w (y log p + (1 - y) log(1 - p))`` for probabilities ``p`` in [0, 1].

    Each log is clamped at -100 as in PyTorch, so ``p = 0`` or ``1`` gives a
    finite loss.  The gradient is PyTorch's ``w (p - y) / (p (1 - p))`` except
    where ``p`` or ``1 - p`` is below ``exp(-100)`` (about 4e-44), where it is 0
    here (PyTorch divides by ``max(p (1 - p), 1e-12)`` there).  Prefer
    :func:`binary_cross_entropy_with_logits`, stable for any logit.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    p, y = _pair(input, target, "binary_cross_entropy")
    data = p._data
    if data.size and not bool(((data >= 0) & (data <= 1)).all()):  # written so that nan fails too
        raise ValueError("binary_cross_entropy: all elements of input should be between 0 and 1")
    floor = math.exp(_LOG_FLOOR)
    log_p = p.clip(floor, None).log()
    log_q = (1.0 - p).clip(floor, None).log()
    losses = -(y * log_p + (1.0 - y) * log_q)
    if weight is not None:
        losses = losses * _fused._target_like(weight, p, "binary_cross_entropy")
    return _reduce(losses, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Optional[Any] = None, size_average=None,
                                     reduce=None, reduction: str = "mean", pos_weight: Optional[Any] = None) -> Tensor:
    r"""Binary cross-entropy of ``sigmoid(x)`` against ``y``, stable for any logit ``x``.

    ``loss = w (pos_weight y softplus(-x) + (1 - y) softplus(x))``: ``pos_weight``
    (broadcast along the last dimension, one per class) scales the positive
    term, ``weight`` every element.  Without either it is one fused op.
    Written as ``bce(x, y) + (pos_weight - 1) y bce(x, 1)`` with the fused
    ``bce``, so the gradient is exact everywhere (also at ``x = 0``).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is None and pos_weight is None:
        return _fused.binary_cross_entropy_with_logits(input, target, reduction=reduction)
    x, y = _pair(input, target, "binary_cross_entropy_with_logits")
    losses = _fused.binary_cross_entropy_with_logits(x, y, reduction="none")
    if pos_weight is not None:
        ones = constant(array_module(x._data).ones(x.shape, dtype=x._data.dtype))
        positive = _fused.binary_cross_entropy_with_logits(x, ones, reduction="none")
        pos = _fused._target_like(pos_weight, x, "binary_cross_entropy_with_logits")
        losses = losses + (pos - 1.0) * y * positive
    if weight is not None:
        losses = losses * _fused._target_like(weight, x, "binary_cross_entropy_with_logits")
    return _reduce(losses, reduction, "binary_cross_entropy_with_logits")


def kl_div(input: Any, target: Any, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    r"""Kullback-Leibler divergence with ``input`` holding *log*-probabilities, as PyTorch.

    Pointwise ``y (log y - x)`` (0 where ``y = 0``), or ``exp(y) (y - x)`` with
    ``log_target=True``.  ``reduction="batchmean"`` divides the sum by the batch
    size (``input.shape[0]``), which is the mathematical KL divergence;
    ``"mean"`` divides by the number of elements (PyTorch's default, which it
    warns about).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    x, y = _pair(input, target, "kl_div")
    if log_target:
        losses = y.exp() * (y - x)
    else:
        positive = y > 0
        xp = array_module(y._data)
        safe = where(positive, y, constant(xp.ones(y.shape, dtype=y._data.dtype)))
        losses = where(positive, y * safe.log(), constant(xp.zeros(y.shape, dtype=y._data.dtype))) - y * x
    if reduction == "batchmean":
        return losses.sum() / (x.shape[0] if x.ndim else 1)
    return _reduce(losses, reduction, "kl_div")

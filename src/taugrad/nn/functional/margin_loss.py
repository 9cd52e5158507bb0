"""Margin, embedding and likelihood losses of ``torch.nn.functional`` composed from registered Tensor ops.

``margin_ranking_loss``, ``hinge_embedding_loss``, ``soft_margin_loss``,
``multilabel_soft_margin_loss``, ``cosine_embedding_loss``, ``poisson_nll_loss``,
``gaussian_nll_loss``, ``triplet_margin_loss`` and ``multi_margin_loss``: each a
short composition of Tensor ops written as PyTorch writes it, so values and
gradients (and higher derivatives) come from the ops' own rules.  Every one
takes ``reduction`` (``'mean'``, ``'sum'`` or ``'none'``) and, where PyTorch's
signature has them, the deprecated ``size_average``/``reduce``.  Hinges are
``clip(min=0)``, whose gradient at 0 is 1 as PyTorch's ``clamp_min``.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from taugrad.nn.functional.activation import logsigmoid, softplus
from taugrad.nn.functional.distance import pairwise_distance
from taugrad.nn.functional._helpers import input_tensor as _tensor, pair as _pair, reduce as _reduce
from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.device_checks import as_unsigned, outside_on_device
from taugrad.tensors.core.node import Tensor, constant
from taugrad.tensors.ops import losses as _fused
from taugrad.tensors.ops.elementwise import minimum, where
from taugrad.tensors.ops.losses import _check_reduction, legacy_reduction  # the fused losses' checks

__all__ = [
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "cosine_embedding_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "triplet_margin_loss",
    "multi_margin_loss",
]

_COSINE_EPS = 1e-12  # PyTorch adds this to each squared norm in cosine_embedding_loss


def _floating_input(x: Any, op: str, name: str = "input") -> Tensor:
    t = _tensor(x, op)
    if t._data.dtype.kind not in "fc":
        raise TypeError(f"{op}: {name} must be floating, got dtype {t._data.dtype}")
    return t


def _broadcastable(op: str, *tensors: Tensor) -> None:
    try:
        np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    except ValueError:
        shapes = " and ".join(str(tuple(t.shape)) for t in tensors)
        raise ValueError(f"{op}: shapes {shapes} cannot broadcast") from None


def _zeros(like: Tensor) -> Tensor:
    return constant(array_module(like._data).zeros(like.shape, dtype=like._data.dtype))


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    r"""``max(0, -y (x1 - x2) + margin)`` with ``y = +-1`` saying which input should rank higher.

    The three tensors must have the same number of dimensions (PyTorch's rule)
    and broadcast together.
    """
    op = "margin_ranking_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, op)
    x1 = _floating_input(input1, op, "input1")
    x2 = _floating_input(input2, op, "input2")
    y = _fused._target_like(target, x1, op)
    if not x1.ndim == x2.ndim == y.ndim:
        raise ValueError(f"{op}: input1 {tuple(x1.shape)}, input2 {tuple(x2.shape)} and target {tuple(y.shape)} "
                         "must have the same number of dimensions")
    _broadcastable(op, x1, x2, y)
    return _reduce((-y * (x1 - x2) + margin).clip(0.0, None), reduction, op)


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    r"""``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1`` (``x`` is usually a distance).

    As PyTorch: a target that is neither 1 nor -1 gets both terms.
    """
    op = "hinge_embedding_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, op)
    x = _floating_input(input, op)
    y = _fused._target_like(target, x, op)
    _broadcastable(op, x, y)
    zeros = _zeros(x)
    losses = where(y != 1, (margin - x).clip(0.0, None), zeros) + where(y != -1, x, zeros)
    return _reduce(losses, reduction, op)


def soft_margin_loss(input: Any, target: Any, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    r"""``log(1 + exp(-y x))`` for targets ``y = +-1`` (a smooth two-class hinge), as a stable softplus."""
    op = "soft_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, op)
    x, y = _pair(input, target, op)
    return _reduce(softplus(-y * x, threshold=float("inf")), reduction, op)


def multilabel_soft_margin_loss(input: Any, target: Any, weight: Optional[Any] = None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    r"""``-(1/C) sum_c w_c (y_c log sigmoid(x_c) + (1 - y_c) log sigmoid(-x_c))`` per sample.

    ``input`` is (N, C) or (C,), ``target`` the same shape with 0/1 labels,
    ``weight`` broadcasts against it; ``'mean'`` averages over samples.
    """
    op = "multilabel_soft_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, op)
    x, y = _pair(input, target, op)
    if x.ndim == 0:
        raise ValueError(f"{op}: input must have a class dimension, got a 0-d tensor")
    losses = -(y * logsigmoid(x) + (1.0 - y) * logsigmoid(-x))
    if weight is not None:
        w = _fused._target_like(weight, x, op)
        _broadcastable(op, losses, w)
        losses = losses * w
    classes = x.shape[-1]
    return _reduce(losses.sum(dim=x.ndim - 1) / classes, reduction, op)


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    r"""``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where ``y = -1``.

    ``cos = sum(x1 x2) / sqrt((sum(x1^2) + 1e-12) (sum(x2^2) + 1e-12))`` along
    the last dimension, PyTorch's exact formula (its ``eps`` is added to each
    squared norm, so a zero vector has cosine 0 and a finite gradient).  Inputs
    (N, D) take a target (N,); inputs (D,) a 0-d target.  Other targets give 0.
    """
    op = "cosine_embedding_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, op)
    x1 = _floating_input(input1, op, "input1")
    x2 = _floating_input(input2, op, "input2")
    y = _fused._target_like(target, x1, op)
    if y.ndim not in (0, 1):
        raise ValueError(f"{op}: target must be 0-d or 1-d, got shape {tuple(y.shape)}")
    if x1.ndim != y.ndim + 1 or x2.ndim != y.ndim + 1:
        raise ValueError(f"{op}: a {y.ndim}-d target needs {y.ndim + 1}-d inputs, got {tuple(x1.shape)} and {tuple(x2.shape)}")
    d = y.ndim
    _broadcastable(op, x1, x2)
    prod = (x1 * x2).sum(dim=d)
    mag1 = (x1 * x1).sum(dim=d) + _COSINE_EPS
    mag2 = (x2 * x2).sum(dim=d) + _COSINE_EPS
    cos = prod / (mag1 * mag2).sqrt()
    _broadcastable(op, cos, y)
    zeros = _zeros(cos)
    losses = where(y == 1, 1.0 - cos, zeros) + where(y == -1, (cos - margin).clip(0.0, None), zeros)
    return _reduce(losses, reduction, op)


def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    r"""Poisson negative log-likelihood of counts ``y`` with rate ``r``, less terms constant in ``r``.

    ``exp(x) - y x`` with ``log_input`` (``x = log r``), else ``x - y log(x + eps)``.
    ``full`` adds Stirling's ``y log y - y + 0.5 log(2 pi y)`` where ``y > 1``.
    """
    op = "poisson_nll_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, op)
    x = _floating_input(input, op)
    y = _fused._target_like(target, x, op)
    _broadcastable(op, x, y)
    if log_input:
        losses = x.exp() - y * x
    else:
        losses = x - y * (x + eps).log()
    if full:
        big = y > 1
        safe = where(big, y, constant(array_module(y._data).ones(y.shape, dtype=y._data.dtype)))
        stirling = safe * safe.log() - safe + 0.5 * (safe * (2 * math.pi)).log()
        losses = losses + where(big, stirling, _zeros(y))
    return _reduce(losses, reduction, op)


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    r"""``0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps))`` (+ ``0.5 log(2 pi)`` if ``full``).

    ``var`` has ``input``'s shape, or lacks its last dimension, or differs from
    it in one dimension of size 1 (PyTorch's rules), or is a float.  As PyTorch
    (which clamps in place under ``no_grad``), the gradient to ``var`` flows as
    if there were no clamp: it is the unclamped formula's, taken at the clamped
    value.  Negative variances are a ``ValueError``.
    """
    op = "gaussian_nll_loss"
    x = _floating_input(input, op)
    y = _fused._target_like(target, x, op)
    if isinstance(var, float):
        if var < 0:
            raise ValueError(f"{op}: var has negative entries")
        v = constant(array_module(x._data).full(x.shape, var, dtype=x._data.dtype))
    else:
        v = _fused._target_like(var, x, op)
        if v._data.size and bool((v._data < 0).any()):
            raise ValueError(f"{op}: var has negative entries")
    if v.shape != x.shape:
        if x.shape[:-1] == v.shape:
            v = v.unsqueeze(-1)
        elif not (x.ndim == v.ndim and sum(b for a, b in zip(x.shape, v.shape) if a != b) == 1):
            raise ValueError(f"{op}: var of shape {tuple(v.shape)} does not fit input of shape {tuple(x.shape)}")
    _check_reduction(reduction, op)
    _broadcastable(op, x, y)
    v = v + (v.clip(eps, None) - v).detach()
    d = x - y
    losses = 0.5 * (v.log() + d * d / v)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, reduction, op)


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    r"""``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` :func:`pairwise_distance` (``||u - v + eps||_p``).

    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance (Balntas
    et al., 2016).  The three tensors must have the same number of dimensions.
    """
    op = "triplet_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, op)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    a = _floating_input(anchor, op, "anchor")
    pos = _floating_input(positive, op, "positive")
    neg = _floating_input(negative, op, "negative")
    if not a.ndim == pos.ndim == neg.ndim:
        raise ValueError(f"{op}: anchor {tuple(a.shape)}, positive {tuple(pos.shape)} and negative {tuple(neg.shape)} "
                         "must have the same number of dimensions")
    _broadcastable(op, a, pos, neg)
    d_pos = pairwise_distance(a, pos, p, eps)
    d_neg = pairwise_distance(a, neg, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(pos, neg, p, eps))
    return _reduce((d_pos - d_neg + margin).clip(0.0, None), reduction, op)


def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0, weight: Optional[Any] = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    r"""Multi-class hinge: ``(1/C) sum_{j != y} w_y max(0, margin - x_y + x_j)^p`` per sample, ``p`` 1 or 2.

    ``input`` is (N, C) or (C,), ``target`` holds class indices (N,) or one.
    """
    op = "multi_margin_loss"
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, op)
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 are supported, got {p}")
    x = _floating_input(input, op)
    if x.ndim > 2 or (x.ndim and x.shape[-1] == 0):
        raise ValueError(f"{op}: input must be a non-empty vector or matrix, got shape {tuple(x.shape)}")
    t = _fused._target_array(target, x._data, op)  # beside the input, on its device
    if t.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must hold integer class indices, got dtype {t.dtype}")
    rows = x.shape[0] if x.ndim == 2 else 1
    if t.ndim > 1 or t.size != rows:
        raise ValueError(f"{op}: target of shape {tuple(t.shape)} does not fit input of shape {tuple(x.shape)}")
    classes = x.shape[-1] if x.ndim else 1
    xp = array_module(x._data)
    index = t.reshape(rows, 1)
    message = f"{op}: target out of range for {classes} classes"
    if isinstance(index, np.ndarray):
        if index.size and as_unsigned(index).max() >= classes:  # one pass for both bounds
            raise ValueError(message)
    else:  # checked on the device, raised at the next read (class 0 stands in meanwhile)
        index = xp.where(outside_on_device(index, classes, (op, classes), ValueError, message), 0, index)
    x2 = x.reshape(rows, classes)
    picked = x2.gather(1, constant(index))
    z = margin - picked + x2
    other = xp.arange(classes)[None, :] != index
    h = z if p == 1 else z * z
    if weight is not None:
        w = _fused._target_like(weight, x, op)
        if w.ndim != 1 or w.shape[0] != classes:
            raise ValueError(f"{op}: weight must be one-dimensional with {classes} entries, got shape {tuple(w.shape)}")
        h = h * w.gather(0, constant(index.reshape(rows))).reshape(rows, 1)
    terms = where(constant(other & (z._data > 0)), h, _zeros(h))
    losses = terms.sum(dim=1) / classes
    if x.ndim <= 1 and t.ndim == 0:
        losses = losses.reshape(())
    return _reduce(losses, reduction, op)

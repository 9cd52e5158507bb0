"""Fused losses: cross_entropy, nll_loss, mse_loss, binary_cross_entropy_with_logits.

Each is one graph node with a hand-derived rule instead of a chain of small
ops: fewer passes over memory, and the stable formulas (shift by the maximum,
``log1p(exp(-|x|))``) never overflow, so logits of +-1e4 give no nan and no
warning.  In ``create_graph`` mode the rules recompute what they need with
Tensor ops so the gradient stays differentiable.
"""
from __future__ import annotations

import math

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.backend import array_module, device_of, is_array, move_like, same_backend
from taugrad.tensors.core.device_checks import as_unsigned, outside_on_device
from taugrad.tensors.core.errstate import quiet, restore, silence
from taugrad.tensors.core.node import constant, make
from taugrad.tensors.core.node import Tensor, to_array
from taugrad.tensors.core.rule import NEW, forward_of, register, rule

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _reduce(losses, reduction: str):
    # add.reduce * (1/n): NumPy's mean() and sum() go through slower Python wrappers
    if reduction == "mean":
        total = array_module(losses).add.reduce(losses, axis=None)
        return total * (1.0 / losses.size) if losses.size else total * np.nan
    if reduction == "sum":
        return array_module(losses).add.reduce(losses, axis=None)
    return losses


def _reduction_grad(g, n: int, reduction: str):
    """d(reduced)/d(per-sample losses) times g, shaped to broadcast over samples."""
    if reduction == "mean":
        return g * (1.0 / n) if n else g * np.nan
    return g  # 'sum': g is 0-d; 'none': g has the samples' shape


# ---------------------------------------------------------------------------
# cross entropy
# ---------------------------------------------------------------------------


def _target_array(target, like, op: str, what: str = "target"):
    """``target``'s array (or ``weight``'s: ``what``), on the device of the input's array ``like``.

    A list or a NumPy array goes to the input's device (as if made there); a
    tensor on another device is a one-line error, as in PyTorch.
    """
    t = target._data if isinstance(target, Tensor) else to_array(target)
    if (type(t) is type(like) or same_backend(t, like)) and \
            (type(like) is np.ndarray or device_of(t) == device_of(like)):
        return t
    if type(t) is np.ndarray and not isinstance(target, Tensor):
        return move_like(t, like)
    raise RuntimeError(f"{op}: expected the input and the {what} on the same device, "
                       f"got the input on {device_of(like)} and the {what} on {device_of(t)}")


def _class_targets(target, like, logits_shape, op: str):
    """Integer class indices as an array beside the logits' array ``like``, with clear errors for the usual mistakes."""
    t = _target_array(target, like, op)
    if t.dtype.kind not in "iu":
        raise TypeError(
            f"{op}: targets must be integer class indices, got dtype {t.dtype} "
            f"(convert with .astype('int64'); float targets are class probabilities and need the input's shape)"
        )
    expected = (logits_shape[0],) if len(logits_shape) == 2 else ()
    if t.shape != expected:
        raise ValueError(
            f"{op}: logits of shape {tuple(logits_shape)} need targets of shape {expected}, got {tuple(t.shape)}"
        )
    return t


def _check_classes_now(t, classes: int, op: str, ignore_index=None) -> None:
    """Raise if a target is not a class (on the CPU, where asking costs nothing).

    With ``ignore_index`` given, targets equal to it raise :class:`_IgnoredTargets`
    (the caller then takes the path that can skip them).
    """
    if t.size and as_unsigned(t).max() >= classes:  # one pass for both bounds
        if ignore_index is not None and bool((t == ignore_index).any()):
            raise _IgnoredTargets
        low = t.min()  # name the lowest target if one is negative, else the highest
        bad = int(low) if low < 0 else int(t.max())
        raise ValueError(f"{op}: target {bad} is out of range for {classes} classes (0 to {classes - 1})")


def _outside_classes_on_device(t, classes: int, op: str, ignore_index=None):
    """Targets outside ``[0, classes)`` on a device, with the check that each is ``ignore_index`` left pending."""
    return outside_on_device(t, classes, (op, classes), ValueError,
                             f"{op}: a target is out of range for {classes} classes (0 to {classes - 1})",
                             allowed=ignore_index)


def _cross_entropy_picture(node):
    """PyTorch's nodes for the fused op: ``nll_loss`` of ``log_softmax``, as ``F.cross_entropy`` records them."""
    return "NllLossBackward0", (("LogSoftmaxBackward0", (0,)),)


@rule("cross_entropy", reads=(0,), gives=NEW, shows=_cross_entropy_picture)
def cross_entropy_backward(g, out, ins, node):
    """loss_i = logsumexp(x_i) - x_i[t_i]:  d loss_i / d x_i = softmax(x_i) - onehot(t_i).

    On a device a row whose target is ``ignore_index`` gets no gradient and
    'mean' divides by the number of rows kept.  The first-order
    path reuses the forward's exponentials; the create_graph path recomputes
    the softmax with Tensor ops.
    """
    target, reduction, e, s, ignored, inv_count = node._ctx
    n = len(target)
    rows = _row_indices(n, target)  # from the cache, not the graph: a graph holds only what it owns
    if ignored is None:
        scale = _reduction_grad(g, n, reduction)
    else:  # on a device: rows whose target is ignored get none, 'mean' divides by the rows kept
        # chosen, not multiplied: with every row ignored 1 / count is inf, and inf * 0 = nan (PyTorch: 0)
        scale = A.where(ignored, 0.0, g * inv_count if reduction == "mean" else g)
    weight = scale.reshape(n, 1) if scale.ndim else scale
    if isinstance(g, Tensor):  # create_graph: keep the gradient differentiable
        x = ins[0]
        probs = (x - x.logsumexp(dim=1, keepdim=True)).exp()
        onehot = array_module(x._data).zeros(x.shape, dtype=x.dtype)
        onehot[rows, target] = 1
        return ((probs - onehot) * weight,)
    # (softmax - onehot) * scale, as e * (scale / s) - scale at the targets: one
    # pass over the logits' shape instead of three
    grad = e * (weight / s)
    grad[rows, target] -= scale
    return (grad,)


_ROWS = {}


def _row_indices(n: int, like):
    """``arange(n)`` in ``like``'s array module, on its device: cross_entropy picks one element per row every step.

    Cached per backend and device (an array on one device cannot index
    arrays on another; on a GPU each fresh one is a kernel launch, twice a
    step); NumPy's is read-only.  Only this module reads them, as indices.
    """
    if type(like) is np.ndarray:
        key = n
    elif isinstance(like, np.ndarray):  # a subclass (compile's recording arrays): made each time
        return array_module(like).arange(n)
    else:
        key = (type(like), str(device_of(like)), n)
    rows = _ROWS.get(key)
    if rows is None:
        rows = array_module(like).arange(n)
        if type(rows) is np.ndarray:
            rows.flags.writeable = False
        if len(_ROWS) >= 64:
            _ROWS.clear()
        _ROWS[key] = rows
    return rows


def _by_rows(loss_fn, scores: Tensor, target, reduction: str, op: str) -> Tensor:
    """Run ``loss_fn``, defined on (N, C) scores, for (N, C, d1, ...) scores.

    The extra dimensions put the classes last and make one row per position
    (targets (N, d1, ...)), as PyTorch's losses do.
    """
    shape = scores.shape
    t = _target_array(target, scores._data, op)
    if t.shape != (shape[0],) + shape[2:]:
        raise ValueError(f"{op}: an input of shape {tuple(shape)} needs targets of shape "
                         f"{tuple((shape[0],) + shape[2:])}, got {tuple(t.shape)}")
    rows = scores.permute((0,) + tuple(range(2, len(shape))) + (1,)).reshape(-1, shape[1])
    loss = loss_fn(rows, t.reshape(-1), reduction)
    return loss.reshape((shape[0],) + shape[2:]) if reduction == "none" else loss


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's deprecated ``size_average``/``reduce`` flags as a ``reduction`` (they win when given)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


class _IgnoredTargets(Exception):
    """Raised by the fast path's bounds check when targets hold ``ignore_index``: take the general path."""


@register("cross_entropy")
def cross_entropy(logits: Tensor, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy of ``logits`` (N, C) against ``target``, as ``torch.nn.functional.cross_entropy``.

    Class-index targets (N,) give ``loss_i = w[t_i] * (logsumexp(x_i) - x_i[t_i])``;
    ``'mean'`` divides the sum by ``sum_i w[t_i]`` (the count when there is no
    ``weight``), ``'sum'`` sums, ``'none'`` returns one loss per sample.  Samples
    whose target is ``ignore_index`` count nowhere (loss 0).  Probability
    targets (the input's shape, floating) give ``loss_i = -sum_c w_c p_ic log softmax(x_i)_c``,
    averaged over samples.  ``label_smoothing = e`` mixes in the uniform
    distribution: ``(1 - e) * loss + e / C * sum_c -w_c log softmax(x_i)_c``.
    A single sample (C,) and extra dimensions (N, C, d1, ...) with targets
    (N, d1, ...) work too.  Stable for any finite logits.

    Without ``weight`` and ``label_smoothing`` and with class targets none of
    which is ``ignore_index``, this is one fused op; otherwise it is composed
    from ``log_softmax`` and indexing (``weight`` is then a constant: it gets no
    gradient).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        _check_reduction(reduction, "cross_entropy")
    if not isinstance(logits, Tensor):
        logits = A.input_tensor(logits, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    t = target._data if isinstance(target, Tensor) else (target if is_array(target) else None)
    if (t is not None and t.dtype.kind == "f") or (t is None and np.asarray(target).dtype.kind == "f"):
        if tuple(t.shape if t is not None else np.shape(target)) == logits.shape:
            return _soft_cross_entropy(logits, target, weight, reduction, label_smoothing)
    classes = logits.shape[1] if logits.ndim > 1 else (logits.shape[0] if logits.ndim else 0)
    if weight is None and not label_smoothing and not 0 <= ignore_index < classes and logits.ndim > 1:
        try:
            if logits._data.ndim != 2:
                return _by_rows(lambda x, y, r: _fused_cross_entropy(x, y, r, ignore_index), logits, target,
                                reduction, "cross_entropy")
            return _fused_cross_entropy(logits, target, reduction, ignore_index)
        except _IgnoredTargets:
            pass
    return _weighted_class_loss(logits, target, weight, ignore_index, reduction, label_smoothing, "cross_entropy")


def _fused_cross_entropy(logits: Tensor, target, reduction: str, ignore_index=None) -> Tensor:
    """The plain case as one graph node: every target a valid class, no weights, no smoothing."""
    x = logits._data
    shape = x.shape
    n, classes = shape
    t = _class_targets(target, x, shape, "cross_entropy")
    if x.dtype.kind not in "fc":
        raise TypeError(f"cross_entropy: logits must be floating, got dtype {x.dtype}")
    if not isinstance(x, np.ndarray):  # a recording subclass under taugrad.compile is the CPU too
        return _fused_cross_entropy_on_device(logits, t, reduction, ignore_index)
    _check_classes_now(t, classes, "cross_entropy", ignore_index)
    rows = _row_indices(n, x)
    xp = array_module(x)
    # a row of -inf: log(0) = -inf and -inf - -inf = nan, silently (as PyTorch);
    # quiet() without a with block, two Python calls fewer on every training step
    token = silence()
    try:
        if reduction != "none" and n and type(x) is np.ndarray:
            # Optimistic: shift by the row maxima without checking them.  If the
            # loss is finite, every maximum was (an infinite or nan one turns its
            # row's sum into nan), and the result is the checked one's.  (Not
            # under taugrad.compile, whose recording arrays would turn the
            # finiteness test into a guard on every replay.)
            shifted = x - x.max(axis=1, keepdims=True)
            e, s, losses = _softmax_terms(xp, shifted, rows, t)
            loss = _reduce(losses, reduction)
            if math.isfinite(loss):
                return make(loss, (logits,), cross_entropy_backward, (t, reduction, e, s, None, None))
        shifted = A.shift_by_max(x, 1)  # rows of -inf shifted by 0: their -inf stay -inf
        e, s, losses = _softmax_terms(xp, shifted, rows, t)
        loss = _reduce(losses, reduction)
    finally:
        restore(token)
    return make(loss, (logits,), cross_entropy_backward, (t, reduction, e, s, None, None))


def _fused_cross_entropy_on_device(logits: Tensor, t, reduction: str, ignore_index) -> Tensor:
    """The fused op on a device, where asking whether a target is ignored or bad would wait for the device.

    Every row is computed, then a row whose target is ``ignore_index`` is
    replaced by 0; 'mean' divides by the rows kept.  A target that is neither
    a class nor ``ignore_index`` raises at the next read of a value
    (:mod:`taugrad.tensors.core.device_checks`); meanwhile it reads class 0.
    """
    x = logits._data
    n, classes = x.shape
    xp = array_module(x)
    outside = _outside_classes_on_device(t, classes, "cross_entropy", ignore_index)
    t = xp.where(outside, 0, t)
    with quiet():  # a row of -inf gives nan, and every row ignored 0 / 0 = nan, as PyTorch
        e, s, losses = _softmax_terms(xp, A.shift_by_max(x, 1), _row_indices(n, x), t)
        losses = xp.where(outside, 0, losses)  # chosen: a masked -inf at stand-in class 0 times 0 would be nan
        inv_count = 1.0 / xp.subtract(1, outside, dtype=x.dtype).sum() if reduction == "mean" else None
        loss = losses if reduction == "none" else xp.add.reduce(losses, axis=None)
        if inv_count is not None:
            loss = loss * inv_count  # the backward pass reuses 1 / count
    return make(loss, (logits,), cross_entropy_backward, (t, reduction, e, s, outside, inv_count))


def _softmax_terms(xp, shifted, rows, t):
    """exp(shifted), its row sums, and the per-row losses log(sum) - shifted[target] (``xp``: their module)."""
    e = xp.exp(shifted)
    s = xp.add.reduce(e, axis=1, keepdims=True)
    return e, s, xp.log(s[:, 0]) - shifted[rows, t]


def _class_weights(weight, classes: int, like, op: str):
    """``weight`` as an array of ``classes`` entries in the dtype and module of the array ``like`` (ones when None)."""
    dtype = like.dtype
    if weight is None:
        return array_module(like).ones(classes, dtype=dtype)
    w = _target_array(weight, like, op, "weight")
    if w.shape != (classes,):
        raise ValueError(f"{op}: weight must have one entry per class, shape ({classes},), got {tuple(w.shape)}")
    return w.astype(dtype, copy=False)


def _as_rows(scores: Tensor, target, op: str):
    """(rows (M, C), flat integer targets (M,), the 'none' output shape) for any supported layout."""
    shape = scores.shape
    t = _target_array(target, scores._data, op)
    if len(shape) == 0:
        raise ValueError(f"{op}: the input needs a class dimension, got a 0-d tensor")
    if t.dtype.kind not in "iu":
        raise TypeError(f"{op}: class targets must be integers, got dtype {t.dtype} "
                        f"(float targets are class probabilities and need the input's shape {tuple(shape)})")
    if len(shape) == 1:
        expected, rows = (), scores.reshape(1, shape[0])
    else:
        expected = (shape[0],) + tuple(shape[2:])
        rows = scores if len(shape) == 2 else \
            scores.permute((0,) + tuple(range(2, len(shape))) + (1,)).reshape(-1, shape[1])
    if t.shape != expected:
        raise ValueError(f"{op}: an input of shape {tuple(shape)} needs targets of shape {expected}, got {tuple(t.shape)}")
    return rows, t.reshape(-1), expected


@rule("nll_loss", gives=NEW)
def nll_loss_backward(g, out, ins, node):
    """loss_i = -w[t_i] x[i, t_i] (0 where t_i is ignore_index), reduced:
    dL/dx[i, c] = -w[t_i] [c = t_i] dL/dloss_i, where 'mean' gives every row g / sum_i w[t_i] (kept rows)
    and 'sum' gives every row g."""
    shape, rows, safe, coef = node._ctx  # coef: -w[t_i] (/ the total weight for 'mean'), 0 where ignored
    xp = array_module(coef)
    m = len(coef)
    if isinstance(g, Tensor):  # create_graph: the gradient is linear in g, a constant matrix times it
        scatter = xp.zeros((m, shape[-1]), dtype=coef.dtype)
        scatter[rows, safe] = coef
        return ((g.reshape((m, 1)) if g.ndim else g) * constant(scatter.reshape(shape) if len(shape) == 1
                                                                 else scatter),)
    grad = xp.zeros((m, shape[-1]), dtype=coef.dtype)
    grad[rows, safe] = coef * g
    return (grad.reshape(shape),)


def _nll(log_probs: Tensor, t, weight, ignore_index: int, reduction: str, op: str) -> Tensor:
    """``nll_loss`` of (N, C) or (C,) log-probabilities against integer classes ``t`` ((N,) or ()), one node."""
    x = log_probs._data
    x2 = x.reshape((1, x.shape[0])) if x.ndim == 1 else x
    m, classes = x2.shape
    t = t.reshape(-1)
    xp = array_module(x)
    valid = t != ignore_index
    safe = xp.where(valid, t, 0)
    if isinstance(safe, np.ndarray):
        _check_classes_now(safe, classes, op)
    else:
        safe = xp.where(_outside_classes_on_device(safe, classes, op), 0, safe)
    w = _class_weights(weight, classes, x2, op)
    picked_weight = (w[safe] * valid).astype(x.dtype, copy=False)
    rows = _row_indices(m, x2)
    with quiet():  # every target ignored: 0 / 0 = nan, as PyTorch
        # an ignored row is 0 by choice, not by multiplying: its stand-in class 0
        # may hold a masked -inf, and -inf * 0 would be nan (PyTorch: 0)
        losses = -(xp.where(valid, x2[rows, safe], 0.0) * picked_weight)
        coef = -picked_weight
        if reduction == "none":
            loss = losses.reshape(t.shape if x.ndim > 1 else ())
        else:
            loss = xp.add.reduce(losses, axis=None)
            if reduction == "mean":
                total = xp.add.reduce(picked_weight, axis=None)
                loss = loss / total
                coef = xp.where(valid, coef / total, 0.0).astype(x.dtype, copy=False)
    return make(loss, (log_probs,), nll_loss_backward, (x.shape, rows, safe, coef))


def _weighted_class_loss(scores: Tensor, target, weight, ignore_index: int, reduction: str,
                         label_smoothing: float, op: str, log_probs: bool = False) -> Tensor:
    """Class-index NLL with weights, ignore_index and label smoothing.

    ``scores`` are logits (``log_softmax`` is applied) unless ``log_probs``.
    Without label smoothing it is ``log_softmax`` and one ``nll_loss`` node,
    as PyTorch records it; label smoothing is composed from Tensor ops.
    """
    if scores._data.dtype.kind not in "fc":
        raise TypeError(f"{op}: input must be floating, got dtype {scores._data.dtype}")
    rows, t, out_shape = _as_rows(scores, target, op)
    if not label_smoothing:
        if scores._data.ndim <= 2:  # the node on the input itself: (C,) or (N, C)
            rows = scores
        logp = rows if log_probs else forward_of("log_softmax")(rows, rows.ndim - 1)
        loss = _nll(logp, t, weight, ignore_index, reduction, op)
        return loss.reshape(out_shape) if reduction == "none" and scores._data.ndim > 2 else loss
    classes = rows.shape[1]
    logp = rows if log_probs else forward_of("log_softmax")(rows, 1)
    valid = t != ignore_index
    xp = array_module(t)
    safe = xp.where(valid, t, 0)
    if isinstance(safe, np.ndarray):
        _check_classes_now(safe, classes, op)
    else:
        safe = xp.where(_outside_classes_on_device(safe, classes, op), 0, safe)
    dtype = rows._data.dtype
    w = _class_weights(weight, classes, rows._data, op)
    picked_weight = (w[safe] * valid).astype(dtype, copy=False)
    # an ignored row counts as 0 by choice, not by multiplying: its stand-in
    # class 0 may hold a masked -inf, and -inf * 0 would be nan (PyTorch: 0)
    where = forward_of("where")
    losses = -(where(valid, logp[xp.arange(len(t)), safe], 0.0) * constant(picked_weight))
    if label_smoothing:
        smooth = -where(valid, (logp * constant(w)).sum(dim=1), 0.0)
        losses = losses * (1.0 - label_smoothing) + smooth * (label_smoothing / classes)
    if reduction == "none":
        return losses.reshape(out_shape)
    total = losses.sum()
    if reduction == "sum":
        return total
    with quiet():  # every target ignored: 0 / 0 = nan, as PyTorch
        return total / constant(xp.asarray(picked_weight.sum(), dtype=dtype))


def _soft_cross_entropy(logits: Tensor, target, weight, reduction: str, label_smoothing: float) -> Tensor:
    """Cross-entropy against class probabilities of the input's shape (class dimension 1, or 0 for one sample)."""
    dim = 1 if logits.ndim > 1 else 0
    classes = logits.shape[dim]
    p = _target_like(target, logits, "cross_entropy")
    logp = forward_of("log_softmax")(logits, dim)
    if label_smoothing:
        p = p * (1.0 - label_smoothing) + label_smoothing / classes
    terms = logp * p
    if weight is not None:
        w = _class_weights(weight, classes, logits._data, "cross_entropy")
        terms = terms * constant(w.reshape((classes,) + (1,) * (logits.ndim - dim - 1)))
    losses = -terms.sum(dim=dim)
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


@register("nll_loss")
def nll_loss(log_probs: Tensor, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of integer classes given log-probabilities (N, C).

    ``loss_i = -w[t_i] * log_probs[i, t_i]``, reduced as :func:`cross_entropy`
    (``'mean'`` divides by ``sum_i w[t_i]``); ``ignore_index`` targets count
    nowhere; one sample (C,) and extra dimensions (N, C, d1, ...) work as there.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "nll_loss")
    log_probs = A.input_tensor(log_probs, "nll_loss")
    return _weighted_class_loss(log_probs, target, weight, ignore_index, reduction, 0.0, "nll_loss",
                                log_probs=True)


# ---------------------------------------------------------------------------
# regression and binary losses
# ---------------------------------------------------------------------------


def _target_like(target, input: Tensor, op: str) -> Tensor:
    """``target`` as a Tensor of ``input``'s dtype (a cast that stays in the graph if it needs a gradient)."""
    if not isinstance(target, Tensor):
        return Tensor(_target_array(to_array(target, input.dtype), input._data, op))
    _target_array(target, input._data, op)  # the same device
    if target.dtype == input.dtype:
        return target
    return target.astype(input.dtype) if target.requires_grad else constant(target._data.astype(input.dtype))


def _same_shape(a: Tensor, b: Tensor, op: str) -> None:
    if a.shape != b.shape:
        raise ValueError(f"{op}: input shape {tuple(a.shape)} and target shape {tuple(b.shape)} differ")


@rule("mse_loss", reads=(0, 1), gives=NEW)
def mse_loss_backward(g, out, ins, node):
    """loss = mean((x - y)^2):  d/dx = 2 (x - y) / n,  d/dy = -2 (x - y) / n."""
    x, y = ins
    reduction = node._ctx
    grad = (x - y) * (2.0 * _reduction_grad(g, node._prev[0]._data.size, reduction))
    return grad, -grad


@register("mse_loss")
def mse_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """Mean squared error ``mean((input - target)^2)`` (same shapes required)."""
    _check_reduction(reduction, "mse_loss")
    input = A.input_tensor(input, "mse_loss")
    target = _target_like(target, input, "mse_loss")
    _same_shape(input, target, "mse_loss")
    d = input._data - target._data
    return make(_reduce(d * d, reduction), (input, target), mse_loss_backward, reduction)


@rule("binary_cross_entropy_with_logits", reads=(0, 1), gives=NEW)
def bce_with_logits_backward(g, out, ins, node):
    """loss = max(x, 0) - x y + log(1 + exp(-|x|)):  d/dx = sigmoid(x) - y,  d/dy = -x."""
    x, y = ins
    scale = _reduction_grad(g, node._prev[0]._data.size, node._ctx)
    return (A.sigmoid(x) - y) * scale, (-x * scale if node._prev[1].requires_grad else None)


@register("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)`` against probabilities ``target``.

    ``loss = max(x, 0) - x y + log1p(exp(-|x|))``: equal to
    ``-(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x)))`` but never overflows.
    """
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    input = A.input_tensor(input, "binary_cross_entropy_with_logits")
    target = _target_like(target, input, "binary_cross_entropy_with_logits")
    _same_shape(input, target, "binary_cross_entropy_with_logits")
    x, y = input._data, target._data
    xp = array_module(x)
    losses = xp.maximum(x, 0) - x * y + xp.log1p(xp.exp(-xp.abs(x)))
    return make(_reduce(losses, reduction), (input, target), bce_with_logits_backward, reduction)

"""Normalisation (batch norm, layer norm, group norm), channel dropout and resampling.

Most are compositions of differentiable ops (mean, subtraction, ``**``,
``@``), so their gradients -- of any order -- come from those ops' rules:

* batch norm, training: ``y = (x - mean) / sqrt(var + eps) * w + b`` with the
  mean and the *biased* variance over batch and space per channel; the
  running estimates move by ``r <- (1 - momentum) r + momentum * stat`` with
  the *unbiased* variance (``n / (n - 1)`` times), as PyTorch.  Training
  with batch statistics is one node with its own rule (below: a dozen
  composed nodes cost 3-4x more); in evaluation the running estimates
  replace the batch statistics, composed;
* layer norm: the same over the last dims of each sample, with a weight and
  bias of those dims' shape: one node with its own rule, as batch norm in
  training (composed, it was nine nodes and 32 array operations forward and
  back; one node takes 24, and a third of the time on the CPU);
* group norm: the same over each group of ``C / G`` channels and all space, per sample;
* resampling (``interpolate``): each output pixel is a fixed weighted sum of
  input pixels, ``out = M_h x M_w^T`` with nearest (0/1) or bilinear weights.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from taugrad.tensors.core.backend import device_of, move_like
from taugrad.tensors.core.generator import get_generator
from taugrad.tensors.core.memory_format import dense_order
from taugrad.tensors.core.node import Tensor, array_module, bump_version, constant, make
from taugrad.tensors.core.rule import NEW, forward_of, overwriting, register, rule, shown_as


def _floating_input(x, op: str, min_dims: int) -> Tensor:
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x._data.dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating tensor, got dtype {x._data.dtype}")
    if x._data.ndim < min_dims:
        raise ValueError(f"{op}: expected at least {min_dims} dimensions (batch, channels, ...), "
                         f"got shape {tuple(x.shape)}")
    return x


def _per_channel(t, channels: int, ndim: int, name: str, op: str):
    """A (C,) tensor shaped to broadcast over (N, C, ...)."""
    if t is None:
        return None
    t = t if isinstance(t, Tensor) else Tensor(t)
    if tuple(t.shape) != (channels,):
        raise ValueError(f"{op}: {name} of shape {tuple(t.shape)} does not fit {channels} channels")
    return t.reshape((channels,) + (1,) * (ndim - 2))


def _batch_norm_reads(node) -> tuple:
    """The rule reads x and, when there is one, the weight (input 1; without a weight input 1 is the bias or absent)."""
    return (0, 1) if node._ctx[2] else (0,)


@rule("batch_norm", reads=_batch_norm_reads, gives=NEW)
def batch_norm_backward(g, out, ins, node):
    """y = xhat w + b with xhat = (x - mean) / sqrt(var + eps) over the M values of each channel:

    ``dL/db = sum G``,  ``dL/dw = sum G xhat``,
    ``dL/dx = w / sqrt(var + eps) * (G - sum(G) / M - xhat * sum(G xhat) / M)``
    (the mean and the variance depend on x: the two subtracted terms).  With
    ``create_graph`` the same formula is recorded from the inputs as ops.
    """
    return _batch_norm_grads(g, ins, node, None)


@overwriting(batch_norm_backward)
def batch_norm_backward_in_place(g, out, ins, node):
    """The same rule for a ``g`` the backward pass owns: dL/dx is written over it."""
    return _batch_norm_grads(g, ins, node, g)


def _batch_norm_grads(g, ins, node, into):
    dims, eps, has_w, has_b, saved = node._ctx
    prev = node._prev
    x = ins[0]
    w = ins[1] if has_w else None
    channels = x.shape[1]
    grad_x = None
    if isinstance(g, Tensor):
        shape = (channels,) + (1,) * (len(x.shape) - 2)
        count = math.prod(x.shape) // max(channels, 1)
        centred = x - x.mean(dim=dims, keepdim=True)
        inv = ((centred * centred).mean(dim=dims, keepdim=True) + eps) ** -0.5
        xhat = centred * inv
        scale = inv if w is None else inv * w.reshape(shape)
        g_sum = g.sum(dim=dims, keepdim=True)
        gx_sum = (g * xhat).sum(dim=dims, keepdim=True)
        if prev[0].requires_grad:
            grad_x = (g - g_sum * (1.0 / count) - xhat * (gx_sum * (1.0 / count))) * scale
    else:
        mean, inv = saved  # (C,) arrays of x's dtype
        xp = array_module(x)
        xb, order = channel_blocks(x)
        if not g.transpose(order).flags.c_contiguous:  # G in another layout than x: a copy of ours in x's
            g = into = from_blocks(channel_blocks(g, order)[0], x.shape, order)
        gb = channel_blocks(g, order)[0]
        count = xb.shape[0] * xb.shape[2]
        centred = xp.subtract(xb, _rows(mean, xb))
        g_sum = _channel_sum(gb)
        gx_sum = _channel_dot(gb, centred) * inv  # sum(G xhat)
        if prev[0].requires_grad:
            scale = inv if w is None else inv * w
            # G scale - (x - mean) scale inv sum(G xhat) / M - scale sum(G) / M, summed in a buffer of ours
            centred *= _rows(-(scale * inv * gx_sum) / count, xb)
            centred += _rows(-(scale * g_sum) / count, xb)
            if into is None:
                centred += gb * _rows(scale, xb)
                grad = centred
            else:
                gb *= _rows(scale, xb)
                gb += centred
                grad = g  # written over in place: the array itself, in its own layout
            grad_x = grad if grad is g else from_blocks(grad, x.shape, order)
    grads = [grad_x]
    if has_w:
        grads.append(gx_sum.reshape(channels) if prev[1].requires_grad else None)
    if has_b:
        grads.append(g_sum.reshape(channels) if prev[-1].requires_grad else None)
    return tuple(grads)


def channel_blocks(a, order=None):
    """``(blocks, order)``: ``a`` (N, C, ...) as an (A, C, B) array of its memory, and that memory's axis order.

    Whatever the layout -- row-major (A = N, B = H*W), channels-last
    (A = N*H*W, B = 1) or a convolution's batch-last (H, C, W, N) memory
    (A = H, B = W*N) -- the values of one channel are the rows ``[:, c, :]``
    of one view, so per-channel sums and broadcasts run over the memory as
    it lies, and results made in blocks are handed back in the same layout
    (:func:`from_blocks`): no layer boundary copies.  ``order`` (another
    array's) asks for that layout instead; a tensor not laid out so, or not
    dense, is copied into it.
    """
    if order is None:
        order = dense_order(a.shape, a.strides, a.itemsize) or tuple(range(a.ndim))
    p = order.index(1)
    inner = a.transpose(order)
    if not inner.flags.c_contiguous:
        inner = array_module(a).ascontiguousarray(inner)
    return inner.reshape(math.prod(inner.shape[:p]), a.shape[1], math.prod(inner.shape[p + 1:])), order


def from_blocks(blocks, shape, order):
    """The inverse of :func:`channel_blocks`: an (N, C, ...) view of ``shape`` on (A, C, B) blocks."""
    back = sorted(range(len(order)), key=order.__getitem__)
    return blocks.reshape(tuple(shape[i] for i in order)).transpose(back)


#: a per-channel operand of (A, C, B) blocks is spread over (C, B) rows when they hold at most this many values
_ROWS_LIMIT = 1 << 16


def _rows(v, blocks):
    """``v`` (C,) as the operand of an elementwise op on (A, C, B) ``blocks``: each channel's value
    repeated along its row, a contiguous (C, B) array, or ``v[:, None]`` where B is 1 or the rows
    would be large.

    NumPy's loops run 2-3x faster over a contiguous operand than over one
    repeated with step 0 along the inner axis (``x *= s`` on 64x16x32x32
    float32 values: 0.12 ms against 0.36 ms; ``x - mean``: 0.19 against 0.42).
    """
    b = blocks.shape[2]
    if b == 1 or v.shape[0] * b > _ROWS_LIMIT:
        return v[:, None]
    return array_module(v).repeat(v, b).reshape(v.shape[0], b)


def _channel_sum(blocks):
    """Per-channel sums of (A, C, B) blocks: a product with ones along each contiguous run (BLAS reads the
    run once, 3x faster than NumPy's ``sum`` along the last axis; half precision keeps the pairwise
    ``sum``, which accumulates more precisely than a half-precision product), then over runs in float64."""
    if blocks.shape[2] > 1 and blocks.dtype.itemsize >= 4:
        part = blocks @ array_module(blocks).ones(blocks.shape[2], dtype=blocks.dtype)
    elif blocks.shape[2] > 1:
        part = blocks.sum(axis=2)
    else:
        part = blocks[:, :, 0]
    return part.sum(axis=0, dtype="float64").astype(blocks.dtype)


def _channel_dot(a, b):
    """Per-channel sums of ``a * b`` for (A, C, B) blocks, without the product's temporary."""
    xp = array_module(a)
    if a.shape[2] > 1 and hasattr(xp, "vecdot"):
        part = xp.vecdot(a, b)
    else:
        part = xp.einsum("acb,acb->ac", a, b)
    return part.sum(axis=0, dtype="float64").astype(a.dtype)


def _batch_norm_train(x: Tensor, w, b, eps: float):
    """The batch-statistics forward as one node: ``(out, mean, biased var)`` (statistics as (C,) arrays).

    It runs on the input's memory as it lies (:func:`channel_blocks`) and
    gives its output in the same layout: a convolution's batch-last or
    channels-last output goes on to ReLU and the next convolution without
    a copy.  Per channel, the mean is one sweep, the variance is the mean
    square of the centred values (exact, not E[x^2] - E[x]^2), and the
    centred values become the output in place: ``out = (x - mean) (inv w) + b``,
    five passes over the memory and one new array.
    """
    data = x._data
    xp = array_module(data)
    blocks, order = channel_blocks(data)
    count = blocks.shape[0] * blocks.shape[2]
    mean = _channel_sum(blocks) / data.dtype.type(count)
    out = xp.subtract(blocks, _rows(mean, blocks))
    var = _channel_dot(out, out) / data.dtype.type(count)
    inv = (1.0 / xp.sqrt(var + eps)).astype(data.dtype, copy=False)
    out *= _rows(inv if w is None else inv * w._data, blocks)
    parents = [x]
    if w is not None:
        parents.append(w)
    if b is not None:
        out += _rows(b._data, blocks)
        parents.append(b)
    result = make(from_blocks(out, data.shape, order), tuple(parents), batch_norm_backward,
                  ((0,) + tuple(range(2, data.ndim)), eps, w is not None, b is not None, (mean, inv)))
    return result, mean, var


@register("batch_norm")
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of ``input`` (N, C, ...) and scale/shift it (``torch.nn.functional.batch_norm``).

    Training (or no running estimates): batch statistics over every dim but 1,
    and the running estimates (if given) updated in place:
    ``running_mean <- (1 - momentum) running_mean + momentum mean`` and
    ``running_var <- (1 - momentum) running_var + momentum var * n / (n - 1)``.
    Evaluation: ``(x - running_mean) / sqrt(running_var + eps)``.
    """
    op = "batch_norm"
    x = _floating_input(input, op, 2)
    ndim, channels = x.ndim, x.shape[1]
    dims = (0,) + tuple(range(2, ndim))
    count = x._data.size // max(channels, 1)
    use_batch = training or running_mean is None or running_var is None
    if use_batch:
        if count <= 1:
            raise ValueError(f"{op}: expected more than 1 value per channel when training, got input "
                             f"{tuple(x.shape)}")
        w, b = _same_dtype(weight, x), _same_dtype(bias, x)
        if w is not False and b is not False:  # one node; mixed dtypes or bad shapes: composed (promotion, errors)
            out, mean, var = _batch_norm_train(x, w, b, eps)
            stats = mean, var
        else:
            mean = x.mean(dim=dims, keepdim=True)
            centred = x - mean
            var = (centred * centred).mean(dim=dims, keepdim=True)
            out = centred * (var + eps) ** -0.5
            stats = mean._data, var._data
        if training and running_mean is not None:
            _update_running(running_mean, stats[0].reshape(channels), momentum, op)
        if training and running_var is not None:
            _update_running(running_var, stats[1].reshape(channels) * (count / (count - 1)), momentum, op)
        if w is not False and b is not False:
            return out
    else:
        rm = _per_channel(running_mean, channels, ndim, "running_mean", op)
        rv = _per_channel(running_var, channels, ndim, "running_var", op)
        out = (x - rm.detach()) * (rv.detach() + eps) ** -0.5
    w = _per_channel(weight, channels, ndim, "weight", op)
    b = _per_channel(bias, channels, ndim, "bias", op)
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out


def _same_dtype(t, x: Tensor):
    """``t`` (None, or a (C,) weight/bias) as a Tensor if it has ``x``'s dtype, else False."""
    if t is None:
        return None
    t = t if isinstance(t, Tensor) else Tensor(t)
    return t if t._data.dtype == x._data.dtype and t._data.ndim == 1 and t.shape[0] == x.shape[1] else False


def _update_running(buffer, stat, momentum: float, op: str) -> None:
    """``buffer <- (1 - momentum) buffer + momentum stat``, in place (a new version for in-place checks)."""
    if not isinstance(buffer, Tensor):
        raise TypeError(f"{op}: running statistics must be Tensors (updated in place), got {type(buffer).__name__}")
    if tuple(buffer.shape) != stat.shape:
        raise ValueError(f"{op}: running statistics of shape {tuple(buffer.shape)} do not fit {stat.shape[0]} channels")
    data = buffer._data  # the array itself: the update is never part of a graph
    data *= 1.0 - momentum
    data += (momentum * stat).astype(data.dtype, copy=False)
    bump_version(buffer)


@rule("layer_norm", reads=(0, 1), gives=NEW, shows=shown_as("NativeLayerNormBackward0"))
def layer_norm_backward(g, out, ins, node):
    """y = xhat w + b with xhat = (x - mean) / s, s = sqrt(var + eps), over the D values of each row:

    ``dL/db = sum G``,  ``dL/dw = sum G xhat`` (sums over the rows),
    ``dL/dx = (H - mean(H) - xhat * mean(H xhat)) / s`` with ``H = G w``
    (means along the row: the mean and the variance depend on x).  With
    ``create_graph`` the same formula is recorded from the inputs as ops.
    """
    normalized, eps, has_w, has_b, saved = node._ctx
    prev = node._prev
    x = ins[0]
    w = ins[1] if has_w else None
    grad_x = None
    if isinstance(g, Tensor):
        dims = tuple(range(-len(normalized), 0))
        lead = tuple(range(len(x.shape) - len(normalized)))
        centred = x - x.mean(dim=dims, keepdim=True)
        s = ((centred * centred).mean(dim=dims, keepdim=True) + eps).sqrt()
        xhat = centred / s
        h = g if w is None else g * w
        if prev[0].requires_grad:
            grad_x = (h - h.mean(dim=dims, keepdim=True) - xhat * (h * xhat).mean(dim=dims, keepdim=True)) / s
        over_rows = (lambda t: t.sum(dim=lead)) if lead else (lambda t: t)  # one sample: nothing to sum
        g_sum = over_rows(g) if has_b and prev[-1].requires_grad else None
        gx_sum = over_rows(g * xhat) if has_w and prev[1].requires_grad else None
    else:
        xhat, s = saved  # (M, D) rows, (M, 1)
        size = xhat.shape[1]
        g_rows = g.reshape(-1, size)
        g_sum = g_rows.sum(axis=0).reshape(normalized) if has_b and prev[-1].requires_grad else None
        gx_sum = (g_rows * xhat).sum(axis=0).reshape(normalized) if has_w and prev[1].requires_grad else None
        if prev[0].requires_grad:
            h = g_rows if w is None else g_rows * w.reshape(size)
            rows = xhat * ((h * xhat).sum(axis=1, keepdims=True) * (1.0 / size))
            rows += h.sum(axis=1, keepdims=True) * (1.0 / size)
            rows = h - rows
            rows /= s
            grad_x = rows.reshape(x.shape)
    grads = [grad_x]
    if has_w:
        grads.append(gx_sum)
    if has_b:
        grads.append(g_sum)
    return tuple(grads)


@register("layer_norm")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    r"""``(x - mean) / sqrt(var + eps) * weight + bias`` over the last ``len(normalized_shape)`` dims.

    ``var`` is the biased variance (divided by N), as in PyTorch;
    ``weight`` and ``bias`` have the shape ``normalized_shape``.
    """
    op = "layer_norm"
    x = _floating_input(input, op, 0)
    shape = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) \
        else tuple(int(n) for n in normalized_shape)
    k = len(shape)
    if x.ndim < k or tuple(x.shape[x.ndim - k:]) != shape:
        raise ValueError(f"{op}: normalized_shape {shape} must be the input's last dimensions, "
                         f"got input shape {tuple(x.shape)}")
    w, b = _affine(weight, shape, "weight", op), _affine(bias, shape, "bias", op)
    size = math.prod(shape)
    if size and all(t is None or t._data.dtype == x._data.dtype for t in (w, b)):
        return _layer_norm_rows(x, shape, w, b, eps)
    # mixed dtypes promote as the composed ops do; an empty row has no mean to divide by
    dims = tuple(range(-k, 0))
    centred = x - x.mean(dim=dims, keepdim=True)
    out = centred / ((centred * centred).mean(dim=dims, keepdim=True) + eps).sqrt()
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out


def _affine(t, shape: tuple, name: str, op: str):
    """``weight``/``bias`` as a Tensor of the normalized shape (or None)."""
    if t is None:
        return None
    t = t if isinstance(t, Tensor) else Tensor(t)
    if tuple(t.shape) != shape:
        raise ValueError(f"{op}: {name} of shape {tuple(t.shape)} must have the normalized shape {shape}")
    return t


def _layer_norm_rows(x: Tensor, shape: tuple, w, b, eps: float) -> Tensor:
    """The forward as one node over (M, D) rows, in the composed ops' order (so the same numbers)."""
    data = x._data
    xp = array_module(data)
    size = math.prod(shape)
    rows = data.reshape(-1, size)
    centred = rows - rows.sum(axis=1, keepdims=True) * (1.0 / size)
    var = (centred * centred).sum(axis=1, keepdims=True) * (1.0 / size)
    s = xp.sqrt(var + eps)
    centred /= s  # now xhat
    out = centred * w._data.reshape(size) if w is not None else centred.copy()
    parents = [x]
    if w is not None:
        parents.append(w)
    if b is not None:
        out += b._data.reshape(size)
        parents.append(b)
    return make(out.reshape(data.shape), tuple(parents), layer_norm_backward,
                (shape, eps, w is not None, b is not None, (centred, s)))


@register("group_norm")
def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalise each sample over groups of ``C / num_groups`` channels (and all space), then scale/shift per channel."""
    op = "group_norm"
    x = _floating_input(input, op, 2)
    n, channels = x.shape[:2]
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)) or num_groups < 1 \
            or channels % num_groups:
        raise ValueError(f"{op}: num_groups must be a positive divisor of the {channels} channels, got {num_groups!r}")
    grouped = x.reshape(n, num_groups, x._data.size // max(n * num_groups, 1))
    centred = grouped - grouped.mean(dim=2, keepdim=True)
    var = (centred * centred).mean(dim=2, keepdim=True)
    out = (centred * (var + eps) ** -0.5).reshape(x.shape)
    w = _per_channel(weight, channels, x.ndim, "weight", op)
    b = _per_channel(bias, channels, x.ndim, "bias", op)
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out


def dropout2d(input, p: float = 0.5, training: bool = True, generator=None) -> Tensor:
    """Zero whole channels of ``input`` (N, C, H, W) with probability ``p``, scale the rest by ``1 / (1 - p)``.

    The mask is drawn per (sample, channel), the first two dims, whatever the
    rank, as PyTorch 2's ``feature_dropout``: a 3-D input is (N, C, L) and a
    2-D one (N, C) (each element its own channel); both with PyTorch's
    warning.  Masks come from taugrad's default generator unless
    ``generator`` is given.
    """
    op = "dropout2d"
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: p must be in [0, 1], got {p}")
    x = _floating_input(input, op, 2)
    if x.ndim not in (3, 4):
        warnings.warn(f"{op}: Received a {x.ndim}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with "
                      "2 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", UserWarning, stacklevel=3)
    elif x.ndim == 3:
        warnings.warn(f"{op}: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This "
                      "behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", UserWarning, stacklevel=3)
    if not training or p == 0.0:
        return x
    shape = tuple(x.shape[:2]) + (1,) * (x.ndim - 2)
    if p == 1.0:
        scale = array_module(x._data).zeros(shape, dtype=x._data.dtype)
    else:  # drawn on the host from the device's generator, then moved (as every random op)
        keep = get_generator(generator, device_of(x._data)).random(shape) >= p
        scale = move_like((keep * (1.0 / (1.0 - p))).astype(x._data.dtype), x._data)
    return forward_of("mul")(x, constant(scale))


# ---------------------------------------------------------------------------
# interpolate
# ---------------------------------------------------------------------------


def _scale(n_in: int, n_out: int, factor, align_corners: bool) -> float:
    """PyTorch's source-per-destination step (``area_pixel_compute_scale``)."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / factor if factor is not None else n_in / n_out


def _nearest_matrix(n_in: int, n_out: int, factor) -> np.ndarray:
    """out[i] = in[min(floor(i * scale), n_in - 1)], the step in float32 as PyTorch's kernel."""
    if n_out == n_in:
        index = np.arange(n_out)
    else:
        scale = np.float32(1.0 / factor if factor is not None else n_in / n_out)
        index = np.minimum(np.floor(np.arange(n_out, dtype=np.float32) * scale).astype(np.int64), n_in - 1)
    m = np.zeros((n_out, n_in))
    m[np.arange(n_out), index] = 1.0
    return m


def _linear_matrix(n_in: int, n_out: int, factor, align_corners: bool) -> np.ndarray:
    """Linear interpolation weights: out[i] = (1 - t) in[i0] + t in[i1] at source ``scale (i + 1/2) - 1/2``."""
    scale = _scale(n_in, n_out, factor, align_corners)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * scale if align_corners else np.maximum(scale * (dst + 0.5) - 0.5, 0.0)
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    t = np.clip(src - i0, 0.0, 1.0)
    m = np.zeros((n_out, n_in))
    np.add.at(m, (np.arange(n_out), i0), 1.0 - t)
    np.add.at(m, (np.arange(n_out), i1), t)
    return m


def _nearest_exact_matrix(n_in: int, n_out: int, factor) -> np.ndarray:
    """out[i] = in[min(floor((i + 1/2) * scale), n_in - 1)]: pixel centres, the step in float32 as PyTorch's."""
    scale = np.float32(1.0 / factor if factor is not None else n_in / n_out)
    index = np.minimum(np.floor((np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * scale).astype(np.int64),
                       n_in - 1)
    m = np.zeros((n_out, n_in))
    m[np.arange(n_out), index] = 1.0
    return m


def _area_matrix(n_in: int, n_out: int) -> np.ndarray:
    """Adaptive average pooling: out[i] is the mean of in[floor(i n_in / n_out) : ceil((i + 1) n_in / n_out)]."""
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        m[i, start:end] = 1.0 / (end - start)
    return m


_CUBIC_A = -0.75  # PyTorch's (and Keys's) cubic convolution constant


def _cubic_matrix(n_in: int, n_out: int, factor, align_corners: bool) -> np.ndarray:
    """Cubic convolution (Keys, 1981) with a = -0.75: out[i] = sum_k w_k(t) in[clamp(i0 - 1 + k)], k = 0..3,
    at source ``x = scale (i + 1/2) - 1/2`` (``scale i`` with align_corners), ``i0 = floor(x)``, ``t = x - i0``;
    ``w = (c2(t + 1), c1(t), c1(1 - t), c2(2 - t))`` with ``c1(x) = ((a + 2) x - (a + 3)) x^2 + 1`` and
    ``c2(x) = ((a x - 5a) x + 8a) x - 4a``; indices past the edge read the edge, as PyTorch's."""
    a = _CUBIC_A
    scale = _scale(n_in, n_out, factor, align_corners)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * scale if align_corners else scale * (dst + 0.5) - 0.5
    i0 = np.floor(src).astype(np.int64)
    t = src - i0

    def c1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def c2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (c2(t + 1.0), c1(t), c1(1.0 - t), c2(2.0 - t))
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    for k, w in enumerate(weights):
        np.add.at(m, (rows, np.clip(i0 - 1 + k, 0, n_in - 1)), w)
    return m


def _interpolation_matrix(mode: str, n_in: int, n_out: int, factor, align_corners) -> np.ndarray:
    if mode == "nearest":
        return _nearest_matrix(n_in, n_out, factor)
    if mode == "nearest-exact":
        return _nearest_exact_matrix(n_in, n_out, factor)
    if mode == "area":
        return _area_matrix(n_in, n_out)
    if mode == "bicubic":
        return _cubic_matrix(n_in, n_out, factor, bool(align_corners))
    return _linear_matrix(n_in, n_out, factor, bool(align_corners))


@register("interpolate")
def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of ``input`` (N, C, L) or (N, C, H, W): ``mode`` 'nearest', 'nearest-exact',
    'area', 'linear' (3-D), 'bilinear' or 'bicubic' (4-D), with PyTorch's pixel conventions (``align_corners``
    for the linear and cubic modes).  Each spatial dim is resized by a matrix product, so the gradient is the
    transposed resize."""
    op = "interpolate"
    x = _floating_input(input, op, 3)
    if antialias:
        raise NotImplementedError(f"{op}: antialias=True is not supported (it would low-pass filter before "
                                  f"downsampling, as PyTorch's bilinear and bicubic modes can)")
    spatial = x.ndim - 2
    if spatial not in (1, 2):
        raise ValueError(f"{op}: supports 3-D and 4-D inputs, got shape {tuple(x.shape)}")
    allowed = {"nearest": (1, 2), "nearest-exact": (1, 2), "area": (1, 2), "linear": (1,), "bilinear": (2,),
               "bicubic": (2,)}
    if mode not in allowed or spatial not in allowed[mode]:
        raise ValueError(f"{op}: mode {mode!r} does not fit a {x.ndim}-D input (nearest, nearest-exact and area "
                         f"for 3-D and 4-D, linear for 3-D, bilinear and bicubic for 4-D)")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError(f"{op}: align_corners option can only be set with the interpolating modes: "
                         f"linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: give exactly one of size and scale_factor")
    in_sizes = tuple(x.shape[2:])
    if size is not None:
        sizes = tuple(size) if isinstance(size, (list, tuple)) else (size,) * spatial
        factors = (None,) * spatial
    else:
        factors = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * spatial
        if any(not f > 0 for f in factors):
            raise ValueError(f"{op}: scale_factor must be positive, got {scale_factor}")
        sizes = tuple(int(math.floor(n * f)) for n, f in zip(in_sizes, factors))
        if recompute_scale_factor:
            factors = (None,) * spatial
    if len(sizes) != spatial or any(int(s) < 1 for s in sizes):
        raise ValueError(f"{op}: output size {sizes} must be {spatial} positive int(s)")
    dtype = x._data.dtype
    matrices = [_interpolation_matrix(mode, n, int(s), f, align_corners).astype(dtype)
                for n, s, f in zip(in_sizes, sizes, factors)]
    matmul = forward_of("matmul")
    xp = array_module(x._data)  # the matrices are built on the host, then moved to x's device
    out = matmul(x, constant(xp.asarray(matrices[-1].T)))
    if spatial == 2:
        out = matmul(constant(xp.asarray(matrices[0])), out)
    return out

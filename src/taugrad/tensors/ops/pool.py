"""Pooling: max (with argmax indices), average and adaptive pooling over 1-D and 2-D maps.

Max pooling picks one input per window, ``out = x[argmax]``, so its gradient
goes to the argmax alone::

    dL/dx = zeros(x.shape);  dL/dx[argmax(window)] += G[window]

Ties go to the first maximum in the window, scanning rows then columns (as
PyTorch); a NaN wins over every number.  Where windows do not overlap each
input is picked at most once and the scatter is a plain assignment, else the
gradients of a pixel picked by several windows are summed (``bincount``).
The scatter is the adjoint of a gather, so its own gradient is the gather
again (``index_scatter``): max pooling differentiates to any order.

Average pooling is linear: a convolution of each channel with a ones kernel,
divided by the window's element count (PyTorch's ``count_include_pad`` and
``ceil_mode`` rules).  Adaptive average pooling over bins
``[floor(i H / OH), ceil((i + 1) H / OH))`` is ``P_h x P_w^T`` with averaging
matrices ``P``; both are built from differentiable ops.
"""
from __future__ import annotations

import math

import numpy as np

from taugrad.tensors.core.args import tuple_of
from taugrad.tensors.core.node import Tensor, array_module, constant, make
from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.rule import NEW, forward_of, register, rule

_INT64 = np.int64




def _input(x, op: str, dims: int) -> Tensor:
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x._data.ndim != dims + 2:
        raise ValueError(f"{op}: expected a {dims + 2}-D input (batch, channels, "
                         f"{'length' if dims == 1 else 'H, W'}), got shape {tuple(x.shape)}")
    return x


def pool_out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output length: floor (or ceil) of (n + 2p - d(k-1) - 1)/s, plus 1;
    in ceil mode a last window that would start in the right padding is dropped."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _window(i: int, d: int, s: int, n: int) -> slice:
    return slice(i * d, i * d + s * (n - 1) + 1, s)


# ---------------------------------------------------------------------------
# the gather-by-argmax node shared by max pooling and adaptive max pooling
# ---------------------------------------------------------------------------


@rule("max_pool", gives=NEW)
def max_pool_backward(g, out, ins, node):
    """Z = X[argmax of each window]:  dX = zeros with G added at each window's argmax.

    A window that holds only padding (possible with dilation) gives -inf and
    sends its gradient nowhere: its index points one past the end, a slot dropped here.
    """
    flat, unique, spill = node._ctx
    shape = tuple(ins[0].shape)
    total = math.prod(shape)
    slots = total + 1 if spill else total
    if isinstance(g, Tensor):
        grad = A.scatter_add(g.reshape(-1), flat.reshape(-1), (slots,), unique)
        return ((grad[:total] if spill else grad).reshape(shape),)
    if unique:
        grad = array_module(g).zeros(slots, dtype=g.dtype)
        grad[flat.reshape(-1)] = g.reshape(-1)
    else:
        grad = array_module(g).bincount(flat.reshape(-1), weights=g.reshape(-1), minlength=slots).astype(
            g.dtype, copy=False)
    return ((grad[:total] if spill else grad).reshape(shape),)


def _gathered(x: Tensor, values, local, unique: bool, return_indices: bool, empty=None):
    """The pooled node (its rule scatters to ``local``, flat indices within each (n, c) plane).

    ``empty``: None, or a mask (broadcasting to the output) of windows with no input in them.
    """
    n, c = x.shape[:2]
    plane = math.prod(x.shape[2:])
    xp = array_module(local)
    flat = local + (xp.arange(n * c, dtype=_INT64) * plane).reshape((n, c) + (1,) * (local.ndim - 2))
    spill = empty is not None
    if spill:
        flat = xp.where(empty, n * c * plane, flat)
    out = make(values, (x,), max_pool_backward, (flat, unique, spill))
    if return_indices:
        return out, constant(local)
    return out


def _first_inside(n_out: int, k: int, s: int, p: int, d: int, n: int):
    """Per output position along one axis: whether its window meets the input, and PyTorch's
    start index (the first window position at or after 0)."""
    start = np.arange(n_out, dtype=_INT64) * s - p
    first = np.where(start < 0, start + ((-start + d - 1) // d) * d, start)
    inside = np.zeros(n_out, dtype=bool)
    for i in range(k):
        pos = start + i * d
        inside |= (pos >= 0) & (pos < n)
    return inside, first


@rule("max_pool_tiles", gives=NEW)
def max_pool_tiles_backward(g, out, ins, node):
    """Z = max over non-overlapping kh x kw tiles:  dX[tile offset k] = G where the tile's argmax is k, else 0.

    ``arg`` holds each tile's first-maximum offset ``k = i * kw + j`` (in the
    memory order ``order`` of the input).  The gradient is ``G`` times the
    argmax one-hot, linear in ``G`` with a constant factor, so with
    ``create_graph`` it is that product as ops and differentiates again.
    """
    arg, kernel, order = node._ctx
    kh, kw = kernel
    x = ins[0]
    back = tuple(np.argsort(order))
    if isinstance(g, Tensor):
        n, c, oh, ow = g.shape
        xp = array_module(arg)
        offsets = (xp.arange(kh)[:, None] * kw + xp.arange(kw)).reshape(1, 1, 1, kh, 1, kw)
        onehot = constant((arg.transpose(back)[:, :, :, None, :, None] == offsets).astype(g._data.dtype))
        return ((g.reshape(n, c, oh, 1, ow, 1) * onehot).reshape(tuple(x.shape)),)
    xp = array_module(g)
    grad = xp.empty_like(x, dtype=g.dtype)  # the input's memory layout
    g_mem = g.transpose(order)
    for i in range(kh):
        for j in range(kw):
            xp.multiply(g_mem, arg == i * kw + j, out=grad[:, :, i::kh, j::kw].transpose(order))
    return (grad,)


def _memory_order(a) -> tuple:
    """The axes of ``a`` from the largest stride to the smallest (``a.transpose(order)`` walks memory in order)."""
    return tuple(int(i) for i in np.argsort([-abs(s) for s in a.strides], kind="stable"))


def _max_pool_tiles(x: Tensor, kernel):
    """Max pooling with stride = kernel over a map the kernel tiles exactly; None if a NaN needs the general path.

    Each of the kh*kw tile offsets is one strided view of the input
    (``x[:, :, i::kh, j::kw]``), read in the input's memory order (a
    convolution's channels-last or batch-last output is read along whole runs
    of contiguous values): the maximum is kh*kw - 1 elementwise passes, and
    the first-maximum offset (rows, then columns, as PyTorch) a count of the
    leading offsets that are not the maximum.
    """
    data = x._data
    kh, kw = kernel
    xp = array_module(data)
    order = _memory_order(data)
    views = [data[:, :, i::kh, j::kw].transpose(order) for i in range(kh) for j in range(kw)]
    best = views[0].copy() if len(views) == 1 else xp.maximum(views[0], views[1])
    for view in views[2:]:
        xp.maximum(best, view, out=best)
    on_host = isinstance(data, np.ndarray)
    if on_host and data.dtype.kind == "f" and xp.isnan(best).any():  # PyTorch's NaN index rule: the general path
        return None
    # the first maximum's offset = how many leading offsets are not the maximum: sums of running
    # "not yet" masks (putmask with these data-dependent masks took 10x longer)
    arg = xp.zeros(best.shape, dtype=np.int8 if kh * kw < 128 else np.int16)
    before = None
    for view in views[:-1]:
        before = view != best if before is None else xp.logical_and(before, view != best, out=before)
        arg += before
    if not on_host and data.dtype.kind == "f":
        # a device is not asked whether a tile holds NaN (the host would wait): every tile takes
        # PyTorch's NaN index, its last NaN, which changes only the tiles that hold one
        for k, view in enumerate(views):
            xp.putmask(arg, view != view, k)
    return make(best.transpose(tuple(np.argsort(order))), (x,), max_pool_tiles_backward, (arg, kernel, order))


# ---------------------------------------------------------------------------
# max pooling
# ---------------------------------------------------------------------------


def _max_pool2d(x: Tensor, kernel, stride, padding, dilation, ceil_mode: bool, return_indices: bool, op: str):
    data = x._data
    if data.dtype.kind not in "fiu":
        raise TypeError(f"{op}: not supported for dtype {data.dtype}")
    n, c, h, w = data.shape
    for k, p, d in zip(kernel, padding, dilation):
        if p > k // 2:
            raise ValueError(f"{op}: padding {padding} must be at most half the kernel size {kernel}")
    oh = pool_out_size(h, kernel[0], stride[0], padding[0], dilation[0], ceil_mode)
    ow = pool_out_size(w, kernel[1], stride[1], padding[1], dilation[1], ceil_mode)
    if oh < 1 or ow < 1:
        raise ValueError(f"{op}: the input {tuple(x.shape)} is too small for kernel {kernel} "
                         f"(padding {padding}, dilation {dilation}): output size ({oh}, {ow})")
    (ph, pw), (sh, sw), (dh, dw) = padding, stride, dilation
    hp = max(h + 2 * ph, (oh - 1) * sh + dh * (kernel[0] - 1) + 1)
    wp = max(w + 2 * pw, (ow - 1) * sw + dw * (kernel[1] - 1) + 1)
    xp = array_module(data)
    if (ph, pw) == (0, 0) and (hp, wp) == (h, w):
        padded = data
    else:
        low = -np.inf if data.dtype.kind == "f" else np.iinfo(data.dtype).min
        padded = xp.full((n, c, hp, wp), low, dtype=data.dtype)
        padded[:, :, ph:ph + h, pw:pw + w] = data
    windows = [(i, j) for i in range(kernel[0]) for j in range(kernel[1])]
    best = arg = None
    for k, (i, j) in enumerate(windows):
        v = padded[:, :, _window(i, dh, sh, oh), _window(j, dw, sw, ow)]
        if best is None:
            best = v.copy()
            arg = xp.zeros(best.shape, dtype=np.int16 if len(windows) < 2**15 else _INT64)
            continue
        wins = xp.greater(v, best)  # strict: the first maximum keeps a tie
        xp.maximum(best, v, out=best)  # a NaN propagates, as PyTorch
        xp.putmask(arg, wins, k)
    # PyTorch points at the last NaN of the window (on a device, without asking whether there is one)
    if data.dtype.kind == "f" and (not isinstance(data, np.ndarray) or xp.isnan(best).any()):
        for k, (i, j) in enumerate(windows):
            xp.putmask(arg, xp.isnan(padded[:, :, _window(i, dh, sh, oh), _window(j, dw, sw, ow)]), k)
    ki, kj = xp.divmod(arg.astype(_INT64), kernel[1])
    rows = xp.arange(oh, dtype=_INT64)[:, None] * sh + ki * dh - ph
    cols = xp.arange(ow, dtype=_INT64) * sw + kj * dw - pw
    local = rows * w + cols
    unique = all(s >= d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))
    row_in, row_first = _first_inside(oh, kernel[0], sh, ph, dh, h)
    col_in, col_first = _first_inside(ow, kernel[1], sw, pw, dw, w)
    empty = None
    if not (row_in.all() and col_in.all()):  # windows of padding only: -inf, PyTorch's index, no gradient
        empty = xp.asarray(~(row_in[:, None] & col_in[None, :]))  # index facts, computed on the host
        best[..., empty] = -np.inf if data.dtype.kind == "f" else np.iinfo(data.dtype).min
        local = xp.where(empty, xp.asarray(row_first[:, None] * w + col_first[None, :]), local)
    return _gathered(x, best, local, unique, return_indices, empty)


def _pool_args(kernel_size, stride, padding, dilation, n: int, op: str):
    kernel = tuple_of(kernel_size, n, "kernel_size", op, 1)
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else tuple_of(stride, n, "stride", op, 1)
    return kernel, stride, tuple_of(padding, n, "padding", op, 0), tuple_of(dilation, n, "dilation", op, 1)


@register("max_pool2d")
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over each (dilated) window of ``input`` (N, C, H, W); ``stride`` defaults to the kernel size.

    Padding counts as -inf (at most half the kernel).  ``return_indices=True``
    also returns each maximum's flat position ``h * W + w`` in its plane (int64).
    """
    op = "max_pool2d"
    x = _input(input, op, 2)
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation, 2, op)
    if (stride == kernel and padding == (0, 0) and dilation == (1, 1) and not return_indices
            and x._data.dtype.kind in "fiu" and x.shape[0] * x.shape[1] > 0
            and x.shape[2] % kernel[0] == 0 and x.shape[3] % kernel[1] == 0 and x.shape[2] and x.shape[3]):
        tiled = _max_pool_tiles(x, kernel)
        if tiled is not None:
            return tiled
    return _max_pool2d(x, kernel, stride, padding, dilation, bool(ceil_mode), return_indices, op)


@register("max_pool1d")
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over each window of ``input`` (N, C, L): ``max_pool2d`` over a map of height 1."""
    op = "max_pool1d"
    x = _input(input, op, 1)
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation, 1, op)
    x2 = x.unsqueeze(2)
    result = _max_pool2d(x2, (1,) + kernel, (1,) + stride, (0,) + padding, (1,) + dilation, bool(ceil_mode),
                         return_indices, op)
    if return_indices:
        out, indices = result
        return out.squeeze(2), constant(indices._data[:, :, 0])
    return result.squeeze(2)


# ---------------------------------------------------------------------------
# average pooling
# ---------------------------------------------------------------------------


def _divisors(n: int, k: int, s: int, p: int, out: int, include_pad: bool) -> np.ndarray:
    """PyTorch's window sizes along one axis: clipped to input+padding, then (unless counted) to the input."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, n + p)
    size = end - start
    if not include_pad:
        size = np.minimum(end, n) - np.maximum(start, 0)
    return size


@register("avg_pool2d")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None) -> Tensor:
    """Mean over each window of ``input`` (N, C, H, W); padding is zeros.

    The divisor is the window's size clipped to the padded input, or (with
    ``count_include_pad=False``) to the input itself; ``divisor_override``
    replaces it.
    """
    op = "avg_pool2d"
    x = _input(input, op, 2)
    if x._data.dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating tensor, got dtype {x._data.dtype}")
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1, 2, op)
    n, c, h, w = x.shape
    if any(p > k // 2 for k, p in zip(kernel, padding)):
        raise ValueError(f"{op}: padding {padding} must be at most half the kernel size {kernel}")
    oh = pool_out_size(h, kernel[0], stride[0], padding[0], 1, ceil_mode)
    ow = pool_out_size(w, kernel[1], stride[1], padding[1], 1, ceil_mode)
    if oh < 1 or ow < 1:
        raise ValueError(f"{op}: the input {tuple(x.shape)} is too small for kernel {kernel}: output ({oh}, {ow})")
    extra_h = max(0, (oh - 1) * stride[0] + kernel[0] - h - 2 * padding[0])
    extra_w = max(0, (ow - 1) * stride[1] + kernel[1] - w - 2 * padding[1])
    planes = x.reshape(n * c, 1, h, w)
    if padding != (0, 0) or extra_h or extra_w:
        planes = forward_of("pad")(planes, (padding[1], padding[1] + extra_w, padding[0], padding[0] + extra_h))
    xp = array_module(x._data)
    ones = constant(xp.ones((1, 1) + kernel, dtype=x._data.dtype))
    sums = forward_of("conv2d")(planes, ones, None, stride).reshape(n, c, oh, ow)
    if divisor_override is not None:
        if not divisor_override:
            raise ValueError(f"{op}: divisor_override must be non-zero")
        return sums / float(divisor_override)
    dh = _divisors(h, kernel[0], stride[0], padding[0], oh, count_include_pad)
    dw = _divisors(w, kernel[1], stride[1], padding[1], ow, count_include_pad)
    return sums * constant(xp.asarray((1.0 / np.outer(dh, dw)).astype(x._data.dtype)))


@register("avg_pool1d")
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Mean over each window of ``input`` (N, C, L): ``avg_pool2d`` over a map of height 1."""
    op = "avg_pool1d"
    x = _input(input, op, 1)
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1, 1, op)
    return avg_pool2d(x.unsqueeze(2), (1,) + kernel, (1,) + stride, (0,) + padding, ceil_mode,
                      count_include_pad).squeeze(2)


# ---------------------------------------------------------------------------
# adaptive pooling
# ---------------------------------------------------------------------------


def _adaptive_size(output_size, in_hw, op: str) -> tuple:
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 2:
            raise ValueError(f"{op}: output_size must be an int or 2 ints (None keeps a size), got {output_size}")
        size = tuple(n if o is None else o for o, n in zip(output_size, in_hw))
    else:
        size = (output_size, output_size)
    size = tuple_of(size, 2, "output_size", op, 1)
    if any(n < 1 for n in in_hw):
        raise ValueError(f"{op}: cannot pool an empty map of size {tuple(in_hw)}")
    return size


def _bins(n: int, out: int):
    """Bin ``i`` covers ``[floor(i n / out), ceil((i + 1) n / out))`` (PyTorch's adaptive bins)."""
    return [((i * n) // out, -((-(i + 1) * n) // out)) for i in range(out)]


def _averaging_matrix(n: int, out: int, dtype) -> np.ndarray:
    m = np.zeros((out, n))
    for i, (lo, hi) in enumerate(_bins(n, out)):
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m.astype(dtype)


@register("adaptive_avg_pool2d")
def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Average over ``output_size`` bins per axis: ``P_h x P_w^T`` with averaging matrices (linear)."""
    op = "adaptive_avg_pool2d"
    x = _input(input, op, 2)
    if x._data.dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating tensor, got dtype {x._data.dtype}")
    oh, ow = _adaptive_size(output_size, x.shape[2:], op)
    dtype = x._data.dtype
    matmul = forward_of("matmul")
    xp = array_module(x._data)  # the averaging matrices are built on the host, then moved to x's device
    across = matmul(x, constant(xp.asarray(_averaging_matrix(x.shape[3], ow, dtype).T)))
    return matmul(constant(xp.asarray(_averaging_matrix(x.shape[2], oh, dtype))), across)


@register("adaptive_max_pool2d")
def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max over ``output_size`` bins per axis (bins as ``adaptive_avg_pool2d``); the gradient goes to each argmax."""
    op = "adaptive_max_pool2d"
    x = _input(input, op, 2)
    n, c, h, w = x.shape
    oh, ow = _adaptive_size(output_size, (h, w), op)
    data = x._data
    xp = array_module(data)
    values = xp.empty((n, c, oh, ow), dtype=data.dtype)
    local = xp.empty((n, c, oh, ow), dtype=_INT64)
    for i, (h0, h1) in enumerate(_bins(h, oh)):
        for j, (w0, w1) in enumerate(_bins(w, ow)):
            region = data[:, :, h0:h1, w0:w1].reshape(n, c, (h1 - h0) * (w1 - w0))
            best = region.argmax(axis=-1)  # the first maximum (a NaN counts as the maximum)
            values[:, :, i, j] = xp.take_along_axis(region, best[..., None], axis=-1)[..., 0]
            local[:, :, i, j] = (h0 + best // (w1 - w0)) * w + w0 + best % (w1 - w0)
    unique = h % oh == 0 and w % ow == 0  # exact bins partition the map
    return _gathered(x, values, local, unique, return_indices)

"""Convolutions (``conv1d``, ``conv2d``, ``conv_transpose2d``) and im2col (``unfold``/``fold``).

A 2-D convolution (cross-correlation, as in PyTorch) of ``x`` (N, C, H, W) with
``w`` (O, C/G, kh, kw), stride ``s``, padding ``p``, dilation ``d``, ``G`` groups::

    out[n, o, y, x] = b[o] + sum_{c, i, j} w[o, c, i, j] * xpad[n, g(o)*C/G + c, y*s + i*d, x*s + j*d]

is a matrix product once the windows are laid out as columns (im2col,
``unfold``): ``cols[n, (c, i, j), (y, x)] = xpad[n, c, y*s + i*d, x*s + j*d]``,
``out[n] = W cols[n]`` with ``W`` the weight as an (O, C*kh*kw) matrix.  The
adjoint of im2col is col2im (``fold``): it *adds* each column entry back to
the pixel it came from.  So, with ``G`` the upstream gradient:

* ``dL/dx = conv_transpose2d(G, w)`` -- col2im of ``W^T G``, the padding cropped;
* ``dL/dw = sum_n G[n] cols[n]^T``;
* ``dL/db = G`` summed over batch and space.

A transposed convolution is the adjoint of a convolution in its input, so its
rules are the same three maps the other way round: ``dL/dy = conv2d(G, w)``
and ``dL/dw = sum_n y[n] im2col(G)[n]^T``.  Every map is bilinear and written
with the ops here plus ``@``, ``reshape`` and ``sum``, so with
``create_graph=True`` the rules record graphs that differentiate again.

Layouts (measured, see the README's CNN section): the columns are filled by
one strided slice copy per kernel offset (``kh * kw`` copies), never by
``sliding_window_view`` + ``tensordot`` or ``einsum``, which were 2-4x
slower.  Five column layouts: channels-last rows ``(N*OH*OW, kh*kw*C)``
with one GEMM for the whole batch (when there are at least as many channels
as output columns, or the map is small; the product comes out as
(N, OH, OW, O) memory); the same rows with one ``(O, K) x (K, OH*OW)``
product per sample (enough of them on a map of 64 outputs or more: the
result is (N, O, OH, OW) memory, torch's layout, and a stride-1 input
gradient is a convolution of G with the flipped kernel); the image layout
for enough channels on a larger map: the (N, C, H, W) memory itself, its im2col over the kernel columns
only, ``(N, C*kw, Hp*OW)``, kh times smaller than full columns, and for
each kernel row one batched ``(O, C*kw) x (C*kw, OH*OW)`` product on a
strided view of it (rows Hp*OW apart), the output (N, O, OH, OW) as torch
lays it out, so BatchNorm, ReLU and the residual add around it read and
write the same memory order and nothing is copied at a layer boundary;
batch-last for few channels on a larger map: the input as (H, C, W, N)
memory, its im2col over the kernel columns only, ``(Hp, C*kw, OW*N)``,
and one ``(O, kh*C*kw) x (kh*C*kw, OW*N)`` GEMM per output row on a
contiguous block of it (the output, (OH, O, OW, N) memory); and
``(N, C*kh*kw, L)`` with one product per sample and group for grouped
convolutions (and first layers: few columns, many filters).  The forward
keeps its columns for the weight gradient (the image layout keeps nothing
but the input the graph holds anyway, batch-last its padded input, kw times
smaller; both make the columns again); they are freed with the graph after
``backward()``.  Their padded copies and columns come from buffers reused
across steps (``_WORKSPACES``), so a training step maps no fresh memory for
them; the image layout's input gradient at stride 1 is itself a convolution
(of the gradient with the flipped kernel), with no scatter-adds.
"""
from __future__ import annotations

import math
import sys
import threading

import numpy as np

from taugrad.grad_mode import STATE as _grad_mode
from taugrad.tensors.core.args import tuple_of
from taugrad.tensors.core.backend import ARRAY_MODULES
from taugrad.tensors.core.memory_format import channels_last, contiguous_format, format_order, is_laid_out
from taugrad.tensors.core.node import array_module, check_same_device, make, operand, Tensor
from taugrad.tensors.core.rule import NEW, forward_of, register, rule

# ---------------------------------------------------------------------------
# arguments
# ---------------------------------------------------------------------------


def _floating(t: Tensor, op: str, what: str) -> None:
    if t._data.dtype.kind != "f":
        raise TypeError(f"{op}: {what} must be a floating tensor, got dtype {t._data.dtype}")


def _check_pair(x: Tensor, w: Tensor, op: str) -> None:
    if type(x._data) is not type(w._data):  # arrays of two backends: maybe two devices
        check_same_device(op, x, w)
    _floating(x, op, "input")
    _floating(w, op, "weight")
    if x._data.dtype != w._data.dtype:
        raise TypeError(f"{op}: input ({x._data.dtype}) and weight ({w._data.dtype}) must have the same dtype")


def _bias(bias, x: Tensor, channels: int, op: str):
    if bias is None:
        return None
    bias = bias if isinstance(bias, Tensor) else operand(bias, x)
    if tuple(bias.shape) != (channels,):
        raise ValueError(f"{op}: bias of shape {tuple(bias.shape)} does not fit {channels} output channels "
                         f"(expected ({channels},))")
    if bias._data.dtype != x._data.dtype:
        raise TypeError(f"{op}: bias ({bias._data.dtype}) and input ({x._data.dtype}) must have the same dtype")
    return bias


def out_size(n: int, k: int, s: int, p: int, d: int) -> int:
    """Output length of a convolution along one axis: floor((n + 2p - d(k-1) - 1) / s) + 1."""
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


# ---------------------------------------------------------------------------
# im2col / col2im on arrays
# ---------------------------------------------------------------------------


def pad_array(x, ph: int, pw: int, value=0):
    """``x`` (N, C, H, W) with ``ph`` rows and ``pw`` columns of ``value`` on each side."""
    if not ph and not pw:
        return x
    n, c, h, w = x.shape
    out = array_module(x).full((n, c, h + 2 * ph, w + 2 * pw), value, dtype=x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def _window(i: int, d: int, s: int, n: int) -> slice:
    """The input positions kernel offset ``i`` meets over ``n`` outputs."""
    return slice(i * d, i * d + s * (n - 1) + 1, s)


def im2col_array(xpad, kernel, stride, dilation, out_hw):
    """Columns of the padded input (N, C, H, W): (N, C, kh, kw, OH, OW)."""
    n, c = xpad.shape[:2]
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = kernel, stride, dilation, out_hw
    cols = array_module(xpad).empty((n, c, kh, kw, oh, ow), dtype=xpad.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xpad[:, :, _window(i, dh, sh, oh), _window(j, dw, sw, ow)]
    return cols


def col2im_array(cols, padded_hw, kernel, stride, dilation):
    """The adjoint of :func:`im2col_array`: each column entry added back to its pixel of the padded input."""
    n, c, kh, kw, oh, ow = cols.shape
    (sh, sw), (dh, dw) = stride, dilation
    out = array_module(cols).zeros((n, c) + tuple(padded_hw), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, _window(i, dh, sh, oh), _window(j, dw, sw, ow)] += cols[:, :, i, j]
    return out


def _pointwise(kernel, stride, padding) -> bool:
    """A 1x1 kernel, stride 1, no padding: the columns are the pixels themselves (no copy)."""
    return kernel == (1, 1) and stride == (1, 1) and padding == (0, 0)


def channels_last_padded(x, ph: int, pw: int):
    """``x`` (N, C, H, W) as (N, H + 2 ph, W + 2 pw, C) with zero padding (a view if unpadded), in a
    buffer reused across steps (:data:`_WORKSPACES`; only the border is zeroed)."""
    xt = x.transpose(0, 2, 3, 1)
    if not ph and not pw:
        return xt
    n, h, w, c = xt.shape
    out = _WORKSPACES.empty(x, (n, h + 2 * ph, w + 2 * pw, c), x.dtype)
    out[:, :ph] = 0
    out[:, ph + h:] = 0
    out[:, ph:ph + h, :pw] = 0
    out[:, ph:ph + h, pw + w:] = 0
    out[:, ph:ph + h, pw:pw + w] = xt
    return out


def im2row_array(xpad, kernel, stride, dilation, out_hw):
    """Rows of the channels-last padded input (N, Hp, Wp, C): (N, OH, OW, kh, kw, C).

    ``rows[n, y, x, i, j, c] = xpad[n, y*s + i*d, x*s + j*d, c]``: seen as an
    (N*OH*OW, kh*kw*C) matrix it is one GEMM with the weight.  Without a
    column dilation, on contiguous pixels, the kw*C values of a kernel row
    are one run of ``xpad`` (the kw pixels side by side): one copy per
    kernel row, from an overlapping strided view of the windows (2.2x faster
    than nine copies of C-value runs for 32 channels); else one copy per
    kernel offset (also for an array that is not a backend's own: ``as_strided``
    builds its view outside NumPy's override protocols, which ``taugrad.compile``
    records through).
    """
    n, c = xpad.shape[0], xpad.shape[3]
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = kernel, stride, dilation, out_hw
    xp = array_module(xpad)
    rows = _WORKSPACES.empty(xpad, (n, oh, ow, kh, kw, c), xpad.dtype)
    s0, s1, s2, s3 = xpad.strides
    if dw == 1 and kw > 1 and s3 == xpad.itemsize and s2 == c * s3 and type(xpad) in ARRAY_MODULES:
        runs = rows.reshape(n, oh, ow, kh, kw * c)
        for i in range(kh):
            runs[:, :, :, i] = xp.lib.stride_tricks.as_strided(
                xpad[:, i * dh:], shape=(n, oh, ow, kw * c), strides=(s0, s1 * sh, s2 * sw, s3))
        return rows
    for i in range(kh):
        for j in range(kw):
            rows[:, :, :, i, j] = xpad[:, _window(i, dh, sh, oh), _window(j, dw, sw, ow)]
    return rows


def row2im_array(rows, padded_hw, stride, dilation):
    """The adjoint of :func:`im2row_array`: a channels-last (N, Hp, Wp, C) image of summed row entries."""
    n, oh, ow, kh, kw, c = rows.shape
    (sh, sw), (dh, dw) = stride, dilation
    out = array_module(rows).zeros((n,) + tuple(padded_hw) + (c,), dtype=rows.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, _window(i, dh, sh, oh), _window(j, dw, sw, ow)] += rows[:, :, :, i, j]
    return out


def _weight_rows(w):
    """The weight (O, C, kh, kw) as an (O, kh*kw*C) matrix matching :func:`im2row_array`'s columns."""
    return w.transpose(0, 2, 3, 1).reshape(w.shape[0], -1)


class _Workspaces:
    """Scratch arrays a convolution asks for at the same shapes every step, handed out again once free.

    A training step makes the same padded copies and column buffers each
    time; fresh ones of a few MB are mapped from the kernel and faulted in
    page by page every step (glibc hands large freed blocks back).  An
    array kept here is handed out again only when nothing but this pool
    refers to it (its reference count, which any view, graph node or caller
    holding it raises), so a buffer still in use is never overwritten.  At
    most ``keep`` arrays per shape, the oldest dropped first.
    """

    def __init__(self, keep: int = 4):
        self.keep = keep
        self._lock = threading.Lock()
        self._arrays = {}
        self._free = self._free_count()

    @staticmethod
    def _free_count() -> int:
        """The reference count of a kept array nobody else holds, as :meth:`empty` sees it."""
        probe = [object()]
        for a in probe:
            return sys.getrefcount(a)

    def empty(self, like, shape: tuple, dtype):
        """An uninitialised array of ``shape`` for a computation on ``like``: a free kept one, else a new
        one kept for later.

        Only for a plain array of a backend (NumPy's, CuPy's): an array of
        another type (``taugrad.compile`` records a step on a subclass) gets a
        fresh one, made through its module and never kept, so a recording
        sees each buffer made and a kept one never leaks into or out of it.
        """
        xp = ARRAY_MODULES.get(type(like))
        if xp is None:
            return array_module(like).empty(shape, dtype=dtype)
        key = (id(xp), shape, dtype)
        with self._lock:
            kept = self._arrays.setdefault(key, [])
            for a in kept:
                if sys.getrefcount(a) == self._free:
                    return a
            a = xp.empty(shape, dtype=dtype)
            kept.append(a)
            if len(kept) > self.keep:
                del kept[0]
            return a

    def clear(self) -> None:
        with self._lock:
            self._arrays.clear()


#: the buffers of the batch-last layout, reused across steps
_WORKSPACES = _Workspaces()


def batch_last_padded(x, ph: int, pw: int):
    """``x`` (N, C, H, W) as (H + 2 ph, C, W + 2 pw, N) memory with zero padding (a view if it already is).

    A copy is made in a reused buffer (:data:`_WORKSPACES`): only the border
    is zeroed, the interior is written over.
    """
    xt = x.transpose(2, 1, 3, 0)
    if not ph and not pw and xt.flags.c_contiguous:
        return xt
    h, c, w, n = xt.shape
    out = _WORKSPACES.empty(x, (h + 2 * ph, c, w + 2 * pw, n), x.dtype)
    if ph or pw:
        out[:ph] = 0
        out[ph + h:] = 0
        out[ph:ph + h, :, :pw] = 0
        out[ph:ph + h, :, pw + w:] = 0
    out[ph:ph + h, :, pw:pw + w] = xt
    return out


def batch_columns(xpad, kernel_w: int, stride_w: int, dilation_w: int, ow: int):
    """Column offsets of the batch-last padded input (Hp, C, Wp, N): (Hp, C, kw, OW, N).

    ``cols[y, c, j, x, n] = xpad[y, c, x*s + j*d, n]``: the im2col over the
    kernel's columns only, on every padded row.  The columns of output row
    ``y`` are then input rows ``y*s .. y*s + kh - 1`` of it, one contiguous
    (kh*C*kw, OW*N) block, so the kernel rows cost no copy and the buffer is
    kh times smaller than full columns (LeNet-5's first layer: 1.1 MB instead
    of 5 MB), in a buffer reused across steps.  One copy per kernel column,
    each moving runs of OW*N contiguous values.
    """
    hp, c, _, n = xpad.shape
    cols = _WORKSPACES.empty(xpad, (hp, c, kernel_w, ow, n), xpad.dtype)
    for j in range(kernel_w):
        cols[:, :, j] = xpad[:, :, _window(j, dilation_w, stride_w, ow)]
    return cols


def _row_block(cols, y: int, kh: int, sh: int, dh: int):
    """The (kh*C*kw, OW*N) columns of output row ``y`` (a view; a copy only with a row dilation)."""
    hp, c, kw, ow, n = cols.shape
    return cols[_rows(y, kh, sh, dh)].reshape(kh * c * kw, ow * n)


def _rows(y: int, kh: int, sh: int, dh: int) -> slice:
    """The padded input rows output row ``y`` meets: ``y*s + i*d`` for the kernel rows ``i``."""
    return slice(y * sh, y * sh + dh * (kh - 1) + 1, dh)


def _weight_blocks(w):
    """The weight (O, C, kh, kw) as an (O, kh*C*kw) matrix matching :func:`_row_block`'s rows."""
    return w.transpose(0, 2, 1, 3).reshape(w.shape[0], -1)


#: at most this many columns per product: one (6, 25) x (25, 50176) product ran 2.4x slower than 28
#: row-sized ones (BLAS's blocking suits panels that stay in cache; a 1-D convolution is one long row)
_COLUMNS = 4096


def _panels(length: int):
    """Column slices of at most ``_COLUMNS``."""
    return [slice(start, start + _COLUMNS) for start in range(0, length, _COLUMNS)] or [slice(0, 0)]


def _batch_forward(cols, w, stride, dilation, oh: int):
    """The convolution from :func:`batch_columns`: (OH, O, OW, N) memory, one GEMM per output row."""
    o, kh = w.shape[0], w.shape[2]
    ow, n = cols.shape[3], cols.shape[4]
    xp = array_module(cols)
    out = xp.empty((oh, o, ow, n), dtype=cols.dtype)
    w2 = _weight_blocks(w)
    panels = _panels(ow * n)
    for y in range(oh):
        block, row = _row_block(cols, y, kh, stride[0], dilation[0]), out[y].reshape(o, ow * n)
        for panel in panels:
            xp.matmul(w2, block[:, panel], out=row[:, panel])
    return out


def _batch_input_grad(g, w, padded_hw, stride, dilation):
    """col2im of ``W^T G`` on batch-last memory: a (Hp, C, Wp, N) image.

    Per kernel column ``j``, ``W_j^T G`` for every output row at once (one
    batched product: (kh*C, O) x (O, OW*N) per row), each kernel row ``i`` of
    it added to the pixels it came from (the adjoint of :func:`_row_block`
    and :func:`batch_columns`); one (OH, kh*C, OW*N) buffer serves every ``j``.
    """
    n, o, oh, ow = g.shape
    _, c, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    xp = array_module(g)
    g_rows = _grad_batch(g)
    part = xp.empty((oh, kh, c, ow, n), dtype=g.dtype)
    full = xp.zeros((padded_hw[0], c, padded_hw[1], n), dtype=g.dtype)
    panels = _panels(ow * n)
    for j in range(kw):
        w_j = w[:, :, :, j].transpose(0, 2, 1).reshape(o, kh * c).T
        for panel in panels:
            xp.matmul(w_j, g_rows[:, :, panel], out=part.reshape(oh, kh * c, ow * n)[:, :, panel])
        columns = _window(j, dw, sw, ow)
        for i in range(kh):
            full[_window(i, dh, sh, oh), :, columns] += part[:, i]
    return full


def _batch_weight_grad(g, cols, w_shape, stride, dilation):
    """``dW = sum over output rows y of G_y cols_y^T``, from :func:`batch_columns`.

    Summed as its transpose, (kh*C*kw, O) = cols_y G_y^T: that order ran 1.8x
    faster (LeNet-5's second layer, the ResNet block's convolutions).
    """
    o, c, kh, kw = w_shape
    g_rows = _grad_batch(g)
    panels = _panels(g_rows.shape[2])
    total = None
    for y in range(g.shape[2]):
        block = _row_block(cols, y, kh, stride[0], dilation[0])
        for panel in panels:
            part = block[:, panel] @ g_rows[y][:, panel].T
            total = part if total is None else total.__iadd__(part)
    return array_module(total).ascontiguousarray(total.T.reshape(o, kh, c, kw).transpose(0, 2, 1, 3))


def _grad_batch(g):
    """The upstream gradient (N, O, OH, OW) as OH matrices (O, OW*N) (free if it is batch-last)."""
    n, o, oh, ow = g.shape
    return g.transpose(2, 1, 3, 0).reshape(oh, o, ow * n)


def _grouped_outer(a, b):
    """``sum_n a[n, g] b[n, g]^T`` for a (N, G, P, L) and b (N, G, Q, L): (G, P, Q)."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return (a @ b.transpose(-1, -2)).sum(0)
    # per-sample products read ``b`` transposed in place; a tensordot over (n, L) copies it (4x slower measured)
    return (a @ b.swapaxes(-1, -2)).sum(0)


# ---------------------------------------------------------------------------
# the three maps on arrays
# ---------------------------------------------------------------------------


#: at most this many output positions per sample: small maps, where per-sample products are tiny
_SMALL_MAP = 64


#: the image layout's products are per sample: at least this many (channel, kernel column) pairs and
#: output pixels, or they are too small (LeNet-5's second layer, 30 x 100, ran 2x slower than batch-last)
_IMAGE_DEPTH = 16
_IMAGE_PIXELS = 256


#: the per-sample products of channels-last columns need this many columns per sample (C*kh*kw)
_SAMPLE_DEPTH = 64


#: per-sample planes for ungrouped convolutions with at most this many columns (C*kh*kw) ...
_PLANE_DEPTH = 32
#: ... and at least this many filters
_PLANE_FILTERS = 16


def _layout(c: int, oh: int, ow: int, groups: int, kw: int = 1, stride_h: int = 1, kh: int = 1, o: int = 0) -> str:
    """Where the column copies run: along channels ("rows" and "samples", channels-last), along
    image rows of the (N, C, H, W) memory itself ("image"), along the batch ("batch",
    batch-last) or per sample and group ("planes", grouped convolutions).

    The image layout on a map of at least ``_IMAGE_PIXELS`` outputs with
    enough channels (C*kw of them) for row-stride-1 products: it reads and
    writes (N, C, H, W) memory as torch's default layout has it, so the
    layers around it copy nothing, and holds kh times less than full
    columns (ResNet-20's 32-channel 16x16 stage: 219 MiB peak instead of 250,
    at the same step time).  Else channels-last when the runs of C values
    are at least as long as the image rows, or the map is small: on a map of
    at least ``_SMALL_MAP`` outputs with enough columns, one product per
    sample whose result is (N, O, OH, OW) memory ("samples"; ResNet-20's
    64-channel stage ran 5% slower so than with one GEMM for the batch, and
    gains the copy to torch's layout after it and the gradient's copy back);
    else one GEMM ("rows").  Batch-last for few channels on a larger map,
    where the copies move runs of OW*N values.  Few columns and many filters
    (a first layer on images: 1 or 3 channels into 16 or 32) take full
    columns per sample ("planes"), whose products give torch's layout with
    no copy in or out (ResNet-20's stem and the digits CNN's first layer
    ran 1.5x faster so; ``benchmarks/bench_conv_layouts.py``).
    """
    if groups != 1 or (c * kh * kw <= _PLANE_DEPTH and o >= _PLANE_FILTERS):
        return "planes"
    if c * kw >= _IMAGE_DEPTH and oh * ow >= _IMAGE_PIXELS and stride_h == 1:
        return "image"
    if c >= ow or oh * ow <= _SMALL_MAP:
        return "samples" if oh * ow >= _SMALL_MAP and c * kh * kw >= _SAMPLE_DEPTH else "rows"
    return "batch"


def image_columns(x, ph: int, pw: int, kernel_w: int, stride_w: int, dilation_w: int, ow: int):
    """Column offsets of the input (N, C, H, W) zero-padded by ``ph``, ``pw``, in its own layout:
    (N, C, kw, H + 2 ph, OW).

    ``cols[n, c, j, y, x] = xpad[n, c, y, x*s + j*d]``: the im2col over the
    kernel's columns only.  For kernel row ``i`` the columns of every output
    pixel of sample ``n`` are then the (C*kw, OH*OW) matrix starting at padded
    row ``i*d`` with a row step of Hp*OW (:func:`_image_rows`): no copy per
    kernel row, and a buffer kh times smaller than full columns, reused
    across steps.  The padding is written as zeros straight into the
    columns (no padded copy of ``x`` is made): for kernel column ``j``,
    output columns ``first .. last - 1`` read inside ``x``, the rest zeros.
    """
    n, c, h, w = x.shape
    hp = h + 2 * ph
    cols = _WORKSPACES.empty(x, (n, c, kernel_w, hp, ow), x.dtype)
    if ph:
        cols[:, :, :, :ph] = 0
        cols[:, :, :, ph + h:] = 0
    inside = cols[:, :, :, ph:ph + h]
    for j in range(kernel_w):
        shift = j * dilation_w - pw  # output column q reads input column q*s + shift
        first = min(ow, max(0, -(shift // stride_w)))
        last = max(first, min(ow, (w - 1 - shift) // stride_w + 1))
        inside[:, :, j, :, :first] = 0
        inside[:, :, j, :, last:] = 0
        if last > first:
            start = first * stride_w + shift
            inside[:, :, j, :, first:last] = x[:, :, :, start:start + (last - first - 1) * stride_w + 1:stride_w]
    return cols


def _image_rows(cols, i: int, dilation_h: int, oh: int):
    """The (N, C*kw, OH*OW) columns of kernel row ``i`` (a strided view: rows Hp*OW apart)."""
    n, c, kw, hp, ow = cols.shape
    start = i * dilation_h * ow
    return cols.reshape(n, c * kw, hp * ow)[:, :, start:start + oh * ow]


def _image_forward(cols, w, dilation_h: int, oh: int):
    """The convolution from :func:`image_columns`: (N, O, OH, OW), one batched product per kernel row.

    ``out[n] = sum_i W_i cols_i[n]`` with ``W_i = w[:, :, i, :]`` as an
    (O, C*kw) matrix; each product runs over the whole batch at once.
    """
    n, _, _, _, ow = cols.shape
    o, kh = w.shape[0], w.shape[2]
    xp = array_module(cols)
    out = xp.empty((n, o, oh * ow), dtype=cols.dtype)
    part = _WORKSPACES.empty(cols, (n, o, oh * ow), cols.dtype) if kh > 1 else None
    for i in range(kh):
        w_i = xp.ascontiguousarray(w[:, :, i, :]).reshape(o, -1)
        xp.matmul(w_i, _image_rows(cols, i, dilation_h, oh), out=out if i == 0 else part)
        if i:
            out += part
    return out.reshape(n, o, oh, ow)


def _image_weight_grad(g, cols, w_shape, dilation_h: int):
    """``dW[:, :, i, :] = sum_n G[n] cols_i[n]^T`` from :func:`image_columns` (G as (N, O, OH*OW))."""
    o, c, kh, kw = w_shape
    n, _, oh, ow = g.shape
    xp = array_module(g)
    g3 = xp.ascontiguousarray(g).reshape(n, o, oh * ow)
    grad = xp.empty(w_shape, dtype=g.dtype)
    for i in range(kh):
        part = xp.matmul(g3, _image_rows(cols, i, dilation_h, oh).transpose(0, 2, 1))
        grad[:, :, i, :] = part.sum(axis=0).reshape(o, c, kw)
    return grad


def _input_grad_as_conv(g, w, in_hw, padding, dilation, layout: str):
    """dL/dx of a stride-1 convolution whose output keeps its input's size or more, as a convolution
    of G: ``conv2d(G, W')`` with ``W'[c, o, i, j] = W[o, c, kh-1-i, kw-1-j]`` and padding ``d (k - 1) - p``.

    Each input pixel gathers the outputs its windows reached, through the
    flipped kernel: copies of G into columns and the same products as a
    forward, with no scatter-adds (col2im's strided additions into a zeroed
    image).  The image layout runs it in the image layout again; the
    per-sample rows let the convolution of G pick its own.  (In the
    batch-last layout, with few channels, the flipped kernel's products
    are too thin: LeNet-5's second layer ran slower so.)
    """
    _, _, kh, kw = w.shape
    flipped = w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)
    ph, pw = (d * (k - 1) - p for k, p, d in zip((kh, kw), padding, dilation))
    if layout == "image":
        gcols = image_columns(g, ph, pw, kw, 1, dilation[1], in_hw[1])
        return _image_forward(gcols, flipped, dilation[0], in_hw[0])
    return conv2d_array(g, flipped, (1, 1), (ph, pw), dilation, 1)[0]


def conv2d_array(x, w, stride, padding, dilation, groups, keep_cols: bool = False):
    """``(out, cols, layout)``: the convolution of arrays; ``cols`` kept only if asked (for dL/dw).

    With at least as many channels as output columns (and no groups) the
    product is one GEMM over batch and positions on channels-last rows
    (``"rows"``: (N*OH*OW, kh*kw*C)); the result keeps the GEMM's layout
    (N, OH, OW, O), returned as an (N, O, OH, OW) view, so the next layer
    reads that memory without a copy.  Few channels on a larger map
    (``"batch"``, where channels-last copies would move runs of only C
    values): the input copied batch-last, (H, C, W, N), its im2col over the
    kernel columns only (:func:`batch_columns`, copies moving runs of OW*N
    values), and one (O, kh*C*kw) x (kh*C*kw, OW*N) product per output row
    (whole-map products with 50176 columns ran at a third of the speed); the
    result is an (N, O, OH, OW) view of (OH, O, OW, N) memory, which the next
    ReLU, pooling and convolution read without a copy.  Grouped convolutions
    (``"planes"``): one product per sample and group on (C*kh*kw, OH*OW) columns.
    """
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = out_size(wd, kw, stride[1], padding[1], dilation[1])
    layout = _layout(c, oh, ow, groups, kw, stride[0], kh, o)
    if layout == "image":
        out = _image_forward(image_columns(x, padding[0], padding[1], kw, stride[1], dilation[1], ow), w,
                             dilation[0], oh)
        cols = x  # the weight gradient makes its columns again from the input, which the graph holds anyway
    elif layout == "rows":
        xpad = channels_last_padded(x, padding[0], padding[1])
        if _pointwise((kh, kw), stride, padding):
            cols = xpad[:, :, :, None, None, :]
        else:
            cols = im2row_array(xpad, (kh, kw), stride, dilation, (oh, ow))
        out = (cols.reshape(n * oh * ow, c * kh * kw) @ _weight_rows(w).T).reshape(n, oh, ow, o).transpose(0, 3, 1, 2)
    elif layout == "samples":
        cols = im2row_array(channels_last_padded(x, padding[0], padding[1]), (kh, kw), stride, dilation, (oh, ow))
        # one (O, K) x (K, OH*OW) product per sample: a new (N, O, OH*OW) array, torch's layout
        out = (_weight_rows(w) @ cols.reshape(n, oh * ow, c * kh * kw).transpose(0, 2, 1)).reshape(n, o, oh, ow)
    elif layout == "batch":
        xpad = batch_last_padded(x, padding[0], padding[1])
        out = _batch_forward(batch_columns(xpad, kw, stride[1], dilation[1], ow), w, stride, dilation, oh)
        out = out.transpose(3, 1, 0, 2)
        cols = xpad  # the weight gradient makes its columns again from it (kw times less to hold)
    else:
        cols = im2col_array(pad_array(x, padding[0], padding[1]), (kh, kw), stride, dilation, (oh, ow))
        w3 = w.reshape(groups, o // groups, cg * kh * kw)
        out = (w3 @ cols.reshape(n, groups, cg * kh * kw, oh * ow)).reshape(n, o, oh, ow)
    return out, (cols if keep_cols else None), layout


def _grad_rows(g):
    """The upstream gradient (N, O, OH, OW) as an (N*OH*OW, O) matrix (free if it is channels-last)."""
    n, o, oh, ow = g.shape
    return g.transpose(0, 2, 3, 1).reshape(n * oh * ow, o)


def conv2d_input_grad_array(g, w, in_hw, stride, padding, dilation, groups, layout: str):
    """dL/dx of a convolution: col2im of ``W^T G`` with the padding cropped (= conv_transpose2d)."""
    n, o, oh, ow = g.shape
    _, cg, kh, kw = w.shape
    c = cg * groups
    (ph, pw), (h, wd) = padding, in_hw
    padded = (h + 2 * ph, wd + 2 * pw)
    if layout == "rows":
        grad_rows = (_grad_rows(g) @ _weight_rows(w)).reshape(n, oh, ow, kh, kw, c)
        if _pointwise((kh, kw), stride, padding):
            return grad_rows[:, :, :, 0, 0].transpose(0, 3, 1, 2)
        full = row2im_array(grad_rows, padded, stride, dilation)
        return full[:, ph:ph + h, pw:pw + wd].transpose(0, 3, 1, 2)
    if layout in ("image", "samples"):
        reach = [(m + d * (k - 1) - 2 * p, d * (k - 1) - p) for m, k, p, d in zip((oh, ow), (kh, kw), padding, dilation)]
        if stride == (1, 1) and all(size == n_in and pad >= 0 for (size, pad), n_in in zip(reach, in_hw)):
            return _input_grad_as_conv(g, w, in_hw, padding, dilation, layout)
    if layout in ("batch", "image"):
        full = _batch_input_grad(g, w, padded, stride, dilation)
        return full[ph:ph + h, :, pw:pw + wd].transpose(3, 1, 0, 2)
    w3 = w.reshape(groups, o // groups, cg * kh * kw)
    cols = (w3.swapaxes(-1, -2) @ g.reshape(n, groups, o // groups, oh * ow)).reshape(n, c, kh, kw, oh, ow)
    full = col2im_array(cols, padded, (kh, kw), stride, dilation)
    return full[:, :, ph:ph + h, pw:pw + wd]


def conv2d_weight_grad_array(g, cols, w_shape, groups, layout: str, stride, dilation, padding=(0, 0)):
    """dL/dw of a convolution from its columns: ``sum_n G[n] cols[n]^T`` (``padding``: the image
    layout's, which keeps the input and makes its columns again here)."""
    o = w_shape[0]
    k = math.prod(w_shape[1:])
    if layout in ("rows", "samples"):  # G as one (O, N*OH*OW) matrix: one product with the kept rows
        xp = array_module(g)
        g_rows = xp.ascontiguousarray(g.transpose(1, 0, 2, 3)).reshape(o, -1)
        grad = g_rows @ cols.reshape(-1, k)
        return xp.ascontiguousarray(grad.reshape(o, w_shape[2], w_shape[3], w_shape[1]).transpose(0, 3, 1, 2))
    if layout == "image":  # ``cols``: the input, its columns made again here
        cols = image_columns(cols, padding[0], padding[1], w_shape[3], stride[1], dilation[1], g.shape[3])
        return _image_weight_grad(g, cols, w_shape, dilation[0])
    if layout == "batch":  # ``cols``: the padded batch-last input, its columns made again here
        ow = g.shape[3]
        cols = batch_columns(cols, w_shape[3], stride[1], dilation[1], ow)
        return _batch_weight_grad(g, cols, w_shape, stride, dilation)
    n = g.shape[0]
    length = g.shape[2] * g.shape[3]
    g4 = g.reshape(n, groups, o // groups, length)
    return _grouped_outer(g4, cols.reshape(n, groups, k, length)).reshape(w_shape)


# ---------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------


def _output_padding_for(in_hw, out_hw, kernel, stride, padding, dilation) -> tuple:
    """The output_padding that makes conv_transpose2d give back the convolution's input size."""
    return tuple(n - ((m - 1) * s - 2 * p + d * (k - 1) + 1)
                 for n, m, k, s, p, d in zip(in_hw, out_hw, kernel, stride, padding, dilation))


@rule("conv2d", reads=(0, 1), gives=NEW)
def conv2d_backward(g, out, ins, node):
    """Z = conv2d(X, W) + b:  dX = conv_transpose2d(G, W),  dW = sum_n G[n] im2col(X)[n]^T,  db = sum G."""
    x, w = ins[0], ins[1]
    prev = node._prev
    stride, padding, dilation, groups, cols, layout = node._ctx
    grad_x = grad_w = None
    in_hw, kernel = tuple(x.shape[2:]), tuple(w.shape[2:])
    if isinstance(g, Tensor):  # create_graph: the same maps as differentiable ops
        if prev[0].requires_grad:
            extra = _output_padding_for(in_hw, tuple(g.shape[2:]), kernel, stride, padding, dilation)
            grad_x = forward_of("conv_transpose2d")(g, w, None, stride, padding, extra, groups, dilation)
        if prev[1].requires_grad:
            n, o = g.shape[0], g.shape[1]
            tcols = forward_of("im2col")(x, kernel, dilation, padding, stride)
            length = tcols.shape[2]
            grad_w = _grouped_outer(g.reshape(n, groups, o // groups, length),
                                    tcols.reshape(n, groups, tcols.shape[1] // groups, length)).reshape(w.shape)
    else:
        if layout == "batch" and prev[0].requires_grad and prev[1].requires_grad:
            # both products read G as batch-last rows: one copy for the two (free if it already is)
            g = array_module(g).ascontiguousarray(g.transpose(2, 1, 3, 0)).transpose(3, 1, 0, 2)
        if prev[0].requires_grad:
            grad_x = conv2d_input_grad_array(g, w, in_hw, stride, padding, dilation, groups, layout)
        if prev[1].requires_grad:
            if cols is None:  # not kept (the weight did not require grad when recorded)
                _, cols, layout = conv2d_array(x, w, stride, padding, dilation, groups, keep_cols=True)
            grad_w = conv2d_weight_grad_array(g, cols, w.shape, groups, layout, stride, dilation, padding)
            if _suggested_format(w, w) is channels_last:  # torch's gradient has its parameter's strides
                grad_w = _in_format(grad_w, channels_last)
    if len(prev) == 2:
        return grad_x, grad_w
    return grad_x, grad_w, (g.sum((0, 2, 3)) if prev[2].requires_grad else None)


def _same_padding(kernel, dilation, stride, op: str):
    """'same' padding per axis as (before, after): torch puts the odd pixel after."""
    if any(s != 1 for s in stride):
        raise ValueError(f"{op}: padding='same' is not supported for strided convolutions (stride {stride})")
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return pads


def _check_groups(x: Tensor, w: Tensor, groups: int, op: str, dims: int) -> None:
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"{op}: groups must be a positive int, got {groups!r}")
    if x._data.ndim != dims + 2:
        raise ValueError(f"{op}: expected a {dims + 2}-D input (batch, channels, {'length' if dims == 1 else 'H, W'}), "
                         f"got shape {tuple(x.shape)}")
    if w._data.ndim != dims + 2:
        raise ValueError(f"{op}: expected a {dims + 2}-D weight, got shape {tuple(w.shape)}")


@register("conv2d")
def conv2d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation) of ``input`` (N, C, H, W) with ``weight`` (O, C/groups, kh, kw).

    ``padding``: an int, a pair, ``'valid'`` (0) or ``'same'`` (output size =
    input size; stride 1 only; an odd total goes to the bottom/right, as
    PyTorch).  Output (N, O, OH, OW) with
    ``OH = floor((H + 2 p - d (kh - 1) - 1) / s) + 1``.  See the module docstring for the maths.
    """
    op = "conv2d"
    x = input if isinstance(input, Tensor) else Tensor(input)
    w = weight if isinstance(weight, Tensor) else operand(weight, x)
    _check_groups(x, w, groups, op, 2)
    _check_pair(x, w, op)
    n, c, h, wd = x.shape
    o, cg = w.shape[:2]
    kernel = tuple(w.shape[2:])
    if cg * groups != c or o % groups:
        raise ValueError(f"{op}: weight {tuple(w.shape)} with groups={groups} does not fit an input with {c} channels "
                         f"(needs weight.shape[1] * groups == {c} and out channels divisible by groups)")
    stride = tuple_of(stride, 2, "stride", op, 1)
    dilation = tuple_of(dilation, 2, "dilation", op, 1)
    b = _bias(bias, x, o, op)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            pads = _same_padding(kernel, dilation, stride, op)
            if any(lo != hi for lo, hi in pads):  # the odd pixel: pad explicitly, then convolve unpadded
                x = forward_of("pad")(x, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
                padding = (0, 0)
            else:
                padding = (pads[0][0], pads[1][0])
        else:
            raise ValueError(f"{op}: padding must be an int, a pair, 'same' or 'valid', got {padding!r}")
    else:
        padding = tuple_of(padding, 2, "padding", op, 0)
    hp, wp = x.shape[2] + 2 * padding[0], x.shape[3] + 2 * padding[1]
    if hp < dilation[0] * (kernel[0] - 1) + 1 or wp < dilation[1] * (kernel[1] - 1) + 1:
        raise ValueError(f"{op}: the kernel {kernel} (dilation {dilation}) is larger than the padded input "
                         f"({hp}, {wp})")
    keep = w._requires_grad and _recording(x, w, b)
    data, cols, layout = conv2d_array(x._data, w._data, stride, padding, dilation, groups, keep_cols=keep)
    if b is not None:
        data += b._data[:, None, None]  # a fresh product nobody else sees
        parents = (x, w, b)
    else:
        parents = (x, w)
    # torch's layout: (N, O, OH, OW) contiguous (x.view(n, -1) must work on it), or channels-last for an input
    # or weight in that format; a product in another layout is copied out
    data = _in_format(data, _suggested_format(x._data, w._data))
    return make(data, parents, conv2d_backward, (stride, padding, dilation, groups, cols, layout))


def _suggested_format(x, w):
    """channels_last when the input or the weight is laid out so (and not also row-major), as torch's choice."""
    for a in (x, w):
        if not a.flags.c_contiguous and is_laid_out(a.shape, [s // a.itemsize for s in a.strides],
                                                   format_order(channels_last, 4)):
            return channels_last
    return contiguous_format


def _in_format(data, fmt):
    """``data`` (N, C, H, W) laid out in ``fmt``: itself if it already is, else a copy."""
    order = format_order(fmt, 4)
    if is_laid_out(data.shape, [s // data.itemsize for s in data.strides], order):
        return data
    back = sorted(range(4), key=order.__getitem__)
    return array_module(data).ascontiguousarray(data.transpose(order)).transpose(back)


def _recording(*tensors) -> bool:
    return _grad_mode.enabled and any(t is not None and t._requires_grad for t in tensors)


# ---------------------------------------------------------------------------
# conv_transpose2d
# ---------------------------------------------------------------------------


def conv_transpose2d_array(y, w, out_hw, stride, padding, dilation, groups):
    """The adjoint of :func:`conv2d_array` in its input: col2im of ``W^T y``, padding cropped."""
    layout = _layout(w.shape[1] * groups, y.shape[2], y.shape[3], groups, w.shape[3], stride[0], w.shape[2],
                     w.shape[0])
    return conv2d_input_grad_array(y, w, out_hw, stride, padding, dilation, groups, layout)


@rule("conv_transpose2d", reads=(0, 1), gives=NEW)
def conv_transpose2d_backward(g, out, ins, node):
    """Z = conv_transpose2d(Y, W) + b:  dY = conv2d(G, W),  dW = sum_n Y[n] im2col(G)[n]^T,  db = sum G."""
    y, w = ins[0], ins[1]
    prev = node._prev
    stride, padding, dilation, groups = node._ctx
    kernel = tuple(w.shape[2:])
    grad_y = grad_w = None
    n, cin = y.shape[0], y.shape[1]
    length = y.shape[2] * y.shape[3]
    if isinstance(g, Tensor):
        if prev[0].requires_grad:
            grad_y = forward_of("conv2d")(g, w, None, stride, padding, dilation, groups)
        if prev[1].requires_grad:
            gcols = forward_of("im2col")(g, kernel, dilation, padding, stride)
            # output_padding >= stride gives g positions that no input pixel reaches: keep y's
            lh, lw = (out_size(g.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i]) for i in (0, 1))
            if (lh, lw) != tuple(y.shape[2:]):
                gcols = gcols.reshape(n, gcols.shape[1], lh, lw)[:, :, :y.shape[2], :y.shape[3]].reshape(
                    n, gcols.shape[1], length)
            grad_w = _grouped_outer(y.reshape(n, groups, cin // groups, length),
                                    gcols.reshape(n, groups, gcols.shape[1] // groups, length)).reshape(w.shape)
    else:
        if prev[0].requires_grad:
            grad_y, _, _ = conv2d_array(g, w, stride, padding, dilation, groups)
        if prev[1].requires_grad:
            gpad = pad_array(g, padding[0], padding[1])
            gcols = im2col_array(gpad, kernel, stride, dilation, tuple(y.shape[2:]))
            grad_w = _grouped_outer(y.reshape(n, groups, cin // groups, length),
                                    gcols.reshape(n, groups, math.prod(w.shape[1:]), length)).reshape(w.shape)
    if grad_y is not None and tuple(grad_y.shape) != tuple(y.shape):
        # output_padding >= stride (allowed below the dilation) adds output rows no input reaches
        grad_y = grad_y[:, :, :y.shape[2], :y.shape[3]]
    if len(prev) == 2:
        return grad_y, grad_w
    return grad_y, grad_w, (g.sum((0, 2, 3)) if prev[2].requires_grad else None)


@register("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1) -> Tensor:
    """Transposed 2-D convolution (the adjoint of ``conv2d`` in its input; PyTorch's argument order).

    ``weight`` has shape (C_in, C_out/groups, kh, kw).  Output size per axis:
    ``(H - 1) s - 2 p + d (k - 1) + output_padding + 1``; ``output_padding``
    (< stride or dilation) picks among the input sizes a strided conv2d maps
    to the same output size.
    """
    op = "conv_transpose2d"
    y = input if isinstance(input, Tensor) else Tensor(input)
    w = weight if isinstance(weight, Tensor) else operand(weight, y)
    _check_groups(y, w, groups, op, 2)
    _check_pair(y, w, op)
    cin = y.shape[1]
    if w.shape[0] != cin or cin % groups:
        raise ValueError(f"{op}: weight {tuple(w.shape)} with groups={groups} does not fit an input with {cin} "
                         f"channels (needs weight.shape[0] == {cin}, divisible by groups)")
    kernel = tuple(w.shape[2:])
    stride = tuple_of(stride, 2, "stride", op, 1)
    dilation = tuple_of(dilation, 2, "dilation", op, 1)
    padding = tuple_of(padding, 2, "padding", op, 0)
    extra = tuple_of(output_padding, 2, "output_padding", op, 0)
    if any(e >= s and e >= d for e, s, d in zip(extra, stride, dilation)):
        raise ValueError(f"{op}: output_padding {extra} must be smaller than stride {stride} or dilation {dilation}")
    out_hw = tuple((n - 1) * s - 2 * p + d * (k - 1) + e + 1
                   for n, k, s, p, d, e in zip(y.shape[2:], kernel, stride, padding, dilation, extra))
    if any(m < 0 for m in out_hw):
        raise ValueError(f"{op}: padding {padding} is too large for input {tuple(y.shape)}: output size {out_hw}")
    b = _bias(bias, y, w.shape[1] * groups, op)
    data = conv_transpose2d_array(y._data, w._data, out_hw, stride, padding, dilation, groups)
    parents = (y, w)
    if b is not None:
        data = data + b._data[:, None, None]
        parents = (y, w, b)
    data = array_module(data).ascontiguousarray(data)  # contiguous as torch's result (see conv2d)
    return make(data, parents, conv_transpose2d_backward, (stride, padding, dilation, groups))


# ---------------------------------------------------------------------------
# unfold / fold (im2col / col2im) as public ops
# ---------------------------------------------------------------------------


def _unfold_args(kernel_size, dilation, padding, stride, op):
    return (tuple_of(kernel_size, 2, "kernel_size", op, 1), tuple_of(dilation, 2, "dilation", op, 1),
            tuple_of(padding, 2, "padding", op, 0), tuple_of(stride, 2, "stride", op, 1))


@rule("im2col")
def im2col_backward(g, out, ins, node):
    """Z = im2col(X) (a linear gather):  dX = col2im(G), which adds each column entry back to its pixel."""
    kernel, dilation, padding, stride, in_hw = node._ctx
    if isinstance(g, Tensor):
        return (forward_of("col2im")(g, in_hw, kernel, dilation, padding, stride),)
    return (_col2im_data(g, in_hw, kernel, dilation, padding, stride),)


def _col2im_data(cols, out_hw, kernel, dilation, padding, stride):
    n, ck, _ = cols.shape
    (kh, kw), (ph, pw) = kernel, padding
    oh = out_size(out_hw[0], kh, stride[0], ph, dilation[0])
    ow = out_size(out_hw[1], kw, stride[1], pw, dilation[1])
    full = col2im_array(cols.reshape(n, ck // (kh * kw), kh, kw, oh, ow),
                        (out_hw[0] + 2 * ph, out_hw[1] + 2 * pw), kernel, stride, dilation)
    return full[:, :, ph:ph + out_hw[0], pw:pw + out_hw[1]]


@register("im2col")
def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col: the sliding windows of ``input`` (N, C, H, W) as columns, shape (N, C*kh*kw, L).

    ``out[n, c*kh*kw + i*kw + j, y*OW + x] = xpad[n, c, y*s + i*d, x*s + j*d]`` (``torch.nn.functional.unfold``).
    """
    op = "unfold"
    x = input if isinstance(input, Tensor) else Tensor(input)
    if x._data.ndim != 4:
        raise ValueError(f"{op}: expected a 4-D input (N, C, H, W), got shape {tuple(x.shape)}")
    kernel, dilation, padding, stride = _unfold_args(kernel_size, dilation, padding, stride, op)
    n, c, h, w = x.shape
    oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
    if oh < 1 or ow < 1:
        raise ValueError(f"{op}: kernel {kernel} (dilation {dilation}, padding {padding}) does not fit input "
                         f"{tuple(x.shape)}")
    cols = im2col_array(pad_array(x._data, *padding), kernel, stride, dilation, (oh, ow))
    return make(cols.reshape(n, c * kernel[0] * kernel[1], oh * ow), (x,), im2col_backward,
                (kernel, dilation, padding, stride, (h, w)))


@rule("col2im")
def col2im_backward(g, out, ins, node):
    """Z = col2im(C) (a linear scatter-add):  dC = im2col(G), the gather it is the adjoint of."""
    kernel, dilation, padding, stride, _ = node._ctx
    if isinstance(g, Tensor):
        return (forward_of("im2col")(g, kernel, dilation, padding, stride),)
    n, c = g.shape[:2]
    oh = out_size(g.shape[2], kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(g.shape[3], kernel[1], stride[1], padding[1], dilation[1])
    cols = im2col_array(pad_array(g, *padding), kernel, stride, dilation, (oh, ow))
    return (cols.reshape(n, c * kernel[0] * kernel[1], oh * ow),)


@register("col2im")
def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """col2im, the adjoint of :func:`unfold`: (N, C*kh*kw, L) columns summed into an (N, C, H, W) image.

    Overlapping windows add up (``torch.nn.functional.fold``); ``fold(unfold(x))``
    is ``x`` times how many windows cover each pixel.
    """
    op = "fold"
    cols = input if isinstance(input, Tensor) else Tensor(input)
    _floating(cols, op, "input")
    kernel, dilation, padding, stride = _unfold_args(kernel_size, dilation, padding, stride, op)
    out_hw = tuple_of(output_size, 2, "output_size", op, 1)
    if cols._data.ndim != 3:
        raise ValueError(f"{op}: expected a 3-D input (N, C*kh*kw, L), got shape {tuple(cols.shape)}")
    n, ck, length = cols.shape
    oh = out_size(out_hw[0], kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(out_hw[1], kernel[1], stride[1], padding[1], dilation[1])
    if ck % (kernel[0] * kernel[1]) or length != oh * ow or oh < 1 or ow < 1:
        raise ValueError(f"{op}: input {tuple(cols.shape)} does not fit output_size {out_hw} with kernel {kernel} "
                         f"(expected (N, C*{kernel[0] * kernel[1]}, {max(oh, 0) * max(ow, 0)}))")
    data = _col2im_data(cols._data, out_hw, kernel, dilation, padding, stride)
    return make(data, (cols,), col2im_backward, (kernel, dilation, padding, stride, out_hw))


# ---------------------------------------------------------------------------
# conv1d and padding modes: built on the ops above
# ---------------------------------------------------------------------------


@register("conv1d")
def conv1d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution of ``input`` (N, C, L) with ``weight`` (O, C/groups, k): a conv2d of height 1."""
    op = "conv1d"
    x = input if isinstance(input, Tensor) else Tensor(input)
    w = weight if isinstance(weight, Tensor) else operand(weight, x)
    _check_groups(x, w, groups, op, 1)
    if isinstance(padding, str):
        pad2 = padding
    else:
        pad2 = (0,) + tuple_of(padding, 1, "padding", op, 0)
    stride2 = (1,) + tuple_of(stride, 1, "stride", op, 1)
    dilation2 = (1,) + tuple_of(dilation, 1, "dilation", op, 1)
    out = conv2d(x.unsqueeze(2), w.unsqueeze(2), bias, stride2, pad2, dilation2, groups)
    return out.squeeze(2)


def _mode_index(n: int, before: int, after: int, mode: str, op: str):
    i = np.arange(-before, n + after)
    if mode == "reflect":
        if before >= n or after >= n:
            raise ValueError(f"{op}: reflect padding ({before}, {after}) must be smaller than the size {n} it pads")
        i = np.abs(i)
        return np.where(i > n - 1, 2 * (n - 1) - i, i)
    if mode == "replicate":
        if n == 0:
            raise ValueError(f"{op}: cannot replicate-pad an empty dimension")
        return np.clip(i, 0, n - 1)
    if before > n or after > n:
        raise ValueError(f"{op}: circular padding ({before}, {after}) must be at most the size {n} it pads")
    return i % n


def pad_mode(x: Tensor, pad, mode: str, op: str = "pad") -> Tensor:
    """``torch.nn.functional.pad`` for ``mode`` 'reflect', 'replicate' or 'circular' (last dims first).

    Each is a gather along each padded axis (index arrays), so its gradient is
    the scatter-add of indexing: a padded copy of a pixel sends its gradient
    back to the pixel.
    """
    if mode not in ("reflect", "replicate", "circular"):
        raise ValueError(f"{op}: padding mode must be 'zeros', 'reflect', 'replicate' or 'circular', got {mode!r}")
    k = len(pad) // 2
    # as torch: 1 to 3 padded dims, after channels and an optional batch dim
    if len(pad) % 2 or not 1 <= k <= 3 or x.ndim not in (k + 1, k + 2):
        raise ValueError(f"{op}: {mode} padding takes 2 widths for each of 1 to 3 last dims of a tensor with "
                         f"channels (and a batch dim or not), got {tuple(pad)} for shape {tuple(x.shape)}")
    for k in range(len(pad) // 2):
        axis = x.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        if before or after:
            index = _mode_index(x.shape[axis], before, after, mode, op)
            x = x[(slice(None),) * axis + (index,)]
    return x

"""Op-table rows for the convolutional-network ops (conv, im2col, pooling, normalisation, resampling).

Shapes are drawn small (the finite-difference check runs one forward per
input element) but with the awkward cases: odd sizes, stride larger than the
kernel, dilation, groups (depthwise included), padding 'same'/'valid',
size-1 maps and empty batches.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .helpers import Case, Op


def _extent(k: int, d: int) -> int:
    return d * (k - 1) + 1


@st.composite
def conv2d_case(draw, depthwise: bool = False) -> Case:
    """x (N, C, H, W), weight (O, C/G, kh, kw), bias (O,), with stride, padding, dilation, groups."""
    if depthwise:
        groups = draw(st.integers(1, 3))
        cin, cout = groups, groups * draw(st.integers(1, 2))
    else:
        groups = draw(st.sampled_from([1, 1, 2]))
        cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    kind = draw(st.sampled_from(["int", "pair", "valid", "same"]))
    stride = (1, 1) if kind == "same" else (draw(st.integers(1, 4)), draw(st.integers(1, 3)))
    padding = {"int": draw(st.integers(0, 2)), "pair": (draw(st.integers(0, 2)), draw(st.integers(0, 1))),
               "valid": "valid", "same": "same"}[kind]
    pads = (0, 0) if isinstance(padding, str) else ((padding,) * 2 if isinstance(padding, int) else padding)
    hw = tuple(draw(st.integers(max(1, _extent(k, d) - 2 * p), _extent(k, d) + 3))
               for k, d, p in zip(kernel, dilation, pads))
    n = draw(st.sampled_from([0, 1, 2]))
    return Case(((n, cin) + hw, (cout, cin // groups) + kernel, (cout,)),
                {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups})


@st.composite
def conv1d_case(draw) -> Case:
    groups = draw(st.sampled_from([1, 2]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    k, d = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    padding = draw(st.sampled_from([0, 1, "same", "valid"]))
    stride = 1 if padding == "same" else draw(st.integers(1, 3))
    p = padding if isinstance(padding, int) else 0
    length = draw(st.integers(max(1, _extent(k, d) - 2 * p), _extent(k, d) + 4))
    return Case(((draw(st.integers(0, 2)), cin, length), (cout, cin // groups, k), (cout,)),
                {"stride": stride, "padding": padding, "dilation": d, "groups": groups})


@st.composite
def conv_transpose2d_case(draw) -> Case:
    """y (N, C_in, H, W), weight (C_in, C_out/G, kh, kw), bias (C_out,), output_padding < stride."""
    groups = draw(st.sampled_from([1, 1, 2]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    extra = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    hw = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    # padding small enough that the output is not empty
    padding = tuple(draw(st.integers(0, max(0, ((n - 1) * s + d * (k - 1) + e) // 2)))
                    for n, s, d, k, e in zip(hw, stride, dilation, kernel, extra))
    return Case(((draw(st.integers(0, 2)), cin) + hw, (cin, cout // groups) + kernel, (cout,)),
                {"stride": stride, "padding": padding, "output_padding": extra, "groups": groups,
                 "dilation": dilation})


def _window_args(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 4)))
    padding = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    hw = tuple(draw(st.integers(max(1, _extent(k, d) - 2 * p), _extent(k, d) + 3))
               for k, d, p in zip(kernel, dilation, padding))
    return kernel, dilation, stride, padding, hw


@st.composite
def unfold_case(draw) -> Case:
    kernel, dilation, stride, padding, hw = _window_args(draw)
    return Case(((draw(st.integers(0, 2)), draw(st.integers(1, 2))) + hw,),
                {"kernel_size": kernel, "dilation": dilation, "padding": padding, "stride": stride})


@st.composite
def fold_case(draw) -> Case:
    kernel, dilation, stride, padding, hw = _window_args(draw)
    blocks = 1
    for n, k, s, p, d in zip(hw, kernel, stride, padding, dilation):
        blocks *= (n + 2 * p - d * (k - 1) - 1) // s + 1
    channels = draw(st.integers(1, 2))
    return Case(((draw(st.integers(0, 2)), channels * kernel[0] * kernel[1], blocks),),
                {"output_size": hw, "kernel_size": kernel, "dilation": dilation, "padding": padding,
                 "stride": stride})


@st.composite
def max_pool2d_case(draw) -> Case:
    """Padding at most half the kernel (PyTorch's rule); ceil_mode on or off."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    stride = (draw(st.integers(1, 4)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    hw = tuple(draw(st.integers(max(1, _extent(k, d) - 2 * p), _extent(k, d) + 3))
               for k, d, p in zip(kernel, dilation, padding))
    # a window of padding only (dilation jumping over a small input) makes torch's backward abort
    padding = tuple(0 if _padding_only_window(n, k, s, p, d) else p
                    for n, k, s, p, d in zip(hw, kernel, stride, padding, dilation))
    hw = tuple(max(n, _extent(k, d) - 2 * p) for n, k, d, p in zip(hw, kernel, dilation, padding))
    return Case(((draw(st.integers(0, 2)), draw(st.integers(1, 2))) + hw,),
                {"kernel_size": kernel, "stride": stride, "padding": padding, "dilation": dilation,
                 "ceil_mode": draw(st.booleans())})


@st.composite
def conv2d_channels_last_case(draw) -> Case:
    """At least as many input channels as output columns: the channels-last (rows) GEMM layout."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    cin = draw(st.integers(3, 4))
    hw = (draw(st.integers(max(1, kernel[0] - 2 * padding[0]), 4)),
          draw(st.integers(max(1, kernel[1] - 2 * padding[1]), kernel[1] - 2 * padding[1] + 2)))
    return Case(((draw(st.integers(1, 2)), cin) + hw, (draw(st.integers(1, 3)), cin) + kernel, (1,)),
                {"stride": stride, "padding": padding})


@st.composite
def max_pool2d_tiles_case(draw) -> Case:
    """Stride = kernel tiling the map exactly: the tiled fast path."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    hw = (kernel[0] * draw(st.integers(1, 3)), kernel[1] * draw(st.integers(1, 3)))
    return Case(((draw(st.integers(1, 2)), draw(st.integers(1, 2))) + hw,), {"kernel_size": kernel})


def _padding_only_window(n: int, k: int, s: int, p: int, d: int) -> bool:
    outputs = (n + 2 * p - d * (k - 1) - 1 + s - 1) // s + 1  # ceil mode: the most windows
    return any(not any(0 <= o * s - p + i * d < n for i in range(k)) for o in range(outputs))


@st.composite
def max_pool1d_case(draw) -> Case:
    k, d, s = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 4))
    p = draw(st.integers(0, k // 2))
    length = draw(st.integers(max(1, _extent(k, d) - 2 * p), _extent(k, d) + 4))
    p = 0 if _padding_only_window(length, k, s, p, d) else p
    length = max(length, _extent(k, d) - 2 * p)
    return Case(((draw(st.integers(0, 2)), 2, length),),
                {"kernel_size": k, "stride": s, "padding": p, "dilation": d, "ceil_mode": draw(st.booleans())})


@st.composite
def avg_pool2d_case(draw) -> Case:
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 4)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    hw = tuple(draw(st.integers(max(1, k - 2 * p), k + 3)) for k, p in zip(kernel, padding))
    return Case(((draw(st.integers(0, 2)), draw(st.integers(1, 2))) + hw,),
                {"kernel_size": kernel, "stride": stride, "padding": padding, "ceil_mode": draw(st.booleans()),
                 "count_include_pad": draw(st.booleans())})


@st.composite
def avg_pool1d_case(draw) -> Case:
    k, s = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    p = draw(st.integers(0, k // 2))
    length = draw(st.integers(max(1, k - 2 * p), k + 4))
    return Case(((draw(st.integers(0, 2)), 2, length),),
                {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": draw(st.booleans()),
                 "count_include_pad": draw(st.booleans())})


@st.composite
def adaptive_case(draw) -> Case:
    """Output bins fewer, equal or more than the input size (bins then overlap or repeat)."""
    hw = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    size = draw(st.sampled_from(["int", "pair", "none"]))
    out = {"int": draw(st.integers(1, 4)), "pair": (draw(st.integers(1, 4)), draw(st.integers(1, 6))),
           "none": (None, draw(st.integers(1, 3)))}[size]
    return Case(((draw(st.integers(0, 2)), draw(st.integers(1, 2))) + hw,), {"output_size": out})


@st.composite
def batch_norm_case(draw) -> Case:
    """(N, C), (N, C, L) or (N, C, H, W) with more than one value per channel; training or evaluation."""
    channels = draw(st.integers(1, 3))
    spatial = draw(st.lists(st.integers(1, 3), max_size=2).map(tuple))
    n = draw(st.integers(1, 3))
    if n * int(np.prod(spatial)) < 2:
        n = 2
    rng = np.random.default_rng(draw(st.integers(0, 1000)))
    return Case(((n, channels) + spatial, (channels,), (channels,)),
                {"training": draw(st.booleans()), "running_mean": rng.uniform(-1, 1, channels),
                 "running_var": rng.uniform(0.5, 2.0, channels), "momentum": draw(st.sampled_from([0.1, 0.5]))})


@st.composite
def group_norm_case(draw) -> Case:
    groups = draw(st.integers(1, 3))
    channels = groups * draw(st.integers(1, 2))
    spatial = draw(st.lists(st.integers(1, 3), max_size=2).map(tuple))
    if channels // groups * int(np.prod(spatial)) < 2:
        spatial = spatial[:-1] + (2,) if spatial else (2,)
    return Case(((draw(st.integers(0, 2)), channels) + spatial, (channels,), (channels,)), {"num_groups": groups})


@st.composite
def layer_norm_case(draw) -> Case:
    """Batch dims (none, or some of size 0 to 3) before 1 or 2 normalized dims of size 1 to 4."""
    normalized = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    return Case((lead + normalized, normalized, normalized), {"normalized_shape": normalized})


@st.composite
def interpolate_case(draw) -> Case:
    dims = draw(st.sampled_from([1, 2]))
    mode = draw(st.sampled_from(["nearest", "linear" if dims == 1 else "bilinear"]))
    sizes = tuple(draw(st.integers(2, 4)) for _ in range(dims))  # 2+: a scale of 0.5 keeps a pixel
    kwargs = {"mode": mode}
    if draw(st.booleans()):
        kwargs["size"] = tuple(draw(st.integers(1, 7)) for _ in range(dims))
    else:
        kwargs["scale_factor"] = draw(st.sampled_from([0.5, 1.5, 2.0, 2.5, 3.0]))
    if mode != "nearest":
        kwargs["align_corners"] = draw(st.booleans())
    return Case(((draw(st.integers(0, 2)), draw(st.integers(1, 2))) + sizes,), kwargs)


def _batch_norm(L, x, w, b, training, running_mean, running_var, momentum):
    """The running estimates are copies, so both libraries start from the same values each call."""
    return L.F.batch_norm(x, L.const(running_mean.copy()), L.const(running_var.copy()), w, b,
                          training=training, momentum=momentum)


CNN_OPS = [
    Op("conv2d", lambda L, x, w, b, **kw: L.F.conv2d(x, w, b, **kw), conv2d_case()),
    Op("conv2d_depthwise", lambda L, x, w, b, **kw: L.F.conv2d(x, w, b, **kw), conv2d_case(depthwise=True)),
    Op("conv2d_channels_last", lambda L, x, w, b, **kw: L.F.conv2d(x, w, b.expand(w.shape[0]), **kw),
       conv2d_channels_last_case()),
    Op("conv2d_nobias", lambda L, x, w, b, **kw: L.F.conv2d(x, w, None, **kw) + b.sum(), conv2d_case()),
    Op("conv1d", lambda L, x, w, b, **kw: L.F.conv1d(x, w, b, **kw), conv1d_case()),
    Op("conv_transpose2d", lambda L, x, w, b, **kw: L.F.conv_transpose2d(x, w, b, **kw), conv_transpose2d_case()),
    Op("im2col", lambda L, x, **kw: L.F.unfold(x, **kw), unfold_case()),
    Op("col2im", lambda L, x, **kw: L.F.fold(x, **kw), fold_case()),
    Op("max_pool2d", lambda L, x, **kw: L.F.max_pool2d(x, **kw), max_pool2d_case(), "distinct"),
    Op("max_pool2d_tiles", lambda L, x, **kw: L.F.max_pool2d(x, **kw), max_pool2d_tiles_case(), "distinct"),
    Op("max_pool1d", lambda L, x, **kw: L.F.max_pool1d(x, **kw), max_pool1d_case(), "distinct"),
    Op("avg_pool2d", lambda L, x, **kw: L.F.avg_pool2d(x, **kw), avg_pool2d_case()),
    Op("avg_pool1d", lambda L, x, **kw: L.F.avg_pool1d(x, **kw), avg_pool1d_case()),
    Op("adaptive_avg_pool2d", lambda L, x, output_size: L.F.adaptive_avg_pool2d(x, output_size), adaptive_case()),
    Op("adaptive_max_pool2d", lambda L, x, output_size: L.F.adaptive_max_pool2d(x, output_size), adaptive_case(),
       "distinct"),
    Op("batch_norm", _batch_norm, batch_norm_case()),
    Op("group_norm", lambda L, x, w, b, num_groups: L.F.group_norm(x, num_groups, w, b), group_norm_case()),
    Op("layer_norm", lambda L, x, w, b, normalized_shape: L.F.layer_norm(x, normalized_shape, w, b),
       layer_norm_case()),
    Op("layer_norm_plain", lambda L, x, w, b, normalized_shape: L.F.layer_norm(x, normalized_shape) + (w * b).sum(),
       layer_norm_case()),
    Op("interpolate", lambda L, x, **kw: L.F.interpolate(x, **kw), interpolate_case()),
]

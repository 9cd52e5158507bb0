"""Each convolution layout on the convolutions of bench_cnn.py's four models: which is fastest, which taugrad picks.

For every convolution of the digits CNN, LeNet-5 and the CIFAR ResNet-20
(float32, one BLAS thread), one training pass of the convolution alone --
the forward product with its kept columns and its result in torch's
(N, C, H, W) memory, the input gradient and the weight gradient -- is timed in each layout that can compute it, alternating
between the layouts in one process; the median ms per pass is printed, the
layout ``_layout`` picks in bold.  Results are checked against the picked
layout's before timing, so every column computes the same numbers.

    PYTHONPATH=src python benchmarks/bench_conv_layouts.py [--rounds 9] [--number 3] [--gemm]

``--gemm`` prints instead what bounds them: GFLOP/s of the matrix products the
layouts run for ResNet-20's stages, beside a square product's.

The layouts (``taugrad/tensors/ops/conv.py``): ``rows`` (channels-last
columns, one GEMM for the batch), ``samples`` (the same columns, one product
per sample), ``image`` (the (N, C, H, W) memory itself, columns over the
kernel columns only; stride 1 along the height), ``batch`` (batch-last
memory, one product per output row), ``planes`` (full columns per sample:
the grouped convolutions' layout).
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy: one BLAS thread, as the CNN table

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _timing  # noqa: E402

from taugrad.tensors.ops import conv  # noqa: E402

#: (name, input shape, out channels, kernel, stride, padding)
CONVS = [
    ("(a) digits conv 1", (64, 1, 8, 8), 32, 3, 1, 1),
    ("(a) digits conv 2", (64, 32, 4, 4), 64, 3, 1, 0),
    ("(b) LeNet-5 conv 1", (64, 1, 28, 28), 6, 5, 1, 2),
    ("(b) LeNet-5 conv 2", (64, 6, 14, 14), 16, 5, 1, 0),
    ("(d) ResNet-20 stem", (64, 3, 32, 32), 16, 3, 1, 1),
    ("(c), (d) 16 channels, 32x32", (64, 16, 32, 32), 16, 3, 1, 1),
    ("(d) 16 to 32, stride 2", (64, 16, 32, 32), 32, 3, 2, 1),
    ("(d) 32 channels, 16x16", (64, 32, 16, 16), 32, 3, 1, 1),
    ("(d) 64 channels, 8x8", (64, 64, 8, 8), 64, 3, 1, 1),
    ("(d) shortcut 1x1, stride 2", (64, 32, 16, 16), 64, 1, 2, 0),
]
LAYOUTS = ("rows", "samples", "image", "batch", "planes")


def passes(shape, out_channels, k, s, p):
    """One training pass per layout that computes this convolution (the image layout needs stride 1
    along the height), and the layout taugrad picks."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=np.float32)
    w = rng.standard_normal((out_channels, shape[1], k, k), dtype=np.float32)
    stride, padding, dilation = (s, s), (p, p), (1, 1)
    oh, ow = conv.out_size(shape[2], k, s, p, 1), conv.out_size(shape[3], k, s, p, 1)
    picked = conv._layout(shape[1], oh, ow, 1, k, s, k, out_channels)
    original = conv._layout
    g = rng.standard_normal((shape[0], out_channels, oh, ow), dtype=np.float32)

    def make(layout):
        def run():
            conv._layout = lambda *args: layout
            try:
                out, cols, used = conv.conv2d_array(x, w, stride, padding, dilation, 1, keep_cols=True)
                out = conv._in_format(out, conv.contiguous_format)  # torch's layout, as conv2d gives it
                gx = conv.conv2d_input_grad_array(g, w, shape[2:], stride, padding, dilation, 1, used)
                gw = conv.conv2d_weight_grad_array(g, cols, w.shape, 1, used, stride, dilation, padding)
                return out, gx, gw
            finally:
                conv._layout = original
        return run

    runs = {layout: make(layout) for layout in LAYOUTS if layout != "image" or s == 1}
    reference = runs[picked]()
    for layout, run in runs.items():
        for got, want in zip(run(), reference):
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * float(np.abs(want).max()),
                                       err_msg=layout)
    return runs, picked


#: (what, batch, M, K, N): batched (M, K) x (K, N) products, as the layouts run them on ResNet-20
PRODUCTS = [
    ("square", 1, 1024, 1024, 1024),
    ("image, 16 channels 32x32: one kernel row", 64, 16, 48, 1024),
    ("image, 32 channels 16x16: one kernel row", 64, 32, 96, 256),
    ("per-sample rows, 64 channels 8x8", 64, 64, 576, 64),
    ("channels-last rows, 16 channels 32x32: one GEMM", 1, 65536, 144, 16),
]


def gemm_rates(rounds: int, number: int) -> None:
    rng = np.random.default_rng(0)
    print("| product | batch x (M, K) x (K, N) | GFLOP/s |\n|---|---|---:|")
    for what, batch, m, k, n in PRODUCTS:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((batch, k, n) if batch > 1 else (k, n), dtype=np.float32)
        out = np.empty((batch, m, n) if batch > 1 else (m, n), dtype=np.float32)
        seconds = _timing.alternate({what: lambda: np.matmul(a, b, out=out)}, rounds, number)[what]
        rate = 2 * batch * m * k * n / _timing.median(seconds) / 1e9
        print(f"| {what} | {batch} x ({m}, {k}) x ({k}, {n}) | {rate:.0f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--number", type=int, default=3)
    parser.add_argument("--gemm", action="store_true", help="GFLOP/s of the layouts' matrix products")
    args = parser.parse_args()
    if args.gemm:
        gemm_rates(args.rounds, args.number)
        return 0
    print(f"numpy {np.__version__}, one BLAS thread, load {_timing.load_average()}; ms per forward + input "
          "gradient + weight gradient, median of alternating rounds; taugrad's pick in bold\n")
    print("| convolution | " + " | ".join(LAYOUTS) + " |")
    print("|---|" + "---:|" * len(LAYOUTS))
    for name, shape, out_channels, k, s, p in CONVS:
        runs, picked = passes(shape, out_channels, k, s, p)
        samples = _timing.alternate(runs, args.rounds, args.number)
        cells = []
        for layout in LAYOUTS:
            if layout not in samples:
                cells.append("-")
                continue
            ms = f"{1e3 * _timing.median(samples[layout]):.2f}"
            cells.append(f"**{ms}**" if layout == picked else ms)
        label = f"{name}: {'x'.join(map(str, shape))}, {out_channels} {k}x{k}, stride {s}, padding {p}"
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""CNN training steps: taugrad against PyTorch CPU eager, alternating in one process, same weights.

Four training steps (forward, cross-entropy, backward, SGD update), float32:

(a) the digits CNN: batch 64, 1x8x8; Conv2d(1, 32, 3, padding=1), ReLU, MaxPool2d(2),
    Conv2d(32, 64, 3), ReLU, global average, Linear(64, 10);
(b) LeNet-5 on MNIST-shaped input: batch 64, 1x28x28; Conv2d(1, 6, 5, padding=2), ReLU,
    MaxPool2d(2), Conv2d(6, 16, 5), ReLU, MaxPool2d(2), Linear(400, 120), ReLU, Linear(120, 84),
    ReLU, Linear(84, 10);
(c) a ResNet basic block with BatchNorm: batch 32, 16 channels, 32x32; conv-BN-ReLU-conv-BN,
    plus the identity, ReLU, global average, Linear(16, 10);
(d) the CIFAR ResNet-20 of He et al. (2016): batch 64, 3x32x32; conv3x3(3, 16)-BN-ReLU, three
    stages of three basic blocks with 16/32/64 channels (stride 2 entering stages 2 and 3, whose
    shortcut is a 1x1 convolution with stride 2 and BatchNorm: the projection shortcut,
    "option B"), global average, Linear(64, 10); 272,474 parameters.  The model is
    ``resnet20`` of ``examples/cifar_resnet.py`` (one builder for both libraries), trained
    with SGD(lr=0.1, momentum=0.9, weight_decay=5e-4); (a)-(c) use plain SGD(lr=0.01).

Both libraries start from the same weights (torch's state dict loaded into
taugrad) and take the same batches, so the printed losses must agree: to
float32 rounding over 3 steps, which the SGD updates amplify (the table shows
how far torch's own float32 losses move from its float64 ones, the scale of
that rounding), and to float64 rounding when both run in float64.  Times:
median ms per step over alternating rounds (``_timing.alternate``), with the
median of the per-round ratios and its 95% interval.  Memory: tracemalloc's
peak over one taugrad step, and the traced bytes still held after the step
(the im2col buffers are kept by the graph for the weight gradient and must be
gone once ``backward()`` has run).  Page faults per step: fresh memory the C
allocator mapped for each library (glibc returns freed memory to the kernel
past a threshold that adapts to the largest block freed so far, so a step's
temporaries can be faulted in again every step; that kernel time is in the
wall times above and depends on what the process allocated before).

    PYTHONPATH=src python benchmarks/bench_cnn.py [--rounds 21] [--number 5] [--threads 1] [--only abc]
                                                  [--malloc default|fixed]

``--only d --rounds 9 --number 3`` times ResNet-20 alone (about a minute at one thread).
"""
from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import tracemalloc

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--rounds", type=int, default=21)
parser.add_argument("--number", type=int, default=5, help="steps per timed block")
parser.add_argument("--threads", type=int, default=1, help="BLAS / torch threads (set before importing NumPy)")
parser.add_argument("--only", default="abcd", help="which steps to run, e.g. 'b' or 'ab'")
parser.add_argument("--malloc", choices=("default", "fixed"), default="default",
                    help="'fixed': pin glibc's mmap and trim thresholds, so neither library's allocations change "
                         "what the other's cost (no page faults from memory handed back between steps)")
args = parser.parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)
if args.malloc == "fixed":  # before NumPy and torch allocate anything
    import ctypes  # noqa: E402  (glibc only)
    _libc = ctypes.CDLL("libc.so.6")
    _libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD (setting it also stops glibc from moving it)
    _libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD

import numpy as np  # noqa: E402  (after the thread settings)
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
import _timing  # noqa: E402
from cifar_resnet import resnet20  # noqa: E402  (the example's builder: one copy for both)

import taugrad  # noqa: E402
import taugrad.nn.functional as F  # noqa: E402

torch.set_num_threads(args.threads)


def digits_cnn(lib):
    N = lib.nn
    return N.Sequential(N.Conv2d(1, 32, 3, padding=1), N.ReLU(), N.MaxPool2d(2), N.Conv2d(32, 64, 3), N.ReLU(),
                        N.AdaptiveAvgPool2d(1), N.Flatten(), N.Linear(64, 10))


def lenet5(lib):
    N = lib.nn
    return N.Sequential(N.Conv2d(1, 6, 5, padding=2), N.ReLU(), N.MaxPool2d(2), N.Conv2d(6, 16, 5), N.ReLU(),
                        N.MaxPool2d(2), N.Flatten(), N.Linear(400, 120), N.ReLU(), N.Linear(120, 84), N.ReLU(),
                        N.Linear(84, 10))


def resnet_block(lib):
    N = lib.nn

    class Block(N.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = N.Conv2d(16, 16, 3, padding=1, bias=False)
            self.bn1 = N.BatchNorm2d(16)
            self.conv2 = N.Conv2d(16, 16, 3, padding=1, bias=False)
            self.bn2 = N.BatchNorm2d(16)
            self.fc = N.Linear(16, 10)

        def forward(self, x):
            h = self.bn1(self.conv1(x)).relu()
            h = (self.bn2(self.conv2(h)) + x).relu()
            return self.fc(h.mean((2, 3)))

    return Block()


PLAIN_SGD = {"lr": 0.01}
RESNET_SGD = {"lr": 0.1, "momentum": 0.9, "weight_decay": 5e-4}
CASES = {
    "(a) digits CNN, 64x1x8x8": (digits_cnn, (64, 1, 8, 8), PLAIN_SGD),
    "(b) LeNet-5, 64x1x28x28": (lenet5, (64, 1, 28, 28), PLAIN_SGD),
    "(c) ResNet basic block + BN, 32x16x32x32": (resnet_block, (32, 16, 32, 32), PLAIN_SGD),
    "(d) ResNet-20, 64x3x32x32, SGD momentum + weight decay": (lambda lib: resnet20(lib.nn), (64, 3, 32, 32),
                                                               RESNET_SGD),
}


def make_steps(build, shape, sgd=PLAIN_SGD, seed=0, double=False):
    torch.manual_seed(seed)
    theirs = build(torch)
    ours = build(taugrad)
    if double:
        theirs, ours = theirs.double(), ours.double()
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float64 if double else np.float32)
    y = rng.integers(0, 10, shape[0])
    xt, yt, xg, yg = torch.from_numpy(x), torch.from_numpy(y), taugrad.tensor(x), taugrad.tensor(y)
    opt_t = torch.optim.SGD(theirs.parameters(), **sgd)
    opt_g = taugrad.optim.SGD(ours.parameters(), **sgd)

    def torch_step():
        loss = torch.nn.functional.cross_entropy(theirs(xt), yt)
        opt_t.zero_grad()
        loss.backward()
        opt_t.step()
        return loss.item()

    def taugrad_step():
        loss = F.cross_entropy(ours(xg), yg)
        opt_g.zero_grad()
        loss.backward()
        opt_g.step()
        return loss.item()

    return torch_step, taugrad_step


def memory(step):
    """(peak bytes during one step, bytes still held after it) as tracemalloc sees them."""
    step()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    step()
    after, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak - before, after - before


def faults(step, steps: int = 5) -> float:
    """Minor page faults per step: fresh memory the allocator had to map (kernel time, outside the library)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(steps):
        step()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / steps


def main() -> int:
    print(f"numpy {np.__version__}, torch {torch.__version__}, taugrad {taugrad.__version__}, "
          f"{args.threads} thread(s), malloc {args.malloc}, load {_timing.load_average()}")
    rows = []
    for name, (build, shape, sgd) in CASES.items():
        if name[1] not in args.only:
            continue
        torch_step, taugrad_step = make_steps(build, shape, sgd)
        losses = [(torch_step(), taugrad_step()) for _ in range(3)]
        worst = max(abs(a - b) for a, b in losses)
        torch64, taugrad64 = make_steps(build, shape, sgd, double=True)
        losses64 = [(torch64(), taugrad64()) for _ in range(3)]
        worst64 = max(abs(a - b) for a, b in losses64)
        rounding = max(abs(a[0] - b[0]) for a, b in zip(losses, losses64))
        samples = _timing.alternate({"torch": torch_step, "taugrad": taugrad_step}, args.rounds, args.number)
        ratios = [g / t for g, t in zip(samples["taugrad"], samples["torch"])]
        low, high = _timing.median_interval(ratios)
        peak, held = memory(taugrad_step)
        page_faults = (faults(torch_step), faults(taugrad_step))
        rows.append((name, 1e3 * _timing.median(samples["torch"]), 1e3 * _timing.median(samples["taugrad"]),
                     _timing.median(ratios), low, high, peak, held, page_faults, losses[0], worst, rounding,
                     worst64))
    print("\n| step | torch ms | taugrad ms | taugrad / torch (95% CI) | taugrad peak (tracemalloc) | held after step "
          "| page faults / step torch, taugrad | first losses torch / taugrad | max loss diff (3 steps) "
          "| torch float32 - float64 (3 steps) | max loss diff in float64 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, t, g, r, lo, hi, peak, held, (ft, fg), first, worst, rounding, worst64 in rows:
        print(f"| {name} | {t:.2f} | {g:.2f} | {r:.2f}x ({lo:.2f}-{hi:.2f}) | {peak / 2**20:.2f} MiB "
              f"| {held / 2**10:.1f} KiB | {ft:.0f}, {fg:.0f} | {first[0]:.6f} / {first[1]:.6f} | {worst:.1e} "
              f"| {rounding:.1e} | {worst64:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

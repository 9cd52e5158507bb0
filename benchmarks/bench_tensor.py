"""Tensor engine benchmark: taugrad vs hand-written NumPy vs PyTorch CPU, in one process.

Usage::

    PYTHONPATH=src python benchmarks/bench_tensor.py            # full run (~1.5 min)
    PYTHONPATH=src python benchmarks/bench_tensor.py --quick    # a few seconds
    PYTHONPATH=src python benchmarks/bench_tensor.py --threads 1

It measures

1. one training step (forward, cross-entropy, backward, SGD update) of a
   784-256-256-10 ReLU MLP on a float32 batch of 128, for taugrad, for a
   hand-written NumPy forward+backward (below: float32 throughout, fused
   softmax-cross-entropy gradient, in-place updates) and for PyTorch CPU, all
   three as ``h @ w + b`` with weights stored (in, out); the ``taugrad-nn`` row
   is what a PyTorch user writes (``nn.Sequential`` of ``nn.Linear``/``nn.ReLU``,
   weights (out, in) row-major as PyTorch's), the ``taugrad-linear`` row runs
   ``F.linear`` on the same row-major (out, in) weights without the modules;
   NumPy and taugrad share one in-place SGD update (:func:`sgd_update`), PyTorch
   uses its fused ``sub_``.  Engines alternate in many short rounds, with a
   pause before a block whose engine runs on the other thread pool, so one
   library's spinning worker threads do not slow the next (on 2 cores,
   OpenBLAS's and PyTorch's OpenMP threads otherwise fight); the median
   per-step time is reported with its ratio to NumPy, and the median of the
   per-round ratios with a 95% bootstrap interval (target: taugrad <= 1.10x
   NumPy; the verdict says NOT SHOWN when the interval contains 1.10x);
2. the cost of a tiny op, ``(a + b).sum().backward()`` on two shape-(4,)
   tensors, for taugrad and PyTorch (target: taugrad <= 0.5x PyTorch);
3. peak memory of one training step: tracemalloc sees NumPy's and taugrad's
   allocations but not PyTorch's own allocator, so the peak RSS growth of a
   fresh child process running the same steps is reported for all three.

All engines run under the same environment (BLAS variables, thread counts),
which is printed first: OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, when set, can
slow NumPy's OpenBLAS down and would make every ratio misleading.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tracemalloc
from typing import Callable, Dict, List

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import alternate, load_average, median, median_interval, peak_rss_bytes, reset_peak_rss, rss_bytes, spread  # noqa: E402

SIZES = (784, 256, 256, 10)
BATCH = 128
LR = 0.01
BLAS_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                  "MKL_NUM_THREADS", "NVPL_BLAS_DEBUG_CPU_TYPE")


# ---------------------------------------------------------------------------
# shared problem
# ---------------------------------------------------------------------------


def make_problem(seed: int = 0):
    """Batch, labels and the initial weights (uniform +-1/sqrt(fan_in), as nn.Linear), all float32."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], size=BATCH)
    params = []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return x, y, params


# ---------------------------------------------------------------------------
# the three engines; each factory returns a zero-argument "one step" function
# ---------------------------------------------------------------------------


def sgd_update(param: np.ndarray, grad: np.ndarray) -> None:
    """``param -= LR * grad`` in place, scaling the (discarded) gradient in place when allowed."""
    if grad.flags.writeable:
        grad *= np.float32(LR)
        param -= grad
    else:
        param -= np.float32(LR) * grad


def numpy_engine(x: np.ndarray, y: np.ndarray, init: List[np.ndarray]) -> Callable[[], float]:
    """Forward and backward written out by hand: the speed of light for a NumPy engine."""
    params = [p.copy() for p in init]
    rows = np.arange(x.shape[0])
    scale = np.float32(1.0 / x.shape[0])

    def step() -> float:
        w1, b1, w2, b2, w3, b3 = params
        h1 = x @ w1
        h1 += b1
        np.maximum(h1, 0, out=h1)
        h2 = h1 @ w2
        h2 += b2
        np.maximum(h2, 0, out=h2)
        z = h2 @ w3
        z += b3
        # cross-entropy of softmax(z), shifted by the row max so exp cannot overflow
        z -= z.max(axis=1, keepdims=True)
        picked = z[rows, y]
        np.exp(z, out=z)
        total = z.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(total[:, 0]) - picked))
        # fused gradient of mean CE wrt z: (softmax - onehot) / n, computed in place
        z /= total
        z[rows, y] -= 1
        z *= scale
        grads = [None] * 6
        grads[4] = h2.T @ z
        grads[5] = z.sum(axis=0)
        d2 = z @ w3.T
        d2 *= h2 > 0  # ReLU: pass where the unit was active
        grads[2] = h1.T @ d2
        grads[3] = d2.sum(axis=0)
        d1 = d2 @ w2.T
        d1 *= h1 > 0
        grads[0] = x.T @ d1
        grads[1] = d1.sum(axis=0)
        for p, g in zip(params, grads):
            sgd_update(p, g)
        return loss

    step.params = params  # type: ignore[attr-defined]
    return step


def taugrad_engine(x: np.ndarray, y: np.ndarray, init: List[np.ndarray], fused_linear: bool = False) -> Callable[[], float]:
    """taugrad with the NumPy engine's formulation: ``h @ w + b``, weights stored (in, out).

    ``fused_linear=True`` (the ``taugrad-linear`` row) runs ``F.linear`` on
    row-major (out, in) weights: one node per layer and the bias added in
    place; OpenBLAS reads ``W.T`` as a transposed operand (no copy), packing
    it a little slower than the (in, out) ``w`` of ``x @ w``.
    """
    import taugrad
    import taugrad.functional as F

    inputs = taugrad.Tensor(x)
    if fused_linear:
        params = [taugrad.Tensor((p.T if p.ndim == 2 else p).copy(), requires_grad=True) for p in init]

        def layer(h, w, b):
            return F.linear(h, w, b)
    else:
        params = [taugrad.Tensor(p.copy(), requires_grad=True) for p in init]

        def layer(h, w, b):
            return h @ w + b

    def step() -> float:
        w1, b1, w2, b2, w3, b3 = params
        h = layer(inputs, w1, b1).relu()
        h = layer(h, w2, b2).relu()
        loss = F.cross_entropy(layer(h, w3, b3), y)
        loss.backward()
        for p in params:  # the same SGD update on the arrays as the NumPy engine
            sgd_update(p._data, p.grad._data)  # the arrays, as the NumPy engine
            p.grad = None
        return float(loss._data)

    # in NumPy's (in, out) layout for the agreement check (views: they follow the updates)
    step.params = [p._data.T if (fused_linear and p.ndim == 2) else p._data for p in params]  # type: ignore[attr-defined]
    return step


def taugrad_linear_engine(x: np.ndarray, y: np.ndarray, init: List[np.ndarray]) -> Callable[[], float]:
    return taugrad_engine(x, y, init, fused_linear=True)


def taugrad_mlp(init: List[np.ndarray]):
    """The ``nn.Sequential`` MLP holding the shared initial weights, and its parameters in ``init``'s order."""
    from taugrad import nn

    model = nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]), nn.ReLU(),
                          nn.Linear(SIZES[2], SIZES[3]))
    layers = [m for m in model.children() if isinstance(m, nn.Linear)]
    for layer, w, b in zip(layers, init[0::2], init[1::2]):
        layer.weight._data[...] = w.T
        layer.bias._data[...] = b
    return model, [p for layer in layers for p in (layer.weight, layer.bias)]

def taugrad_nn_engine(x: np.ndarray, y: np.ndarray, init: List[np.ndarray]) -> Callable[[], float]:
    """What a PyTorch user writes: ``nn.Sequential`` of ``nn.Linear`` and ``nn.ReLU``.

    ``nn.Linear`` keeps PyTorch's (out, in) row-major weight, so views of it
    and of its gradient write into them; each Linear is one graph node (bias
    added in place) and each ReLU another.  Same weights and the same
    in-place SGD update as the others.
    """
    import taugrad
    import taugrad.functional as F

    model, params = taugrad_mlp(init)
    inputs = taugrad.Tensor(x)

    def step() -> float:
        loss = F.cross_entropy(model(inputs), y)
        loss.backward()
        for p in params:
            sgd_update(p._data, p.grad._data)  # the arrays, as the NumPy engine
            p.grad = None
        return float(loss._data)

    step.params = [p._data.T if p.ndim == 2 else p._data for p in params]  # type: ignore[attr-defined]
    return step


def torch_engine(x: np.ndarray, y: np.ndarray, init: List[np.ndarray]) -> Callable[[], float]:
    import torch
    import torch.nn.functional as F

    params = [torch.tensor(p, requires_grad=True) for p in init]
    inputs = torch.from_numpy(x)
    labels = torch.from_numpy(y)

    def step() -> float:
        w1, b1, w2, b2, w3, b3 = params
        h = (inputs @ w1 + b1).relu()
        h = (h @ w2 + b2).relu()
        loss = F.cross_entropy(h @ w3 + b3, labels)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=LR)
                p.grad = None
        return float(loss.detach())

    step.params = [p.detach().numpy() for p in params]  # type: ignore[attr-defined]
    return step


ENGINES = {"numpy": numpy_engine, "taugrad": taugrad_engine, "taugrad-nn": taugrad_nn_engine,
           "taugrad-linear": taugrad_linear_engine, "torch": torch_engine}


# ---------------------------------------------------------------------------
# tiny op
# ---------------------------------------------------------------------------


def tiny_taugrad() -> Callable[[], None]:
    import taugrad

    a = taugrad.Tensor(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32), requires_grad=True)
    b = taugrad.Tensor(np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float32), requires_grad=True)

    def op() -> None:
        (a + b).sum().backward()

    return op


def tiny_torch() -> Callable[[], None]:
    import torch

    a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = torch.tensor([0.5, 0.5, 0.5, 0.5], requires_grad=True)

    def op() -> None:
        (a + b).sum().backward()

    return op


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------


def print_environment() -> None:
    import torch

    print("environment")
    print(f"  python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}, "
          f"{os.cpu_count()} CPUs ({platform.machine()})")
    for name in BLAS_VARIABLES:
        value = os.environ.get(name)
        print(f"  {name:<26} {'(not set)' if value is None else repr(value)}")
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            print(f"  threadpool: {pool.get('internal_api')} {pool.get('version')} "
                  f"arch={pool.get('architecture')} threads={pool.get('num_threads')} "
                  f"({os.path.basename(pool.get('filepath', ''))})")
    except ImportError:
        blas = np.__config__.CONFIG.get("Build Dependencies", {}).get("blas", {})  # type: ignore[attr-defined]
        print(f"  numpy BLAS: {blas.get('name')} {blas.get('version')} (threadpoolctl not installed)")
    print(f"  torch threads: intra-op {torch.get_num_threads()}, inter-op {torch.get_num_interop_threads()}")
    print_load("at start")


def print_load(when: str) -> None:
    load = load_average()
    if load is None:
        return
    busy = load > 0.5 * (os.cpu_count() or 1)
    note = " -- machine busy: timings are noisy; consider --threads 1 or a quieter moment" if busy else ""
    print(f"  load average {when}: {load:.2f} on {os.cpu_count()} CPUs{note}")


def check_engines_agree(x: np.ndarray, y: np.ndarray, init: List[np.ndarray], names: List[str]) -> None:
    """Two steps from the same start must give the same losses and weights: same computation timed."""
    results = {}
    for name in names:
        step = ENGINES[name](x, y, init)
        losses = [step(), step()]
        results[name] = (losses, [np.array(p) for p in step.params])
    ref_losses, ref_params = results[names[0]]
    for name in names[1:]:
        losses, params = results[name]
        worst = max(float(np.max(np.abs(p - q))) for p, q in zip(params, ref_params))
        ok = np.allclose(losses, ref_losses, rtol=1e-4) and worst < 1e-5
        print(f"  {name} vs {names[0]}: losses {losses[0]:.6f}, {losses[1]:.6f} vs "
              f"{ref_losses[0]:.6f}, {ref_losses[1]:.6f}; max weight diff {worst:.1e} -> {'agree' if ok else 'DISAGREE'}")


def bench_training_step(names: List[str], rounds: int, number: int) -> Dict[str, float]:
    x, y, init = make_problem()
    print(f"\n1. training step: MLP {'-'.join(map(str, SIZES))}, ReLU, float32 batch {BATCH}, "
          f"cross-entropy, backward, SGD")
    check_engines_agree(x, y, init, names)
    steps = {name: ENGINES[name](x, y, init) for name in names}
    # NumPy and taugrad share NumPy's BLAS threads; PyTorch has its own
    samples = alternate(steps, rounds=rounds, number=number, warmup=5, settle=0.25, threads_of={"torch": "torch"})
    ms = {name: median(samples[name]) * 1e3 for name in names}
    base = ms.get("numpy")
    # each round times every engine back to back, so the ratio within a round
    # cancels the machine's slow drifts; its median is the robust ratio
    ratios = {name: [t / n for t, n in zip(samples[name], samples["numpy"])] for name in names} if base else {}
    paired = {name: (median(r),) + median_interval(r) for name, r in ratios.items()}
    print(f"  {rounds} alternating rounds x {number} steps; median ms/step; "
          f"'paired' = median over rounds of the ratio to NumPy's time in the same round, "
          f"with its 95% bootstrap interval")
    print(f"  {'engine':<15}{'ms/step':>10}{'+-':>8}{'vs numpy':>10}{'paired':>9}  {'95% interval':<14}")
    for name in names:
        ratio = f"{ms[name] / base:.2f}x" if base else "-"
        pair = f"{paired[name][0]:.2f}x" if base else "-"
        interval = f"{paired[name][1]:.2f}x-{paired[name][2]:.2f}x" if base else "-"
        print(f"  {name:<15}{ms[name]:>10.3f}{spread(samples[name]) * 100:>7.1f}%{ratio:>10}{pair:>9}  {interval:<14}")
    ms["_paired"] = paired  # type: ignore[assignment]
    return ms


def bench_tiny_op(names: List[str], rounds: int, number: int) -> Dict[str, float]:
    print("\n2. tiny op: (a + b).sum().backward(), a and b shape (4,) float32, requires_grad")
    makers = {"taugrad": tiny_taugrad, "torch": tiny_torch}
    ops = {name: makers[name]() for name in names if name in makers}
    samples = alternate(ops, rounds=rounds, number=number, warmup=100)
    us = {name: median(samples[name]) * 1e6 for name in ops}
    print(f"  {rounds} alternating rounds x {number} calls; median us/call")
    print(f"  {'engine':<15}{'us/op':>10}{'+-':>8}{'vs torch':>10}")
    for name in ops:
        ratio = f"{us[name] / us['torch']:.2f}x" if "torch" in us else "-"
        print(f"  {name:<15}{us[name]:>10.2f}{spread(samples[name]) * 100:>7.1f}%{ratio:>10}")
    return us


def traced_peak(name: str) -> int:
    """Peak bytes tracemalloc sees during one training step (after a warm-up step)."""
    x, y, init = make_problem()
    step = ENGINES[name](x, y, init)
    step()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        step()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def rss_probe(name: str, steps: int) -> None:
    """Child-process mode: print how much one engine's steps raise the peak RSS."""
    x, y, init = make_problem()
    step = ENGINES[name](x, y, init)
    if not reset_peak_rss():
        print("nan")
        return
    before = rss_bytes()
    for _ in range(steps):
        step()
    print(peak_rss_bytes() - before)


def bench_memory(names: List[str], steps: int, threads: int | None) -> Dict[str, tuple]:
    print("\n3. peak memory of a training step")
    mb = 1024 * 1024
    peaks: Dict[str, tuple] = {}
    print(f"  {'engine':<15}{'tracemalloc peak':>18}{'peak RSS growth':>18}")
    for name in names:
        traced = f"{traced_peak(name) / mb:.2f} MiB" if name != "torch" else "invisible*"
        command = [sys.executable, os.path.abspath(__file__), "--rss-probe", name, "--probe-steps", str(steps)]
        if threads is not None:
            command += ["--threads", str(threads)]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        rss = float(out.strip().splitlines()[-1]) / mb
        print(f"  {name:<15}{traced:>18}{rss:>14.2f} MiB")
        peaks[name] = (traced, f"{rss:.2f} MiB")
    print("  tracemalloc: NumPy/taugrad arrays allocated during one step (weights and data excluded);")
    print("  * PyTorch allocates outside Python's tracemalloc hooks, so its peak is not visible there.")
    print("  peak RSS growth: fresh child process per engine, peak RSS (VmHWM, reset after setup) during")
    print(f"  {steps} steps minus RSS before them;")
    print("  includes allocator/BLAS buffers the OS maps, so it is coarser than tracemalloc.")
    return peaks


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (few rounds) for a smoke test")
    parser.add_argument("--threads", type=int, default=None,
                        help="set BLAS and torch intra-op threads for all engines (default: leave as is)")
    parser.add_argument("--engines", default="numpy,taugrad,taugrad-nn,taugrad-linear,torch",
                        help="comma-separated subset")
    parser.add_argument("--markdown", action="store_true", help="also print the results as a Markdown table")
    parser.add_argument("--rss-probe", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--probe-steps", type=int, default=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = [n for n in args.engines.split(",") if n]
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        parser.error(f"unknown engine(s) {unknown}; choose from {list(ENGINES)}")

    if args.threads is not None:
        import torch
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.threads)
        torch.set_num_threads(args.threads)
    if args.rss_probe:
        rss_probe(args.rss_probe, args.probe_steps)
        return 0

    print_environment()
    # many short rounds: a burst of noise spoils one round's pair, not a long block
    step_ms = bench_training_step(names, *((5, 5) if args.quick else (101, 12)))
    tiny_us = bench_tiny_op(names, *((5, 200) if args.quick else (41, 2000)))
    peaks = bench_memory(names, steps=3 if args.quick else 10, threads=args.threads)

    print()
    print_load("at end")
    print("\ntargets")
    paired = step_ms.pop("_paired", {})
    for name in ("taugrad", "taugrad-nn"):
        if name in step_ms and "numpy" in step_ms:
            r = step_ms[name] / step_ms["numpy"]
            p, low, high = paired[name]
            print(f"  training step {name} / numpy = {r:.2f}x (ratio of medians), {p:.2f}x (median paired ratio, "
                  f"95% interval {low:.2f}x-{high:.2f}x) (target <= 1.10x): {step_verdict(r, low, high, 1.10)}")
    if "taugrad" in tiny_us and "torch" in tiny_us:
        r = tiny_us["taugrad"] / tiny_us["torch"]
        print(f"  tiny op taugrad / torch = {r:.2f}x (target <= 0.50x): {'MET' if r <= 0.5 else 'MISSED'}")
    if args.markdown:
        print_markdown(names, step_ms, tiny_us, peaks)
    return 0


def step_verdict(ratio_of_medians: float, low: float, high: float, target: float) -> str:
    """MET only if the whole interval and the ratio of medians are within the target; MISSED if
    even the interval's low end is above it; otherwise the run cannot tell."""
    if high <= target and ratio_of_medians <= target:
        return "MET"
    if low > target:
        return "MISSED"
    return f"NOT SHOWN (the interval contains {target:.2f}x: noise is larger than the margin)"


def print_markdown(names: List[str], step_ms: Dict[str, float], tiny_us: Dict[str, float],
                   peaks: Dict[str, tuple]) -> None:
    base = step_ms.get("numpy")
    print("\n| engine | MLP step (ms) | vs NumPy | tiny op (us) | vs PyTorch | tracemalloc peak | peak RSS growth |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        ratio = f"{step_ms[name] / base:.2f}x" if base else "-"
        tiny = f"{tiny_us[name]:.1f}" if name in tiny_us else "-"
        tiny_ratio = f"{tiny_us[name] / tiny_us['torch']:.2f}x" if name in tiny_us and "torch" in tiny_us else "-"
        traced, rss = peaks[name]
        print(f"| {name} | {step_ms[name]:.2f} | {ratio} | {tiny} | {tiny_ratio} | {traced} | {rss} |")


if __name__ == "__main__":
    sys.exit(main())

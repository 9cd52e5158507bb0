"""Scalar engine vs micrograd on micrograd's moons training step, in one process.

    python benchmarks/bench_scalar.py [--repeats 7] [--steps 3]

A step is micrograd's demo: forward over 100 points through MLP(2, [16, 16, 1]),
built as micrograd's granular graph (taugrad.scalar.nn's default) and, the fast
path, with one node per neuron (``fused=True``); SVM loss + 1e-4 L2, zero_grad,
backward, SGD update.  A second table times ``loss.backward()`` alone.  Each engine starts from the
same weights (``random.seed`` before building the model, both draw them with
``random.uniform(-1, 1)``) so the loss curves can be compared too.  Timings are
medians over ``--repeats`` rounds that alternate the engines.

Memory: peak bytes traced by ``tracemalloc`` from before the forward pass to the
end of ``backward()``, divided by the number of graph nodes (granular graph,
micrograd's node count), for both engines.
"""
from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import micrograd.engine  # noqa: E402
import micrograd.nn  # noqa: E402

import taugrad.scalar.nn as tnn  # noqa: E402
from taugrad.scalar import Value  # noqa: E402
from taugrad.scalar.moons import learning_rate, load_moons, loss_and_accuracy  # noqa: E402

SIZES = [16, 16, 1]


def make_engines():
    return {
        "micrograd": (micrograd.engine.Value, lambda: micrograd.nn.MLP(2, SIZES)),
        # micrograd's closures make reference cycles, so its graphs wait for the
        # cyclic GC, which dominates its time; this row shows it without that cost
        "micrograd (cyclic GC off)": (micrograd.engine.Value, lambda: micrograd.nn.MLP(2, SIZES)),
        "taugrad (fused=True)": (Value, lambda: tnn.MLP(2, SIZES, fused=True)),
        "taugrad (granular, default)": (Value, lambda: tnn.MLP(2, SIZES)),
    }


def step(model, X, y, k, value):
    loss, acc = loss_and_accuracy(model, X, y, value)
    model.zero_grad()
    loss.backward()
    lr = learning_rate(k)
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data, acc


def count_nodes(root):
    seen, stack = {id(root)}, [root]
    while stack:
        for child in stack.pop()._prev:
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return len(seen)


def time_steps(value, build, X, y, steps, gc_off=False):
    random.seed(1337)
    model = build()
    gc.collect()
    if gc_off:
        gc.disable()
    try:
        start = time.perf_counter()
        losses = [step(model, X, y, k, value)[0] for k in range(steps)]
        seconds = (time.perf_counter() - start) / steps
    finally:
        gc.enable()
        gc.collect()
    return seconds, losses


def time_backward(value, build, X, y):
    """Seconds of one ``loss.backward()`` on the step's graph (built beforehand, cyclic GC off while timed)."""
    random.seed(1337)
    model = build()
    loss, _ = loss_and_accuracy(model, X, y, value)
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        loss.backward()
        return time.perf_counter() - start
    finally:
        gc.enable()


def memory_per_node(value, build, X, y):
    random.seed(1337)
    model = build()
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    loss, _ = loss_and_accuracy(model, X, y, value)
    loss.backward()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    nodes = count_nodes(loss)
    return peak, nodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=3, help="training steps timed per round")
    args = parser.parse_args()
    X, y = load_moons()
    engines = make_engines()
    times = {name: [] for name in engines}
    backward_times = {name: [] for name in engines if "GC off" not in name}
    curves = {}
    for _ in range(args.repeats):
        for name, (value, build) in engines.items():
            seconds, losses = time_steps(value, build, X, y, args.steps, gc_off="GC off" in name)
            times[name].append(seconds)
            curves[name] = losses
            if name in backward_times:
                backward_times[name].append(time_backward(value, build, X, y))
    ref = statistics.median(times["micrograd"])
    print(f"moons step (100 points, MLP(2, {SIZES})), median of {args.repeats} rounds x {args.steps} steps")
    ref_no_gc = statistics.median(times["micrograd (cyclic GC off)"])
    print(f"{'engine':28s} {'ms/step':>9s} {'vs micrograd':>13s} {'vs micrograd, GC off':>21s}")
    for name in engines:
        med = statistics.median(times[name])
        print(f"{name:28s} {med * 1e3:9.2f} {ref / med:12.1f}x {ref_no_gc / med:20.1f}x")
    print()
    print(f"{'loss.backward() alone':28s} {'ms':>9s}")
    for name, values in backward_times.items():
        print(f"{name:28s} {statistics.median(values) * 1e3:9.2f}")
    print()
    print("loss curve (same initial weights):")
    for name, losses in curves.items():
        print(f"  {name:28s} " + "  ".join(f"{v:.12f}" for v in losses))
    print()
    print(f"{'engine':28s} {'graph nodes':>12s} {'peak bytes':>12s} {'bytes/node':>11s}")
    for name, (value, build) in engines.items():
        if "GC off" in name:
            continue
        peak, nodes = memory_per_node(value, build, X, y)
        print(f"{name:28s} {nodes:12d} {peak:12d} {peak / nodes:11.0f}")
    print("\n(bytes/node of the fused graph counts whole neurons as nodes; compare granular with micrograd)")


if __name__ == "__main__":
    main()

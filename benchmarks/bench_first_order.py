"""First-order speed before and after a change, back to back on one machine.

    python benchmarks/bench_first_order.py [--base REV] [--head REV] [--rounds 7] [--threads 1]

Features such as higher-order gradients must not slow the ordinary first-order
path (the budget was 5%).  This script checks out two revisions as temporary git
worktrees (``/tmp/taugrad_bench_base``, ``/tmp/taugrad_bench_head``) and times
the same workloads against each, in alternation: every round starts one fresh
Python process per revision (order rotating), with ``PYTHONPATH`` pointing at
that tree's ``src``.  A process warms up, then reports the best of a few
repeats per workload; the table shows the median over rounds.

Workloads (all first order, no create_graph anywhere):

* scalar: micrograd's moons training step (``taugrad.scalar.moons.train_step``,
  MLP(2, [16, 16, 1]) over 100 points);
* tensor: one SGD step of a 784-256-256-10 ReLU MLP, batch 128, float32,
  cross-entropy (forward, backward, update);
* tiny op: ``(a + b).sum().backward()`` on two shape-(4,) tensors.

``--base`` defaults to ``HEAD~1``, ``--head`` to HEAD.  The worktrees are removed at the end, also on errors.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ("scalar moons step", "tensor MLP step", "tiny op")

# ---------------------------------------------------------------------------
# child: time the workloads against whatever taugrad PYTHONPATH provides
# ---------------------------------------------------------------------------


def best_per_call(fn, number: int, repeats: int) -> float:
    """Fastest of ``repeats`` blocks of ``number`` calls, in seconds per call (GC paused)."""
    import gc

    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best = min(best, (time.perf_counter() - start) / number)
    finally:
        gc.enable()
    return best


def scalar_workload():
    import random

    from taugrad.scalar import nn
    from taugrad.scalar.moons import load_moons, train_step

    X, y = load_moons()
    random.seed(1337)
    model = nn.MLP(2, [16, 16, 1])
    step = [0]

    def run():
        train_step(model, X, y, step[0] % 100)
        step[0] += 1

    return run


def tensor_workload():
    import numpy as np

    import taugrad
    import taugrad.functional as F

    rng = np.random.default_rng(0)
    sizes = (784, 256, 256, 10)
    x = taugrad.tensor(rng.standard_normal((128, sizes[0])).astype(np.float32))
    y = rng.integers(0, sizes[-1], size=128)
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        params.append(taugrad.tensor(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32), requires_grad=True))
        params.append(taugrad.tensor(rng.uniform(-bound, bound, fan_out).astype(np.float32), requires_grad=True))

    def run():
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i + 2 < len(params):
                h = h.relu()
        loss = F.cross_entropy(h, y)
        loss.backward()
        with taugrad.no_grad():
            for p in params:
                p._data -= 0.01 * p.grad._data
                p.grad = None

    return run


def tiny_workload():
    import taugrad

    a = taugrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = taugrad.tensor([0.5, 0.5, 0.5, 0.5], requires_grad=True)

    def run():
        (a + b).sum().backward()

    return run


def child() -> int:
    plans = [(scalar_workload, 3, 5), (tensor_workload, 10, 5), (tiny_workload, 3000, 5)]
    result = {}
    for name, (make, number, repeats) in zip(WORKLOADS, plans):
        try:
            run = make()
        except (ImportError, AttributeError):  # an old revision without this engine
            result[name] = None
            continue
        for _ in range(2):  # warm up: lazily made buffers, caches
            run()
        result[name] = best_per_call(run, number, repeats)
    print(json.dumps(result))
    return 0


# ---------------------------------------------------------------------------
# parent: worktrees, alternation, table
# ---------------------------------------------------------------------------


def git(*args: str) -> str:
    for attempt in range(20):  # other people commit in the same repository: wait out index.lock
        proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout.strip()
        if "lock" not in proc.stderr:
            break
        time.sleep(0.5)
    raise SystemExit(f"git {' '.join(args)} failed: {proc.stderr.strip()}")


def default_base() -> str:
    return git("rev-parse", "HEAD~1").strip()


def time_tree(tree: Path, env: dict) -> dict:
    env = dict(env, PYTHONPATH=str(tree / "src"))
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child"], env=env,
                          capture_output=True, text=True, cwd=str(tree))
    if proc.returncode != 0:
        raise SystemExit(f"timing run in {tree} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds * 1e6:8.1f} us"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="revision before the change (default: HEAD~1)")
    parser.add_argument("--head", default="HEAD", help="revision after the change (default: HEAD)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads in the timed processes")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child()

    revs = {"base": git("rev-parse", "--short", args.base or default_base()),
            "head": git("rev-parse", "--short", args.head)}
    trees = {"base": Path("/tmp/taugrad_bench_base"), "head": Path("/tmp/taugrad_bench_head")}
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(args.threads)
    samples = {side: {w: [] for w in WORKLOADS} for side in trees}
    added = []
    try:
        for side, tree in trees.items():
            if tree.exists():
                git("worktree", "remove", "--force", str(tree))
            git("worktree", "add", "--detach", str(tree), revs[side])
            added.append(tree)
        sides = list(trees)
        for r in range(args.rounds):
            for side in (sides if r % 2 == 0 else sides[::-1]):
                for w, seconds in time_tree(trees[side], env).items():
                    samples[side][w].append(seconds)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        for tree in added:
            git("worktree", "remove", "--force", str(tree))
        git("worktree", "prune")

    print(f"first-order timings, median of {args.rounds} alternating rounds "
          f"(best of 5 blocks per process), {args.threads} BLAS thread(s), Python {sys.version.split()[0]}")
    print(f"base = {revs['base']} ({git('log', '-1', '--format=%s', revs['base'])[:60]})")
    print(f"head = {revs['head']} ({git('log', '-1', '--format=%s', revs['head'])[:60]})")
    print()
    print(f"{'workload':<20} {'base':>12} {'head':>12} {'change':>8}   spread base / head")
    worst = float("-inf")
    for w in WORKLOADS:
        if None in samples["base"][w] + samples["head"][w]:
            print(f"{w:<20} {'n/a':>12} {'n/a':>12}   (not in one of the revisions)")
            continue
        before = statistics.median(samples["base"][w])
        after = statistics.median(samples["head"][w])
        change = after / before - 1
        worst = max(worst, change)
        spread = " / ".join(
            f"{(max(s) - min(s)) / statistics.median(s) * 100:.0f}%" for s in (samples["base"][w], samples["head"][w]))
        print(f"{w:<20} {fmt(before):>12} {fmt(after):>12} {change * 100:+7.1f}%   {spread}")
    print()
    if worst == float("-inf"):
        print("nothing to compare")
        return 0
    verdict = "OK" if worst <= 0.05 else "SLOWER"
    print(f"{verdict}: the largest change is {worst * 100:+.1f}% (limit +5%)")
    return 0 if worst <= 0.05 else 1


if __name__ == "__main__":
    raise SystemExit(main())

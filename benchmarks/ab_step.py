"""Before/after: the training step of two source trees, timed in alternating processes.

Usage::

    git worktree add /tmp/before HEAD~1
    OPENBLAS_NUM_THREADS=1 python benchmarks/ab_step.py [--settle SECONDS] 200 \\
        numpy=/tmp/before:numpy before=/tmp/before:taugrad-nn after=.:taugrad-nn

Each ``name=tree:engine`` runs in its own worker process with ``tree/src``
first on its path and the engine ``engine`` of ``tree/benchmarks/bench_tensor.py`` (or of ``bench_compile.py``).
The workers take turns, a block of steps each (the order reversed every
round), so a slow phase of the machine hits all of them; each block reports
its median step, and each worker's ratio to the first one is the median over
rounds of the ratio within a round, with a 95% bootstrap interval.

Why processes: one process cannot import two versions of taugrad.  With
more than one BLAS thread, pass ``--settle 0.25`` (before the round count):
a pause before each block, or an idle worker's spinning BLAS threads slow
down the one whose turn it is.  Two workers on the same tree
show the noise floor (about 1% here with 200 rounds).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _timing import median, median_interval  # noqa: E402


def worker(tree: str, engine: str, steps: int) -> None:
    """Run blocks of ``steps`` steps, one per line read from stdin; print each block's median."""
    sys.path.insert(0, os.path.join(tree, "benchmarks"))
    import bench_tensor

    x, y, init = bench_tensor.make_problem()
    if engine in bench_tensor.ENGINES:
        step = bench_tensor.ENGINES[engine](x, y, init)
    else:  # bench_compile.py's steps (gpt-eager, makemore-eager, their compiled twins...)
        import bench_compile

        step = bench_compile.ENGINES[engine](x, y, init)
    for _ in range(30):
        step()
    for _ in sys.stdin:
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
        print(median(times), flush=True)


def start_worker(spec: str, steps: int):
    name, rest = spec.split("=", 1)
    tree, engine = rest.rsplit(":", 1)
    tree = os.path.abspath(tree)
    env = dict(os.environ, PYTHONPATH=os.path.join(tree, "src"))
    command = [sys.executable, os.path.abspath(__file__), "--worker", tree, engine, str(steps)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    return name, process


def main(argv: list) -> int:
    if argv[:1] == ["--worker"]:
        worker(argv[1], argv[2], int(argv[3]))
        return 0
    if len(argv) < 3:
        print(__doc__)
        return 2
    settle = 0.0
    if argv[:1] == ["--settle"]:  # seconds of pause before each block: lets idle BLAS threads stop spinning
        settle, argv = float(argv[1]), argv[2:]
    rounds, specs = int(argv[0]), argv[1:]
    workers = [start_worker(spec, steps=15) for spec in specs]
    samples = {name: [] for name, _ in workers}
    for r in range(rounds):
        for name, process in (workers if r % 2 == 0 else workers[::-1]):
            time.sleep(settle)
            process.stdin.write("go\n")
            process.stdin.flush()
            samples[name].append(float(process.stdout.readline()))
    for _, process in workers:
        process.stdin.close()
        process.wait()
    base = samples[workers[0][0]]
    print(f"{rounds} rounds, blocks of 15 steps; ratio = median over rounds of the ratio to {workers[0][0]}")
    for name, _ in workers:
        ratios = [t / b for t, b in zip(samples[name], base)]
        low, high = median_interval(ratios)
        print(f"  {name:<12}{median(samples[name]) * 1e3:8.3f} ms/step  {median(ratios):.3f}x  "
              f"(95% interval {low:.3f}x-{high:.3f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

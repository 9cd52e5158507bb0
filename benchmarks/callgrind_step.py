"""Instructions per training step, counted by callgrind: a figure that repeats exactly.

Usage (one BLAS thread, so the count does not depend on thread scheduling)::

    python benchmarks/callgrind_step.py [ENGINE] [STEPS] [TREE]

runs ``ENGINE``'s step from ``bench_tensor.py`` (default ``taugrad-nn``, the
784-256-256-10 MLP) or from ``bench_compile.py`` (``taugrad-compiled``: the same
step under ``taugrad.compile``; ``gemm``: its matrix products alone;
``makemore-eager``/``-compiled``, ``gpt-...``, ``cnn-...``; ``cnn-a`` ... ``cnn-d``: taugrad's
steps (a)-(d) of ``bench_cnn.py``) under ``valgrind --tool=callgrind``: five untimed warm-up
steps, then ``STEPS`` steps (default 10) run through ``map()``, and callgrind
counts only inside CPython's ``map_next`` (``--toggle-collect``), so imports,
set-up and warm-up are left out.  Prints the count divided by ``STEPS``.
``TREE`` (default: this checkout) is the source tree whose ``src`` and
``benchmarks`` are used, so a before/after pair is two commands.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CNN_STEPS = ("cnn-a", "cnn-b", "cnn-c", "cnn-d")


def run_steps(tree: str, engine: str, steps: int) -> None:
    """The measured process: warm up outside ``map()``, then run the counted steps inside it."""
    sys.path.insert(0, os.path.join(tree, "benchmarks"))
    import bench_tensor

    x, y, init = bench_tensor.make_problem()
    if engine in CNN_STEPS:  # bench_cnn.py's (a)-(d), taugrad's step (its argument parser reads sys.argv)
        sys.argv = [sys.argv[0], "--threads", "1"]
        import bench_cnn

        build, shape, sgd = next(case for name, case in bench_cnn.CASES.items() if name[1] == engine[-1])
        step = bench_cnn.make_steps(build, shape, sgd)[1]
    elif engine in bench_tensor.ENGINES:
        step = bench_tensor.ENGINES[engine](x, y, init)
    else:  # taugrad.compile's steps (taugrad-compiled, makemore-compiled...) and their eager twins
        import bench_compile

        step = bench_compile.ENGINES[engine](x, y, init)
    for _ in range(5):
        step()
    list(map(lambda _: step(), range(steps)))


def count(tree: str, engine: str, steps: int) -> int:
    """Instructions executed inside the ``map()`` that runs the steps."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = dict(os.environ, PYTHONPATH=os.path.join(tree, "src"), OPENBLAS_NUM_THREADS="1")
        command = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=map_next",
                   f"--callgrind-out-file={out}",
                   sys.executable, os.path.abspath(__file__), "--run", tree, engine, str(steps)]
        subprocess.run(command, env=env, check=True, capture_output=True)
        with open(out) as f:
            for line in f:
                match = re.match(r"(?:summary|totals):\s+(\d+)", line)
                if match:
                    return int(match.group(1))
    raise RuntimeError("callgrind wrote no totals")


def main(argv: list) -> int:
    if argv[:1] == ["--run"]:
        run_steps(argv[1], argv[2], int(argv[3]))
        return 0
    engine = argv[0] if argv else "taugrad-nn"
    steps = int(argv[1]) if len(argv) > 1 else 10
    tree = os.path.abspath(argv[2]) if len(argv) > 2 else os.path.dirname(HERE)
    per_step = count(tree, engine, steps) / steps
    print(f"{engine} ({tree}): {per_step:,.0f} instructions per step ({steps} steps, callgrind, 1 BLAS thread)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

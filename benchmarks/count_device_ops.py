"""Array operations per training step on a device, counted on any machine: a proxy for GPU kernel launches.

    PYTHONPATH=src python benchmarks/count_device_ops.py [--case gpt|mlp] [--top 25]

A step that is bound by the host on a GPU (the GPT step: about 1,500 kernels
launched through CuPy's Python layer, against torch's 761) gets faster by
launching fewer kernels.  Without a GPU the launches cannot be timed, but they
can be counted: the strict fake backend of ``tests/backend`` (NumPy under a
CuPy-like array type) is registered as ``'cuda'``, and every operation that
makes a new array, writes into one in place or assigns into one by index is
counted once, by the line of taugrad's source that asked for it.  Views
(reshape, slicing, transpose) are not counted: CuPy launches nothing for them.
The count is exact and repeats; how it maps to kernels is approximate (CuPy
runs some functions, such as ``concatenate`` of many arrays, as one kernel or
as several).
"""
from __future__ import annotations

import argparse
import collections
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "backend"))
import strict_backend  # noqa: E402

import taugrad  # noqa: E402

_IN_PLACE = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__", "__iand__", "__ior__", "__ixor__",
             "__ifloordiv__", "__imod__")


class Counter:
    """Counts the fake backend's array operations by taugrad source line while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.by_line: collections.Counter = collections.Counter()
        wrap, setitem = strict_backend.wrap, strict_backend.StrictArray.__setitem__

        def counting_wrap(x):
            # a new array, not a view; a NumPy scalar is a full reduction's result (on CuPy a 0-d array)
            if self.on and (isinstance(x, np.generic) or isinstance(x, np.ndarray) and x.base is None):
                self.by_line[_taugrad_line()] += 1
            return wrap(x)

        def counting_setitem(array, key, value):
            if self.on:
                self.by_line[_taugrad_line() + " (index assignment)"] += 1
            return setitem(array, key, value)

        strict_backend.wrap = counting_wrap
        strict_backend.StrictArray.__setitem__ = counting_setitem
        for name in _IN_PLACE:
            operator = getattr(strict_backend.StrictArray, name, None)
            if operator is not None:
                setattr(strict_backend.StrictArray, name, self._counting(operator, name))

    def _counting(self, operator, name):
        def in_place(array, other):
            if self.on:
                self.by_line[f"{_taugrad_line()} ({name})"] += 1
            return operator(array, other)

        return in_place


def _taugrad_line() -> str:
    """``file:line`` of the innermost frame in taugrad's package that led here."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if f"{os.sep}taugrad{os.sep}" in path and f"{os.sep}tests{os.sep}" not in path:
            return path.split(os.sep + "taugrad" + os.sep)[-1] + f":{frame.f_lineno}"
        frame = frame.f_back
    return "(outside taugrad)"


class _OnDevice:
    """``taugrad`` whose ``arange``/``ones`` build on 'cuda' (the lecture's GPT calls them bare)."""

    def __getattr__(self, name):
        return getattr(taugrad, name)

    def arange(self, *args, **kwargs):
        return taugrad.arange(*args, device="cuda", **kwargs)

    def ones(self, *args, **kwargs):
        return taugrad.ones(*args, device="cuda", **kwargs)


def gpt_case():
    """The GPT of ``bench_torch_programs.py`` (4 blocks x 4 heads x 64, block 32, batch 16) with AdamW."""
    saved_argv, sys.argv = sys.argv, sys.argv[:1]  # that script reads its own arguments on import
    try:
        import bench_torch_programs as programs
    finally:
        sys.argv = saved_argv
    taugrad.manual_seed(0)
    model = programs.gpt_model(_OnDevice()).to("cuda")
    data = np.random.default_rng(0).integers(0, programs.VOCAB, (programs.GPT_BATCH, programs.BLOCK + 1))
    x, y = taugrad.tensor(data[:, :-1], device="cuda"), taugrad.tensor(data[:, 1:].copy(), device="cuda")
    return (lambda: model(x, y)[1]), taugrad.optim.AdamW(model.parameters(), lr=1e-3)


def mlp_case():
    """MLP 784-256-256-10, batch 128, cross-entropy, SGD (the ``mlp`` case of ``bench_cuda.py``)."""
    taugrad.manual_seed(0)
    nn = taugrad.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    model.to("cuda")
    rng = np.random.default_rng(0)
    x = taugrad.tensor(rng.standard_normal((128, 784)).astype(np.float32), device="cuda")
    y = taugrad.tensor(rng.integers(0, 10, 128), device="cuda")
    return (lambda: nn.functional.cross_entropy(model(x), y)), taugrad.optim.SGD(model.parameters(), lr=0.1)


CASES = {"gpt": gpt_case, "mlp": mlp_case}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), default="gpt")
    parser.add_argument("--top", type=int, default=25, help="source lines to list")
    args = parser.parse_args()
    counter = Counter()
    strict_backend.install("cuda")
    loss_of, optimizer = CASES[args.case]()

    def step():
        loss = loss_of()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    step()
    step()  # the optimizer's state exists from here on
    counter.on = True
    step()
    counter.on = False
    by_file: collections.Counter = collections.Counter()
    for line, count in counter.by_line.items():
        by_file[line.split(":")[0]] += count
    print(f"{args.case}: {sum(counter.by_line.values())} array operations in one training step")
    print("by file:", ", ".join(f"{name} {count}" for name, count in by_file.most_common()))
    for line, count in counter.by_line.most_common(args.top):
        print(f"{count:6d}  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

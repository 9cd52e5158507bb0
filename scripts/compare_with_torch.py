"""Run one unchanged PyTorch program on PyTorch and on taugrad, and say whether they print the same numbers.

    python scripts/compare_with_torch.py [--rtol R] [--seed S] [--show] PROGRAM.py [args...]

The program runs twice, each time in a fresh Python process started in the
current folder: first with PyTorch (``python PROGRAM.py args``), then with
``taugrad run PROGRAM.py args``.  Before the program starts, each process
installs the shim of ``shared_randomness.py``, which makes both runs draw
the same random values (parameter initialisation, data order, dropout masks,
sampling) from one seeded NumPy stream; its docstring says exactly what is
shared and what is left to be compared by contract.

Then the two standard outputs are compared line by line:

* the text of each line, with its numbers taken out, must be the same (but
  for the amount of white space, since padding follows a number's width);
* each number must agree to ``|a - b| <= rtol * max(|a|, |b|) + u``, where
  ``u`` is one unit in the last digit printed (a value printed as ``2.4316``
  has ``u = 1e-4``): two runs whose values differ by 1e-7 may still round to
  neighbouring printed digits.  The default ``rtol = 1e-4`` is for float32
  programs: PyTorch and NumPy sum in different orders and call different
  matrix-product kernels, so each op may differ by a few units in float32's
  last place (about 6e-8 relative); over tens of training steps these grow
  to about 1e-6..1e-5, and 1e-4 leaves a tenfold margin while a real
  difference in the arithmetic (a wrong gradient, a missed step) moves a
  loss by far more.  The largest relative difference found is reported.
* timings are not compared: a number is a timing when a time unit follows it
  (``12.3ms``, ``4 s``, ``8.1 it/s``, ``300 tokens/s``; see :data:`UNIT_AFTER`)
  or a timing label comes right before it (``time 3.2``, ``ms/batch 41.0``,
  ``mfu 1.2%``, ``iter_dt``; see :data:`LABEL_BEFORE`, mfu being computed
  from the time).  Standard error (progress bars, warnings) is not compared.

``--baseline`` adds a third run, PyTorch against itself with every
parameter value scaled by ``1 + eps`` or ``1 - eps`` in turn (one unit in
the last place of its dtype) when it is handed over: a long training run at a high learning rate is
chaotic, and a difference in the last bit grows until the printed losses
part (word_language_model's RNN at its learning rate of 20 parts within 100
batches even in float64).  Where PyTorch parts from itself as soon as from
taugrad, the difference is rounding, not arithmetic; ``--float64`` then
shows the arithmetic agreeing for longer.

The exit status is 0 when both runs succeed and agree, 1 otherwise (the baseline does not change it).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?!\d|\.\d)|(?:nan|inf)(?!\w))")
#: a time unit right after a number makes it a timing
UNIT_AFTER = re.compile(r"\s*(?:ms|s|sec|secs|seconds?|us|µs|ns|mins?|minutes?|hours?|it/s|s/it|[A-Za-z]+/s(?:ec)?)"
                        r"(?![A-Za-z])")
#: a timing label right before a number makes it a timing
LABEL_BEFORE = re.compile(r"(?:\b(?:time|times|dt|iter_dt|elapsed|took|duration|eta|mfu|throughput|speed)"
                          r"|\b(?:ms|s)/(?:batch|step|iter|it))[\s:=]*$", re.IGNORECASE)


@dataclass
class Number:
    text: str
    value: float
    unit: float  # one unit in the last printed digit (0 for an integer: it is printed exactly)


@dataclass
class Comparison:
    """The result of comparing two outputs: ``same`` when every line's text and numbers agree."""
    values: int = 0
    lines: int = 0
    timings: int = 0
    max_rel: float = 0.0
    differences: List[Tuple[int, str, str, str]] = field(default_factory=list)  # (line, torch, taugrad, why)

    @property
    def same(self) -> bool:
        return not self.differences


def parse_number(text: str) -> Number:
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2]) if "." in mantissa else None
    if decimals is None or mantissa in ("nan", "inf", "-inf", "+nan", "+inf", "-nan"):
        unit = 0.0
    else:
        unit = 10.0 ** (-decimals + (int(exponent) if exponent else 0))
    return Number(text, float(text), unit)


def split_line(line: str) -> Tuple[str, List[Number], int]:
    """A line's text with its numbers replaced by ``#`` and its timings dropped, its numbers, and how many timings."""
    parts, numbers, timings, last = [], [], 0, 0
    for match in NUMBER.finditer(line):
        parts.append(line[last:match.start()])
        last = match.end()
        if UNIT_AFTER.match(line, match.end()) or LABEL_BEFORE.search(line[:match.start()]):
            timings += 1
            parts.append("<time>")
        else:
            numbers.append(parse_number(match.group()))
            parts.append("#")
    parts.append(line[last:])
    return "".join(parts).rstrip(), numbers, timings


def numbers_in(line: str) -> List[float]:
    """The numbers a line prints, timings left out."""
    return [n.value for n in split_line(line)[1]]


def _rel(a: float, b: float) -> float:
    scale = max(abs(a), abs(b))
    return 0.0 if a == b or scale == 0.0 else abs(a - b) / scale


def compare_outputs(torch_out: str, taugrad_out: str, rtol: float = 1e-4,
                    ignore: Optional[str] = None) -> Comparison:
    """Compare two standard outputs line by line (see the module docstring for the rule); the text that the
    regular expression ``ignore`` matches is taken out of every line first (a process id, say)."""
    result = Comparison()
    ours, theirs = taugrad_out.splitlines(), torch_out.splitlines()
    if ignore:
        ours, theirs = [re.sub(ignore, "", line) for line in ours], [re.sub(ignore, "", line) for line in theirs]
    if len(ours) != len(theirs):
        result.differences.append((min(len(ours), len(theirs)) + 1, f"{len(theirs)} lines", f"{len(ours)} lines",
                                   "the outputs have different numbers of lines"))
    for i, (t_line, g_line) in enumerate(zip(theirs, ours), start=1):
        t_text, t_nums, t_times = split_line(t_line)
        g_text, g_nums, _ = split_line(g_line)
        result.lines += 1
        result.timings += t_times
        if t_text.split() != g_text.split() or len(t_nums) != len(g_nums):  # padding follows the numbers' widths
            result.differences.append((i, t_line, g_line, "the text differs"))
            continue
        bad = []
        for a, b in zip(t_nums, g_nums):
            result.values += 1
            slack = max(a.unit, b.unit) * (1 + 1e-9)  # one printed digit, as a binary float's subtraction gives it
            same_nan = a.value != a.value and b.value != b.value
            rel = 0.0 if same_nan else _rel(a.value, b.value)
            if rel == rel:
                result.max_rel = max(result.max_rel, rel)
            allowed = rtol * max(abs(a.value), abs(b.value)) + slack
            if a.value != b.value and not same_nan and not abs(a.value - b.value) <= allowed:
                bad.append(f"{a.text} vs {b.text}")
        if bad:
            result.differences.append((i, t_line, g_line, "numbers differ: " + ", ".join(bad)))
    result.differences.sort(key=lambda difference: difference[0])
    return result


def run_engine(engine: str, folder: str, seed: int, program: str, args: Sequence[str], timeout: float,
               lines: Optional[int] = None, dtype: str = "",
               before: Sequence[str] = ()) -> subprocess.CompletedProcess:
    """One run of the program in a fresh process, with the shared-randomness shim installed first.

    ``OMP_NUM_THREADS=1``: each engine reduces in one order (and a shared machine stays calm).  With
    ``lines``, the run is stopped once it has printed that many lines (an endless training loop), and counts
    as a success.  ``dtype="float64"`` sets torch's default dtype first; the scripts ``before`` run first, in
    the same process (so each engine reads the files it wrote itself).
    """
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    cmd = [sys.executable, os.path.abspath(__file__), "--child",
           json.dumps({"engine": engine, "folder": folder, "seed": seed, "dtype": dtype, "before": list(before)}),
           program, *args]
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                                start_new_session=True)  # its own process group: stopping it stops its workers
        timer = threading.Timer(timeout, _stop, (proc,))
        timer.start()
        out: List[str] = []
        try:
            for line in proc.stdout:
                out.append(line)
                if lines is not None and len(out) >= lines:
                    _stop(proc)
                    break
            proc.wait()
        finally:
            timer.cancel()
            proc.stdout.close()
        err.seek(0)
        stopped = lines is not None and len(out) >= lines
        return subprocess.CompletedProcess(cmd, 0 if stopped else proc.returncode, "".join(out), err.read())


def _stop(proc: subprocess.Popen) -> None:
    """End a run this script started (its process group, so the workers it spawned end with it)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _last_lines(text: str, n: int = 3) -> str:
    return "\n".join("    " + line for line in text.strip().splitlines()[-n:])


def report(first, second, result: Optional[Comparison], rtol: float, names=("torch", "taugrad")) -> str:
    """The verdict on two runs (``first`` is PyTorch's) and their comparison (None when one failed)."""
    lines = []
    for name, run in zip(names, (first, second)):
        if run.returncode != 0:
            lines.append(f"{name} run failed (exit {run.returncode}):\n{_last_lines(run.stderr)}")
    if result is None:
        return "\n".join(lines)
    if result.same:
        lines.append(f"same numbers: {result.values} values on {result.lines} lines agree to rtol {rtol:g} "
                     f"(max rel diff {result.max_rel:.1e}; {result.timings} timings ignored)")
    else:
        lines.append(f"DIFFERENT: {len(result.differences)} of {result.lines} lines "
                     f"({result.values} values compared, max rel diff {result.max_rel:.1e})")
        width = max(len(n) for n in names) + 1
        for line, a, b, why in result.differences[:8]:
            lines.append(f"  line {line}: {why}\n    {names[0] + ':':{width}} {a}\n    {names[1] + ':':{width}} {b}")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        from shared_randomness import run  # beside this file, which is first on sys.path
        del sys.path[0]  # then gone: the program sees its own folder first, as under `python PROGRAM.py`
        settings = json.loads(argv[1])
        commands = [[before] for before in settings["before"]] + [argv[2:]]
        return run(settings["engine"], settings["folder"], settings["seed"], commands, settings["dtype"])
    parser = argparse.ArgumentParser(prog="compare_with_torch.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance for each number (1e-4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the shared NumPy stream (0)")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds each run may take")
    parser.add_argument("--lines", type=int, default=None,
                        help="stop each run after it prints this many lines (for an endless training loop)")
    parser.add_argument("--float64", dest="dtype", action="store_const", const="float64", default="",
                        help="make float64 the default dtype in both runs, so rounding cannot hide a difference")
    parser.add_argument("--before", action="append", default=[], metavar="SCRIPT",
                        help="a script (no arguments) to run first under the same engine, e.g. one that writes "
                             "the data file the program reads; its output is compared too")
    parser.add_argument("--ignore", metavar="REGEX", help="text to take out of every line before comparing "
                        "(e.g. '^[0-9]+\\t' for the process id mnist_hogwild prints first)")
    parser.add_argument("--show", action="store_true", help="print both outputs before the verdict")
    parser.add_argument("--baseline", action="store_true",
                        help="also run PyTorch against itself with its parameters moved by one unit in the last "
                             "place, to show how far rounding alone moves this program's numbers")
    parser.add_argument("program", help="the PyTorch program, run unchanged")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    opts = parser.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="compare_with_torch_")
    try:
        torch_run = run_engine("torch", folder, opts.seed, opts.program, opts.args, opts.timeout,
                               lines=opts.lines, dtype=opts.dtype, before=opts.before)
        taugrad_run = run_engine("taugrad", folder, opts.seed, opts.program, opts.args, opts.timeout,
                                 lines=opts.lines, dtype=opts.dtype, before=opts.before)
        standin = os.path.exists(os.path.join(folder, "torchvision_standin"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if opts.show:
        for name, run in (("torch", torch_run), ("taugrad", taugrad_run)):
            print(f"--- {name} stdout ---\n{run.stdout}", end="" if run.stdout.endswith("\n") else "\n", flush=True)
    ok = torch_run.returncode == 0 and taugrad_run.returncode == 0
    result = compare_outputs(torch_run.stdout, taugrad_run.stdout, opts.rtol, opts.ignore) if ok else None
    print(report(torch_run, taugrad_run, result, opts.rtol))
    if standin:
        print("(the PyTorch run imported torchvision_standin.py: taugrad.vision's data sets and transforms, "
              "samples handed to torch through NumPy)")
    if opts.baseline and torch_run.returncode == 0:
        folder = tempfile.mkdtemp(prefix="compare_with_torch_")
        try:
            again = run_engine("torch-nudged", folder, opts.seed, opts.program, opts.args, opts.timeout,
                               lines=opts.lines, dtype=opts.dtype, before=opts.before)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        itself = (compare_outputs(torch_run.stdout, again.stdout, opts.rtol, opts.ignore) if again.returncode == 0
                  else None)
        print("baseline, torch against torch with its parameters moved by one unit in the last place: "
              + report(torch_run, again, itself, opts.rtol, names=("torch", "torch+eps")))
    return 0 if ok and result is not None and result.same else 1


if __name__ == "__main__":
    sys.exit(main())

"""`taugrad check PATH.py`: grade your own autograd engine (the chapter's exercises 5 and 6).

Loads the class (``Value`` unless ``--class``) from PATH in a separate process
with time, CPU-time and memory limits (ended with this command, however it ends), finds which ops and attributes it has, and
checks forward values, local rules, accumulation, order, depth, a second
backward() and random expressions against finite differences.  Each failure
comes with the smallest failing expression and a one-line diagnosis.

Exit status: 0 every check passed (warnings and info never fail), 1 a check
failed, 2 the file could not be graded (load error, timeout, no usable class).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import sys
import threading

from taugrad.cli.common import CommandError, check_seed

EPILOG = """examples:
  taugrad check my_engine.py
  taugrad check my_engine.py --class Scalar --count 500 --seed 1
  taugrad check my_engine.py --json

exit status: 0 all checks passed, 1 a check failed, 2 the file could not be graded"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "check",
        help="grade your own autograd engine: which rule is wrong, and why",
        description="Grade a learner's Value class: forward values, local rules, accumulation, order, "
                    "depth, backward twice, random expressions against finite differences.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", metavar="PATH.py", help="the file that defines your engine")
    parser.add_argument("--class", dest="class_name", default="Value", metavar="NAME",
                        help="name of the class to grade (default: Value)")
    parser.add_argument("--count", type=int, default=100, help="random expressions to check (default: 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random points and expressions (default: 0)")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="time limit for loading and grading the engine (default: 60)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.set_defaults(run=run)


def run(args) -> int:
    from taugrad.learn.check import CheckError, check  # imported by this command only, like every command's parts
    from taugrad.learn.check.runner import MAX_COUNT  # the same

    if not 0 <= args.count <= MAX_COUNT:
        raise CommandError(f"--count must be between 0 and {MAX_COUNT}, got {args.count}")
    if not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise CommandError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    check_seed(args.seed)
    try:
        with _terminate_as_exit():
            report = check(args.path, class_name=args.class_name, count=args.count, seed=args.seed,
                           timeout=args.timeout)
    except CheckError as err:
        if args.json:
            print(json.dumps({"class": args.class_name, "ok": False, "error": str(err), "traceback": err.frames}))
        print(f"taugrad check: error: {err}", file=sys.stderr)
        for line in err.frames:  # the learner's own traceback, trimmed to their file
            print(line, file=sys.stderr)
        return 2
    print(report.to_json() if args.json else report)
    return 0 if report.ok else 1


@contextlib.contextmanager
def _terminate_as_exit():
    """SIGTERM unwinds like Ctrl-C does, so the sandbox process is closed on the way out, not orphaned."""
    def _exit(signum, frame):
        raise SystemExit(128 + signum)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

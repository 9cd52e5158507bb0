"""The ``taugrad`` command: one sub-command per module in this package.

Each sub-command module defines ``register(subparsers)``, which adds its parser
and sets ``run=function(args) -> int``.  Modules are imported by name, so a
command's heavy imports (NumPy plotting, datasets) cost nothing to the others.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

from taugrad.cli.common import CommandError

COMMANDS = ["demo", "train", "trace", "graph", "gradcheck"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="taugrad",
        description="taugrad: a small, readable automatic-differentiation engine.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"taugrad.cli.{name}").register(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the console script; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except CommandError as err:
        print(f"taugrad {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"taugrad {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

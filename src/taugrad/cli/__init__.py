"""The ``taugrad`` command: one sub-command per module in this package.

Each sub-command module defines ``register(subparsers)``, which adds its parser
and sets ``run=function(args) -> int``.  Modules are imported by name, so a
command's heavy imports (NumPy plotting, datasets) cost nothing to the others.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import List, Optional

from taugrad import __version__
from taugrad.cli.common import CommandError

COMMANDS = ["demo", "train", "trace", "graph", "gradcheck", "check", "run"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="taugrad",
        description="taugrad: a small, readable automatic-differentiation engine.",
    )
    parser.add_argument("--version", action="version", version=f"taugrad {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"taugrad.cli.{name}").register(sub)
    return parser


def _version() -> str:
    """The installed distribution's version; the package's own when running from a source tree."""
    try:
        return version("taugrad")
    except PackageNotFoundError:
        return __version__


def _parse(parser: argparse.ArgumentParser, argv: Optional[List[str]]) -> argparse.Namespace:
    """``parse_args``, except that NAME=VALUE words may follow an option (trace "a" --eps 0 a=1).

    argparse fills the NAME=VALUE list only up to the first option and reports the
    rest as unrecognized; ``parse_intermixed_args`` cannot help, as it refuses
    sub-commands.  So the leftover words that are not options join the list.
    """
    args, extras = parser.parse_known_args(argv)
    if extras and isinstance(getattr(args, "bindings", None), list):
        args.bindings += [word for word in extras if not word.startswith("-")]
        extras = [word for word in extras if word.startswith("-")]
    if extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the console script; returns the process exit status."""
    parser = build_parser()
    args = _parse(parser, argv)
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

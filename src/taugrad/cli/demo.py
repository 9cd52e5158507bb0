"""`taugrad demo` (being built)."""
from __future__ import annotations

from taugrad.cli.common import CommandError


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="(not built yet)")
    parser.set_defaults(run=run)


def run(args) -> int:
    raise CommandError("'taugrad demo' is not built yet")

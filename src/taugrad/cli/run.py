"""`taugrad run script.py [args...]`: run an unmodified PyTorch script on taugrad.

While the script runs, ``import torch`` and every ``import torch.X`` resolve
to taugrad's modules (:mod:`taugrad.run`).  The exit status is the script's.
"""
from __future__ import annotations

import argparse

from taugrad.cli.common import CommandError
from taugrad.run import run_script


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a PyTorch script with `import torch` resolving to taugrad",
        description="Run an unmodified PyTorch script on taugrad: while it runs, `import torch` and "
                    "`import torch.X` give taugrad's modules. A module taugrad lacks fails with one line.",
    )
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    parser.set_defaults(run=run)


def run(args) -> int:
    try:
        run_script(args.script, args.script_args)
    except SystemExit as exit_:
        code = exit_.code
        if code is None or isinstance(code, int):
            return code or 0
        raise CommandError(str(code)) from None
    except (FileNotFoundError, ModuleNotFoundError) as err:
        if str(err).startswith("taugrad run: "):
            raise CommandError(str(err)[len("taugrad run: "):]) from None
        raise
    return 0

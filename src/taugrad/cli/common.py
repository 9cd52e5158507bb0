"""Helpers shared by the sub-commands."""
from __future__ import annotations


class CommandError(Exception):
    """A user mistake on the command line: printed as one line, exit status 2."""

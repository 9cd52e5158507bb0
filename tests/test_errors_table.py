"""docs/errors.md is executable: one test per row, so the table and the behaviour cannot drift.

Each row of the table gives an input (Python run with ``taugrad``, ``np``,
``Value``, ``tensor``, ``nn``, ``optim``, ``F`` = ``taugrad.functional`` and
``tmp``, a fresh directory, in scope; or a ``taugrad ...`` command line), the
exception type (``exit 2`` for the CLI) and the exact message (``{tmp}``
stands for the directory).  Every row must:

* raise exactly that type with exactly that message (for the CLI: exit status
  2 and that one line on stderr);
* raise it from taugrad: no NumPy exception class and no innermost frame
  inside NumPy, and a one-line message;
* leave files intact: every ``good*.npz`` in ``tmp`` still loads and no
  temporary file is left behind.
"""
import contextlib
import io
import os
import re
import shlex
import traceback
from pathlib import Path

import numpy as np
import pytest

import taugrad

DOC = Path(__file__).resolve().parent.parent / "docs" / "errors.md"
NUMPY_DIR = os.path.dirname(np.__file__)
AREAS = {"Value", "Tensor", "ops", "nn", "optim", "checkpoints", "CLI", "hooks", "anomaly"}
COLUMNS = ["#", "Area", "Input", "Error", "Message"]


def _code_span(cell: str) -> str:
    cell = cell.strip()
    match = re.fullmatch(r"(`+)\s?(.*?)\s?\1", cell)
    assert match, f"cell {cell!r} is not a code span"
    return match.group(2).replace("\\|", "|")


def parse_rows(text: str):
    """``(number, area, input, error, message)`` for every row of the table."""
    rows = []
    for line in text.splitlines():
        if not re.match(r"\|\s*\d+\s*\|", line):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        assert len(cells) == len(COLUMNS), f"row needs {len(COLUMNS)} cells: {line}"
        number, area, code, error, message = cells
        rows.append((int(number), area, _code_span(code), _code_span(error), _code_span(message)))
    return rows


def _namespace(tmp: str) -> dict:
    from taugrad import functional, nn, optim

    return {"taugrad": taugrad, "np": np, "Value": taugrad.Value, "tensor": taugrad.tensor, "nn": nn,
            "optim": optim, "F": functional, "tmp": tmp}


def _run_cli(command: str):
    from taugrad.cli import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            status = main(shlex.split(command)[1:])
        except SystemExit as exit_:  # argparse's own errors
            status = exit_.code
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    return f"exit {status}", (lines[-1] if lines else "")


def _check_clean(err: BaseException) -> None:
    assert not type(err).__module__.startswith("numpy"), f"NumPy's exception leaked: {type(err).__name__}"
    frames = traceback.extract_tb(err.__traceback__)
    assert not frames[-1].filename.startswith(NUMPY_DIR), f"raised inside NumPy: {frames[-1].filename}"
    assert "\n" not in str(err), "the message must be one line"


def run_row(number: int, code: str, tmp: str):
    """Run one row's input; return ``(error type name or 'exit N', message)``."""
    code = code.replace("{tmp}", tmp)
    if code.startswith("taugrad "):
        status, line = _run_cli(code)
        return status, line.replace(tmp, "{tmp}")
    compiled = compile(code, f"<errors.md row {number}>", "exec")
    try:
        exec(compiled, _namespace(tmp))
    except Exception as err:  # noqa: BLE001 - what the row documents
        _check_clean(err)
        return type(err).__name__, str(err).replace(tmp, "{tmp}")
    return "no error", ""


ROWS = parse_rows(DOC.read_text(encoding="utf-8")) if DOC.exists() else []


def test_the_table_is_big_and_covers_every_area():
    assert len(ROWS) >= 30
    assert [row[0] for row in ROWS] == list(range(1, len(ROWS) + 1)), "rows are numbered 1, 2, 3..."
    areas = {row[1] for row in ROWS}
    assert areas <= AREAS, f"unknown areas {areas - AREAS}"
    assert {"Value", "Tensor", "ops", "nn", "optim", "checkpoints", "CLI"} <= areas


@pytest.mark.parametrize("number, area, code, error, message", ROWS, ids=[f"{r[0]}-{r[1]}" for r in ROWS])
def test_row(number, area, code, error, message, tmp_path):
    got = run_row(number, code, str(tmp_path))
    assert got == (error, message)
    for good in tmp_path.glob("good*.npz"):
        taugrad.load(good)  # a failed save never damages the file it would have replaced
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []

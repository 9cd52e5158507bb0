"""`taugrad demo` end to end: trains the moons MLP to 100%, checks gradients, writes plots."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from taugrad.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_demo_trains_to_full_accuracy_and_writes_plots(tmp_path, capsys):
    assert main(["demo", "--plots", str(tmp_path / "plots"), "--checks", "10"]) == 0
    out = capsys.readouterr().out
    assert "final training accuracy: 100.0%" in out
    assert "10 random expressions with reused subexpressions: 10 agree with finite differences" in out
    for name in ("moons_training.png", "moons_boundary.png"):
        assert (tmp_path / "plots" / name).read_bytes()[:8] == PNG_MAGIC


def test_demo_bad_arguments_are_one_line_errors(tmp_path, capsys):
    assert main(["demo", "--steps", "0", "--no-plots"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "taugrad demo: error: --steps must be at least 1, got 0"
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["demo", "--steps", "1", "--checks", "0", "--plots", str(blocker)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("taugrad demo: error: cannot write plots to")


def test_demo_runs_as_a_program(tmp_path):
    env = dict(os.environ, PYTHONPATH=SRC)
    done = subprocess.run(
        [sys.executable, "-m", "taugrad.cli", "demo", "--steps", "5", "--checks", "2", "--no-plots"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "step   4" in done.stdout and done.stderr == ""

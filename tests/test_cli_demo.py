"""`taugrad demo` end to end: trains the moons MLP to 100%, checks gradients, writes plots."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from taugrad.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_demo_trains_to_full_accuracy_and_writes_plots(tmp_path, capsys):
    assert main(["demo", "--plots", str(tmp_path / "plots"), "--checks", "10"]) == 0
    out = capsys.readouterr().out
    assert "final training accuracy: 100.0%" in out
    # the header states the learning rates actually used: the last of 100 steps runs at 0.109, not 0.1
    assert "SGD lr 1.000 -> 0.109 over 100 steps" in out and "lr 0.109" in out
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
    assert len(err) == 1 and err[0].startswith("taugrad demo: error: cannot create --plots directory")


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--seed", "-1"], "--seed must be between 0 and 4294967295 (2**32 - 1), got -1"),
        (["--seed", "99999999999999999999"],
         "--seed must be between 0 and 4294967295 (2**32 - 1), got 99999999999999999999"),
        (["--checks", "100001"], "--checks must be between 0 and 100,000, got 100001"),
        (["--checks", "-1"], "--checks must be between 0 and 100,000, got -1"),
    ],
)
def test_demo_out_of_range_options_fail_before_training(arguments, message, capsys):
    assert main(["demo", "--steps", "1", "--no-plots", *arguments]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"taugrad demo: error: {message}\n"
    assert captured.out == ""  # nothing trained


def test_demo_bad_plots_folder_fails_before_training(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["demo", "--steps", "1", "--checks", "0", "--plots", str(blocker / "plots")]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("taugrad demo: error: cannot create --plots directory")
    assert captured.out == ""


def test_demo_one_step_header_is_exact(capsys):
    assert main(["demo", "--steps", "1", "--checks", "1", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "SGD lr 1.000 for 1 step\n" in out and "(1 step in " in out and "1 steps" not in out
    assert "gradient check: 1 random expression with" in out


def test_demo_runs_as_a_program(tmp_path):
    env = dict(os.environ, PYTHONPATH=SRC)
    done = subprocess.run(
        [sys.executable, "-m", "taugrad.cli", "demo", "--steps", "5", "--checks", "2", "--no-plots"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "step   4" in done.stdout and done.stderr == ""

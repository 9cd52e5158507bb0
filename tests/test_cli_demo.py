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


GALLERY = Path(__file__).parent / "check_gallery"


def test_demo_with_a_correct_engine_matches_taugrad_at_every_step(tmp_path, capsys):
    plots = tmp_path / "plots"
    assert main(["demo", "--engine", str(GALLERY / "chapter_correct.py"), "--steps", "3", "--plots", str(plots)]) == 0
    out = capsys.readouterr().out
    assert "(micrograd's granular graph)" in out and "same initial weights" in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 3 and all(row[1] == row[3] and row[2] == row[4] for row in rows)
    assert "your engine matches taugrad's at every step" in out
    for name in ("moons_training.png", "moons_boundary.png"):
        assert (plots / name).read_bytes()[:8] == PNG_MAGIC


def test_demo_with_a_broken_engine_names_the_step_and_the_rule(capsys):
    assert main(["demo", "--engine", str(GALLERY / "mul_swapped.py"), "--steps", "2", "--no-plots"]) == 1
    out = capsys.readouterr().out
    assert "<- first difference" in out and "first difference at step 0: same loss, but the gradients differ" in out
    assert "rule mul: mul gives a.grad = a.data * g; expected b.data * g" in out


def test_demo_with_an_engine_that_cannot_load_is_exit_2(capsys):
    assert main(["demo", "--engine", str(GALLERY / "raises_at_import.py"), "--steps", "1", "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "importing it raised NameError" in err
    assert main(["demo", "--engine", "no_such_engine.py", "--steps", "1", "--no-plots"]) == 2
    assert "no_such_engine.py: no such file" in capsys.readouterr().err


def test_the_side_by_side_loop_is_micrograds_moons_training():
    """The shared training loop on taugrad's Value gives taugrad.scalar.nn's granular training, number for number."""
    import random

    from taugrad.learn.check.trainer import Trainer
    from taugrad.scalar import Value, nn
    from taugrad.scalar.moons import load_moons, train_step

    X, y = load_moons()
    random.seed(1337)
    model = nn.MLP(2, [16, 16, 1])
    weights = [[[n.b.data, *(w.data for w in n.w)] for n in layer.neurons] for layer in model.layers]
    trainer = Trainer(Value, weights, X, y)
    for step in range(2):
        ours = trainer.step(step, 100)
        loss, accuracy = train_step(model, X, y, step, 100)
        assert (ours["loss"], ours["accuracy"]) == (loss, accuracy)

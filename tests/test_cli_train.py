"""`taugrad train` end to end: both engines, plots, checkpoints, progress, one-line errors."""
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import taugrad
from taugrad import nn
from taugrad.cli import main
from taugrad.learn.progress import TrainingProgress

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _accuracy_line(text, which):
    line = next(line for line in text.splitlines() if line.startswith(f"{which} accuracy:"))
    return float(line.split()[-1].rstrip("%")) / 100


def test_scalar_engine_on_moons_writes_plots_and_a_loadable_checkpoint(tmp_path, capsys):
    plots, checkpoint = tmp_path / "plots", tmp_path / "moons.npz"
    code = main(["train", "moons", "--engine", "scalar", "--samples", "80", "--epochs", "40", "--seed", "1",
                 "--plots", str(plots), "--save", str(checkpoint), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    train_accuracy = _accuracy_line(out, "train")
    assert train_accuracy >= 0.95
    assert 0.0 <= _accuracy_line(out, "test") <= 1.0
    for name in ("moons_training.png", "moons_boundary.png"):
        assert (plots / name).read_bytes()[:8] == PNG_MAGIC

    saved = taugrad.load(checkpoint)
    assert sorted(saved["model"]) == ["0.bias", "0.weight", "2.bias", "2.weight", "4.bias", "4.weight"]
    # the scalar MLP's weights drop into the tensor engine's MLP and classify identically
    model = nn.MLP(2, [16, 16], 2, dtype=np.float64)
    model.load_state_dict(saved["model"])
    X, y = taugrad.data.moons(80, noise=0.1, seed=1)
    X_train, _, y_train, _ = taugrad.data.train_test_split(X, y, seed=1)
    scores = model((X_train - saved["input_mean"]) / saved["input_std"]).detach().numpy()
    assert np.mean(scores.argmax(1) == y_train) == pytest.approx(train_accuracy, abs=0.006)
    assert saved["history"]["train_accuracy"][-1] == pytest.approx(train_accuracy, abs=0.006)
    assert saved["config"]["engine"] == "scalar" and saved["optimizer"]["param_groups"][0]["lr"] == 0.02


def test_tensor_engine_on_spirals_learns(tmp_path, capsys):
    code = main(["train", "spirals", "--epochs", "60", "--samples", "300", "--hidden", "32,32", "--seed", "0",
                 "--plots", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert _accuracy_line(out, "train") >= 0.9
    assert (tmp_path / "spirals_boundary.png").read_bytes()[:8] == PNG_MAGIC


def test_tensor_engine_linear_model_and_sgd_on_blobs(capsys):
    code = main(["train", "blobs", "--model", "linear", "--optimizer", "sgd", "--lr", "0.1", "--epochs", "10",
                 "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "linear 2-3" in out
    assert _accuracy_line(out, "test") >= 0.8


def test_digits_runs_with_the_tensor_engine(tmp_path, capsys):
    pytest.importorskip("sklearn")
    code = main(["train", "digits", "--epochs", "3", "--plots", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "1347 train / 450 test samples, 64 features, 10 classes" in out
    assert _accuracy_line(out, "test") >= 0.85
    assert (tmp_path / "digits_training.png").read_bytes()[:8] == PNG_MAGIC
    assert not (tmp_path / "digits_boundary.png").exists()  # 64-D: no decision boundary


def test_progress_lines_when_not_a_terminal(capsys):
    assert main(["train", "circles", "--epochs", "20", "--samples", "60"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("epoch")]
    assert lines[0].startswith("epoch  1/20") and lines[-1].startswith("epoch 20/20")
    assert all("loss" in line and "acc" in line and "samples/s" in line for line in lines)


def test_rich_progress_bar_renders():
    pytest.importorskip("rich")
    stream = io.StringIO()
    with TrainingProgress(3, stream=stream, use_rich=True) as progress:
        for epoch in (1, 2, 3):
            progress.update(epoch, 0.5 / epoch, 0.9, 1234.0)
    text = stream.getvalue()
    assert "3/3" in text and "loss 0.1667" in text and "acc 90.00%" in text and "1,234 samples/s" in text


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["mnist"], "unknown dataset 'mnist'; choose one of moons, circles, spirals, blobs, digits"),
        (["moons", "--lr", "-0.1"], "--lr must be positive, got -0.1"),
        (["moons", "--lr", "fast"], "--lr must be a number, got 'fast'"),
        (["moons", "--lr", "nan"], "--lr must be a finite number"),
        (["moons", "--epochs", "0"], "--epochs must be at least 1"),
        (["moons", "--batch-size", "2.5"], "--batch-size must be an integer"),
        (["moons", "--hidden", "16,x"], "--hidden must be comma-separated"),
        (["moons", "--optimizer", "rmsprop"], "unknown --optimizer 'rmsprop'"),
        (["moons", "--engine", "gpu"], "unknown --engine 'gpu'"),
        (["digits", "--engine", "scalar"], "the scalar engine is for the small 2-D datasets"),
        (["moons", "--test-size", "1"], "--test-size must be between 0 and 1"),
        (["moons", "--save", "{tmp}/no/such/dir/model.npz"], "directory"),
        (["moons", "--save", "{tmp}"], "is a directory"),
        (["moons", "--plots", "{tmp}/a_file/plots"], "cannot create --plots directory"),
        (["moons", "--hidden", "99999999999"], "--hidden sizes must be at most 100,000, got '99999999999'"),
        (["moons", "--hidden", "100000,100000"],
         "--hidden 100000,100000 makes 10,000,600,002 parameters; the tensor engine's limit is 100,000,000"),
        (["moons", "--engine", "scalar", "--hidden", "1000,1000"], "the scalar engine's limit is 100,000"),
        (["moons", "--hidden", ""], "--hidden is empty; give layer sizes such as 32,32"),
        (["moons", "--hidden", " "], "--hidden is empty"),
        (["moons", "--samples", "999999999999"], "--samples must be at most 10,000,000, got 999999999999"),
        (["moons", "--seed", "-1"], "--seed must be between 0 and 4294967295 (2**32 - 1), got -1"),
        (["moons", "--seed", "4294967296"], "--seed must be between 0 and 4294967295"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(arguments, message, tmp_path, capsys):
    (tmp_path / "a_file").write_text("not a directory")
    arguments = [a.replace("{tmp}", str(tmp_path)) for a in arguments]
    assert main(["train", *arguments, "--epochs" if "--epochs" not in arguments else "--seed", "1"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("taugrad train: error: ")
    assert message in err
    assert "train accuracy" not in captured.out  # failed before training


def test_unwritable_save_path_fails_before_training(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as a read-only directory would
    assert main(["train", "moons", "--save", str(tmp_path / "m.npz")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"taugrad train: error: cannot write --save {str(tmp_path / 'm.npz')!r}: permission denied"


def test_out_of_memory_is_one_line_naming_the_sizes(capsys, monkeypatch):
    from taugrad.cli import train_engines

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(train_engines, "make_trainer", no_memory)
    assert main(["train", "moons", "--hidden", "64,64", "--samples", "5000", "--no-progress"]) == 2
    assert capsys.readouterr().err == ("taugrad train: error: out of memory for --hidden 64,64, --samples 5,000, "
                                       "--batch-size 32; try smaller sizes\n")


def test_hidden_none_still_means_no_hidden_layer(capsys):
    assert main(["train", "moons", "--hidden", "none", "--epochs", "1", "--no-progress"]) == 0
    assert "model: MLP 2-2," in capsys.readouterr().out


def _run_cli(*arguments):
    env = dict(os.environ, PYTHONPATH=SRC)
    return subprocess.run([sys.executable, "-m", "taugrad.cli", "train", *arguments], capture_output=True,
                          text=True, env=env, timeout=120)


def test_subprocess_run(tmp_path):
    result = _run_cli("circles", "--epochs", "15", "--samples", "80", "--save", str(tmp_path / "c.npz"))
    assert result.returncode == 0, result.stderr
    assert "train accuracy:" in result.stdout and "test accuracy:" in result.stdout
    assert "epoch 15/15" in result.stdout  # plain progress lines: stdout is a pipe
    assert taugrad.load(tmp_path / "c.npz")["config"]["dataset"] == "circles"


def test_subprocess_error_has_no_traceback():
    result = _run_cli("moons", "--lr", "-1")
    assert result.returncode == 2
    assert result.stderr.strip() == "taugrad train: error: --lr must be positive, got -1"
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize("engine", ["tensor", "scalar"])
def test_divergence_is_one_line_without_numpy_warnings(engine):
    result = _run_cli("moons", "--engine", engine, "--lr", "1e308", "--epochs", "3", "--no-progress")
    assert result.returncode == 2
    assert result.stderr == "taugrad train: error: training diverged at epoch 1 (loss nan); try a smaller --lr\n"

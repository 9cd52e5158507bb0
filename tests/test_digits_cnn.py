"""The digits CNN trains: a few steps lower the loss (no timing here), and the CLI path runs."""
from __future__ import annotations

import numpy as np

import taugrad
import taugrad.nn.functional as F
from taugrad import optim
from taugrad.cli import main
from taugrad.cli.train_engines import digits_cnn


def test_a_few_steps_of_the_digits_cnn_lower_the_loss():
    X, y = taugrad.data.digits()
    images = (X[:128] / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    taugrad.manual_seed(0)
    model = digits_cnn()
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(15):
        loss = F.cross_entropy(model(images), y[:128])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.6 * losses[0], losses


def test_cli_trains_the_cnn_on_digits(capsys):
    code = main(["train", "digits", "--model", "cnn", "--epochs", "2", "--no-progress", "--lr", "0.01"])
    out = capsys.readouterr().out
    assert code == 0 and "CNN" in out
    test_line = next(line for line in out.splitlines() if line.startswith("test accuracy:"))
    assert float(test_line.split()[-1].rstrip("%")) > 50.0


def test_cli_cnn_plots_include_the_filters_and_the_mistakes(tmp_path, capsys):
    import matplotlib  # noqa: F401  (optional dependency: the plots need it)

    code = main(["train", "digits", "--model", "cnn", "--epochs", "1", "--no-progress", "--plots", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    for name in ("digits_training.png", "digits_cnn_filters.png", "digits_cnn_mistakes.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert name in out

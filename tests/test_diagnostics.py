"""Gradient-flow diagnostics: gradient norms and dead ReLUs, the table, the plot and `taugrad train --diagnose`."""
import io
import math

import numpy as np
import pytest

import taugrad
from taugrad import nn
from taugrad.cli import main
from taugrad.debug.diagnostics import GradientFlowMonitor, format_table, plot_gradient_flow, print_table


def _model_with_known_weights():
    """Linear(2, 3) -> ReLU -> Linear(3, 1); hidden unit 2 can never fire (weights and bias negative)."""
    model = nn.Sequential(nn.Linear(2, 3, dtype="float64"), nn.ReLU(), nn.Linear(3, 1, dtype="float64"))
    first, _, last = model.children()
    first.weight.detach().numpy()[...] = [[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]
    first.bias.detach().numpy()[...] = [0.0, 0.0, -5.0]
    last.weight.detach().numpy()[...] = [[1.0, 2.0, 3.0]]
    last.bias.detach().numpy()[...] = [0.5]
    return model


def test_dead_units_and_gradient_norms_match_hand_computation():
    model = _model_with_known_weights()
    monitor = GradientFlowMonitor(model)
    x = np.array([[1.0, 2.0], [3.0, -1.0]])  # unit 0 fires for both, unit 1 for the first, unit 2 never
    loss = model(taugrad.tensor(x)).sum()
    loss.backward()
    norms = monitor.record_gradients()
    monitor.end_epoch()

    # by hand: h = relu(x W1^T + b1); out = h W2^T + b2; d loss / d out = 1 per sample
    h = np.maximum(x @ np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]).T + [0.0, 0.0, -5.0], 0)
    grad_w2, grad_b2 = h.sum(axis=0), 2.0
    mask = (h > 0).astype(float) * [1.0, 2.0, 3.0]  # d loss / d pre-activation
    grad_w1, grad_b1 = mask.T @ x, mask.sum(axis=0)
    assert norms["2"] == pytest.approx(math.sqrt((grad_w2 ** 2).sum() + grad_b2 ** 2), rel=1e-12)
    assert norms["0"] == pytest.approx(math.sqrt((grad_w1 ** 2).sum() + (grad_b1 ** 2).sum()), rel=1e-12)
    assert monitor.grad_norms == {"0": [norms["0"]], "2": [norms["2"]]}
    assert monitor.dead_fractions == {"1": [pytest.approx(1 / 3)]}
    assert monitor.units == {"1": 3}


def test_epoch_means_and_eval_passes_do_not_count():
    model = _model_with_known_weights()
    monitor = GradientFlowMonitor(model)
    steps = []
    for scale in (1.0, 3.0):
        model(taugrad.tensor(np.array([[scale, 0.0]]))).sum().backward()
        steps.append(monitor.record_gradients()["2"])
        for p in model.parameters():
            p.grad = None
    model.eval()
    model(taugrad.tensor(np.array([[5.0, 5.0]])))  # would make unit 1 alive; eval mode is ignored
    model.train()
    monitor.end_epoch()
    assert monitor.grad_norms["2"] == [pytest.approx(sum(steps) / 2)]
    assert monitor.dead_fractions["1"] == [pytest.approx(2 / 3)]  # only unit 0 fired in training


def test_table_flags_dead_relus_and_vanishing_layers():
    model = _model_with_known_weights()
    first = list(model.children())[0]
    first.bias.detach().numpy()[...] = -100.0  # every hidden unit dead: the first layer gets no gradient
    monitor = GradientFlowMonitor(model)
    model(taugrad.tensor(np.ones((4, 2)))).sum().backward()
    monitor.record_gradients()
    monitor.end_epoch()
    rows = {row["layer"]: row for row in monitor.rows()}
    assert [row["layer"] for row in monitor.rows()] == ["0", "1", "2"]  # network order
    assert rows["0"]["note"] == "vanishing" and rows["0"]["last"] == "0"
    assert rows["1"]["note"] == "mostly dead" and rows["1"]["last"] == "100.0% (3/3 units)"
    text = format_table(monitor)
    assert text.splitlines()[0].split() == ["layer", "kind", "measure", "first", "epoch", "last", "epoch", "note"]
    assert "mostly dead" in text and "vanishing" in text
    out = io.StringIO()
    print_table(monitor, file=out)  # plain text when writing to a file
    assert "gradient flow (1 epochs)" in out.getvalue() and "ReLU" in out.getvalue()


def test_close_removes_the_hooks_and_the_monitor_holds_no_model_alive():
    model = _model_with_known_weights()
    monitor = GradientFlowMonitor(model)
    relu = list(model.children())[1]
    assert len(relu._forward_hooks) == 1
    monitor.close()
    assert len(relu._forward_hooks) == 0
    monitor2 = GradientFlowMonitor(model)
    del monitor2  # the hook holds only a weak reference: it becomes a no-op
    model(taugrad.tensor(np.ones((1, 2))))


def test_plot_is_a_png(tmp_path):
    model = _model_with_known_weights()
    monitor = GradientFlowMonitor(model)
    for _ in range(3):
        model(taugrad.tensor(np.ones((2, 2)))).sum().backward()
        monitor.record_gradients()
        monitor.end_epoch()
    path = plot_gradient_flow(monitor, tmp_path / "flow.png", title="t")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_cli_train_diagnose_prints_table_and_writes_plot(tmp_path, capsys):
    status = main(["train", "moons", "--epochs", "3", "--hidden", "8,8", "--no-progress", "--diagnose",
                   "--plots", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0
    assert "gradient flow of MLP 2-8-8-2 (3 epochs)" in out
    assert out.count("Linear") == 3 and out.count("dead units") == 2  # 3 layers, 2 ReLUs
    png = tmp_path / "moons_gradients.png"
    assert f"diagnostics plot: {png}" in out
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_cli_diagnose_refuses_the_scalar_engine(capsys):
    assert main(["train", "moons", "--engine", "scalar", "--diagnose"]) == 2
    assert "--diagnose needs --engine tensor" in capsys.readouterr().err

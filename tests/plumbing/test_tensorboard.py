"""SummaryWriter writes event files that TensorBoard's own reader reads back, as torch's writer's are."""
import subprocess
import sys

import numpy as np
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch.utils.tensorboard import SummaryWriter as TorchWriter

import taugrad
from taugrad.utils.tensorboard import SummaryWriter


def _log(writer_cls, lib, folder):
    values = np.linspace(-2.0, 3.0, 101)
    with writer_cls(str(folder)) as writer:
        for step in range(4):
            writer.add_scalar("loss/train", lib.tensor(1.0 / (step + 1)), step)
            writer.add_scalar("lr", 0.1 * step, global_step=step)
        writer.add_histogram("weights", lib.tensor(values), 0)
        writer.add_text("notes", "hello **world**", 0)
    reader = EventAccumulator(str(folder))
    reader.Reload()
    return reader


def test_scalars_histograms_and_text_read_back_as_torchs(tmp_path):
    ours = _log(SummaryWriter, taugrad, tmp_path / "ours")
    theirs = _log(TorchWriter, torch, tmp_path / "theirs")
    for key in ("scalars", "histograms", "tensors"):
        assert sorted(ours.Tags()[key]) == sorted(theirs.Tags()[key]), key
    for tag in ("loss/train", "lr"):
        assert [(e.step, e.value) for e in ours.Scalars(tag)] == [(e.step, e.value) for e in theirs.Scalars(tag)]
    h_ours, h_theirs = ours.Histograms("weights")[0].histogram_value, theirs.Histograms("weights")[0].histogram_value
    for field in ("min", "max", "num", "sum", "sum_squares"):
        assert getattr(h_ours, field) == getattr(h_theirs, field), field
    assert sum(h_ours.bucket) == 101
    text = ours.Tensors("notes/text_summary")[0].tensor_proto.string_val[0]
    assert text == theirs.Tensors("notes/text_summary")[0].tensor_proto.string_val[0] == b"hello **world**"


def test_add_scalars_writes_one_run_per_curve(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_scalars("loss", {"train": 1.5, "val": 2.5}, 7)
    reader = EventAccumulator(str(tmp_path / "loss_val"))
    reader.Reload()
    assert [(e.step, e.value) for e in reader.Scalars("loss")] == [(7, 2.5)]


def test_add_graph_names_the_users_ops_and_parameters(tmp_path):
    model = taugrad.nn.Sequential(taugrad.nn.Linear(3, 4), taugrad.nn.Tanh(), taugrad.nn.Linear(4, 1))
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_graph(model, taugrad.randn(2, 3))
    reader = EventAccumulator(str(tmp_path))
    reader.Reload()
    nodes = {n.name: (n.op, list(n.input)) for n in reader.Graph().node}
    assert {"0.weight", "0.bias", "2.weight", "2.bias"} <= set(nodes)
    tanh = [name for name, (op, _) in nodes.items() if op == "TanhBackward0"]
    assert len(tanh) == 1 and nodes[tanh[0]][1] and all(i in nodes for i in nodes[tanh[0]][1])


def test_without_tensorboard_the_import_fails_with_torchs_message():
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "try:\n    import taugrad.utils.tensorboard\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "TensorBoard logging requires TensorBoard version 1.15 or above"
    plain = subprocess.run([sys.executable, "-c", "import sys, taugrad; print('tensorboard' in sys.modules)"],
                           capture_output=True, text=True, timeout=120)
    assert plain.stdout.strip() == "False"

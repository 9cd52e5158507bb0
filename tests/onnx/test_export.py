"""taugrad.onnx.export: each exported model runs in onnxruntime and gives taugrad's forward, at two batch sizes."""
from __future__ import annotations

import io
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import taugrad as tg  # noqa: E402
import taugrad.nn as nn  # noqa: E402
import taugrad.nn.functional as F  # noqa: E402
import taugrad.onnx  # noqa: E402


def run_onnx(data: bytes, feeds: dict):
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def flat(out):
    if isinstance(out, (tuple, list)):
        return [y for item in out for y in flat(item)]
    return [out]


def check(model, make_inputs, batch_axes, sizes=(3, 5), rtol=1e-4, atol=1e-5):
    """Export at the first batch size with that axis dynamic; compare with the model at every size."""
    model.eval()
    inputs = make_inputs(sizes[0])
    names = [f"in{i}" for i in range(len(flat(inputs)))]
    dynamic = {n: {a: "batch"} for n, a in zip(names, batch_axes)}
    buf = io.BytesIO()
    taugrad.onnx.export(model, tuple(inputs), buf, input_names=names, dynamic_axes=dynamic)
    for n in sizes:
        inputs = make_inputs(n)
        want = [y.detach().numpy() for y in flat(model(*inputs))]
        got = run_onnx(buf.getvalue(), {name: x.numpy() for name, x in zip(names, flat(inputs))})
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def images(c, h, w=None):
    return lambda n: [tg.randn(n, c, h, w if w is not None else h)]


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.gn = nn.GroupNorm(2, 8)
        self.up = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
        self.fc = nn.Linear(4 * 4, 5)

    def forward(self, x):
        x = F.relu(self.bn(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = self.gn(self.conv2(x))
        x = F.silu(x)
        x = self.up(x)
        x = F.avg_pool2d(x, 2)
        x = F.adaptive_avg_pool2d(x, (2, 2))
        return F.log_softmax(self.fc(x.flatten(1)), dim=1)


def test_conv_net():
    tg.manual_seed(0)
    model = ConvNet()
    model.bn.running_mean.data = tg.randn(8) * 0.1
    model.bn.running_var.data = tg.rand(8) + 0.5
    check(model, images(3, 12), [0])


def test_conv1d_and_pooling():
    tg.manual_seed(1)
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 4, 3, padding=1)
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(8, 3), nn.Sigmoid())

        def forward(self, x):
            x = F.max_pool1d(tg.tanh(self.conv(x)), 2)
            return self.head(F.avg_pool1d(x, 2, stride=2, padding=1)[..., :2])

    check(Net(), lambda n: [tg.randn(n, 2, 16)], [0])


def test_activations_and_arithmetic():
    class Acts(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 6)
            self.norm = nn.LayerNorm(6)

        def forward(self, x):
            y = self.norm(self.lin(x))
            parts = [F.gelu(y), F.gelu(y, approximate="tanh"), F.leaky_relu(y, 0.1), F.elu(y), F.silu(y),
                     F.softmax(y, dim=-1), tg.tanh(y) * 2 - 1, (y + 3) / 4, y.exp().sqrt(), 1 - y, y ** 2,
                     tg.clamp(y, -0.5, 0.5), tg.where(y > 0, y, y * 0.5)]
            z = tg.cat(parts, dim=1)
            z = z.reshape(z.shape[0], -1, 6).transpose(1, 2).permute(0, 2, 1)
            return z[:, 1:5:2, ::2], z.sum(dim=1), z.mean(-1, keepdim=True), z[:, 0], z[..., None, -1]

    tg.manual_seed(2)
    check(Acts(), lambda n: [tg.randn(n, 6)], [0])


def test_embedding_dropout_and_chunks():
    class Emb(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.drop = nn.Dropout(0.3)

        def forward(self, tokens):
            e = self.drop(self.emb(tokens))
            a, b = e.chunk(2, dim=-1)
            return tg.stack([a, b], dim=0).unsqueeze(0).squeeze(0) * math.sqrt(4)

    tg.manual_seed(3)
    check(Emb(), lambda n: [tg.randint(0, 10, (n, 7))], [0])


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_recurrent_layers(kind, bidirectional):
    tg.manual_seed(4)
    layer = getattr(nn, kind)(3, 5, num_layers=2, bidirectional=bidirectional)
    dirs = 2 if bidirectional else 1

    def inputs(n):
        states = [tg.randn(2 * dirs, n, 5) for _ in range(2 if kind == "LSTM" else 1)]
        return [tg.randn(4, n, 3), tuple(states) if kind == "LSTM" else states[0]]

    check(layer, inputs, [1, 1, 1])


def test_lstm_batch_first_without_state():
    tg.manual_seed(5)
    check(nn.LSTM(3, 4, batch_first=True), lambda n: [tg.randn(n, 6, 3)], [0])


def test_transformer_encoder_and_attention():
    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1)
            self.encoder = nn.TransformerEncoder(layer, 2)
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[0])
            y = self.encoder(x, mask=mask)
            out, _ = self.attn(y.transpose(0, 1), y.transpose(0, 1), y.transpose(0, 1), need_weights=False)
            return out

    tg.manual_seed(6)
    check(Encoder(), lambda n: [tg.randn(5, n, 8)], [1])


def test_transformer_decoder_norm_first_batch_first():
    tg.manual_seed(7)
    model = nn.Transformer(8, 2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
                           batch_first=True, norm_first=True, activation="gelu")
    check(model, lambda n: [tg.randn(n, 5, 8), tg.randn(n, 4, 8)], [0, 0])


def test_an_op_without_onnx_form_is_one_line_naming_it_and_its_module():
    class Inner(nn.Module):
        def forward(self, x):
            return x.cumprod(dim=1)

    model = nn.Sequential(nn.Linear(3, 3), nn.Sequential(Inner()))
    with pytest.raises(taugrad.onnx.ExportError) as info:
        taugrad.onnx.export(model, (tg.randn(2, 3),), io.BytesIO())
    assert str(info.value) == "onnx.export: no ONNX form for op 'cumprod' (used in module '1.0')"


def test_export_restores_taugrad_and_the_training_mode():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    model.train()
    before = tg.Tensor.__dict__["exp"], tg.exp, F.embedding
    taugrad.onnx.export(model, tg.randn(2, 3), io.BytesIO())
    assert model.training
    assert (tg.Tensor.__dict__["exp"], tg.exp, F.embedding) == before


def test_file_path_and_returned_model(tmp_path):
    import onnx

    path = tmp_path / "m.onnx"
    proto = taugrad.onnx.export(nn.Linear(2, 2), (tg.randn(1, 2),), str(path), input_names=["x"],
                                output_names=["y"])
    loaded = onnx.load(str(path))
    assert [i.name for i in loaded.graph.input] == ["x"] and [o.name for o in loaded.graph.output] == ["y"]
    assert loaded == proto


def test_import_taugrad_does_not_import_onnx_and_torch_onnx_is_taugrad_onnx(tmp_path):
    script = tmp_path / "uses_torch_onnx.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        import torch.onnx
        import taugrad.onnx
        assert torch.onnx is taugrad.onnx, torch.onnx
        print("ok", callable(torch.onnx.export))
    """))
    result = subprocess.run([sys.executable, "-m", "taugrad.run", str(script)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok True"
    result = subprocess.run([sys.executable, "-c", "import sys, taugrad; print('onnx' in sys.modules)"],
                            capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "False"


def test_without_onnx_installed_the_import_says_which_extra(tmp_path):
    blocker = tmp_path / "onnx.py"
    blocker.write_text("raise ImportError('No module named onnx')\n")
    result = subprocess.run([sys.executable, "-c", "import taugrad.onnx"], capture_output=True, text=True,
                            timeout=120, env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == \
        "ImportError: taugrad.onnx needs the onnx package: pip install 'taugrad[onnx]'"


def test_a_value_computed_outside_the_trace_is_refused_not_stored_as_a_constant():
    class Outside(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return tg.tensor(x.detach().numpy() * 2)  # computed in NumPy: no op the trace sees

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Model(nn.Module):
        def forward(self, x):
            return Outside.apply(x) + 1

    x = tg.randn(2, 3)
    with pytest.raises(taugrad.onnx.ExportError, match="^onnx.export: no ONNX form for op 'Outside"):
        taugrad.onnx.export(Model(), (x,), io.BytesIO())
    assert not x.requires_grad


def test_powers_adaptive_pooling_and_reductions():
    class Powers(nn.Module):
        def forward(self, x):
            y = x.abs() + 0.5
            pooled = F.adaptive_avg_pool2d(y, (2, None))
            return y ** 2.5, 2 ** x, y.pow(y), pooled, x.amax(dim=(1, 2)), x.max(dim=-1)[0], x.logsumexp(dim=1)

    tg.manual_seed(8)
    check(Powers(), lambda n: [tg.randn(n, 3, 4, 4)], [0])

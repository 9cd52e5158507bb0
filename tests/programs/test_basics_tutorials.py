"""PyTorch's "Learn the Basics" tutorials with ``import taugrad as torch``.

FashionMNIST is replaced by random 28x28 images in a small ``Dataset`` of the same shape; the model,
loops, loss, optimizer, DataLoader and checkpoint calls are the tutorials' own.  Each program runs
with taugrad and with torch from torch's initial weights; losses are compared batch by batch.
"""
from __future__ import annotations

import os
import pickle
import zipfile

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn as tnn
from taugrad.utils import data as tdata
from torch import nn as pnn
from torch.utils import data as pdata

from ._compare import assert_close_steps, numpy_of, to_taugrad_state

IMAGES = np.random.default_rng(0).random((96, 1, 28, 28), dtype=np.float32)
LABELS = np.random.default_rng(1).integers(0, 10, 96)


def fashion_program(torch, nn, data, initial_state, epochs=2):
    """quickstart / optimization tutorial: Dataset, DataLoader, NeuralNetwork, train and test loops."""

    class FakeFashion(data.Dataset):
        def __init__(self, images, labels):
            self.images, self.labels = images, labels

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, idx):
            return torch.tensor(self.images[idx]), int(self.labels[idx])

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))

        def forward(self, x):
            x = self.flatten(x)
            return self.linear_relu_stack(x)

    training_data = FakeFashion(IMAGES[:64], LABELS[:64])
    test_data = FakeFashion(IMAGES[64:], LABELS[64:])
    train_dataloader = data.DataLoader(training_data, batch_size=16)
    test_dataloader = data.DataLoader(test_data, batch_size=16)
    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    model = NeuralNetwork().to(device)
    model.load_state_dict(initial_state)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    record = []
    for t in range(epochs):
        model.train()
        for batch, (X, y) in enumerate(train_dataloader):
            X, y = X.to(device), y.to(device)
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            record.append(loss.item())
        model.eval()
        size, num_batches = len(test_dataloader.dataset), len(test_dataloader)
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in test_dataloader:
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        record += [test_loss / num_batches, correct / size]
    return record, model, test_data


def initial_torch_state():
    torch.manual_seed(0)
    model = pnn.Sequential(pnn.Linear(28 * 28, 64), pnn.ReLU(), pnn.Linear(64, 64), pnn.ReLU(), pnn.Linear(64, 10))
    return {"linear_relu_stack." + k: v for k, v in model.state_dict().items()}


def test_quickstart_and_optimization_loops_match_torch():
    state = initial_torch_state()
    ours, _, _ = fashion_program(taugrad, tnn, tdata, to_taugrad_state(state))
    theirs, _, _ = fashion_program(torch, pnn, pdata, state)
    assert_close_steps(ours, theirs)


def test_quickstart_save_and_load_state_dict(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, model, test_data = fashion_program(taugrad, tnn, tdata, to_taugrad_state(initial_torch_state()), epochs=1)
    taugrad.save(model.state_dict(), "model.pth")
    _, fresh, _ = fashion_program(taugrad, tnn, tdata, to_taugrad_state(initial_torch_state()), epochs=0)
    fresh.load_state_dict(taugrad.load("model.pth", weights_only=True))
    fresh.eval()
    x, y = test_data[0][0], test_data[0][1]
    with taugrad.no_grad():
        np.testing.assert_array_equal(numpy_of(fresh(x)), numpy_of(model(x)))
        classes = [str(i) for i in range(10)]
        assert classes[fresh(x)[0].argmax(0)] == classes[model(x)[0].argmax(0)]
    again = taugrad.load("model.pth", map_location="cpu")
    assert list(again) == list(model.state_dict())


def test_a_torch_written_state_dict_loads_into_the_same_taugrad_model(tmp_path):
    state = initial_torch_state()
    _, torch_model, test_data = fashion_program(torch, pnn, pdata, state, epochs=1)
    torch.save(torch_model.state_dict(), tmp_path / "model_weights.pth")
    _, model, _ = fashion_program(taugrad, tnn, tdata, to_taugrad_state(state), epochs=0)
    model.load_state_dict(taugrad.load(tmp_path / "model_weights.pth", map_location=taugrad.device("cpu"),
                                       weights_only=True))
    model.eval()
    x = IMAGES[64:70]
    with torch.no_grad():
        expected = torch_model(torch.tensor(x)).numpy()
    with taugrad.no_grad():
        got = numpy_of(model(taugrad.tensor(x)))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_torch_files_of_every_state_dict_shape_read_as_data(tmp_path):
    """Optimizer state, buffers, integer and bool tensors, views into shared storage, nested dicts."""
    bn = torch.nn.BatchNorm1d(3)
    w = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1, momentum=0.9)
    opt.param_groups[0]["params"][0].grad = torch.ones(2)
    opt.step()
    saved = {"bn": bn.state_dict(), "view": w[1:, ::2], "t": w.t(), "mask": torch.tensor([True, False]),
             "ids": torch.tensor([1, 2], dtype=torch.int32), "opt": opt.state_dict(), "step": 3, "lr": 0.5,
             "names": ["a", "b"], "empty": torch.zeros(0, 2)}
    torch.save(saved, tmp_path / "all.pth")
    loaded = taugrad.load(tmp_path / "all.pth")
    for key in ("view", "t", "mask", "ids", "empty"):
        assert loaded[key].dtype.itemsize == saved[key].dtype.itemsize
        np.testing.assert_array_equal(numpy_of(loaded[key]), saved[key].numpy())
    assert loaded["bn"]["num_batches_tracked"].item() == 0 and list(loaded["bn"]) == list(bn.state_dict())
    np.testing.assert_array_equal(numpy_of(loaded["opt"]["state"][0]["momentum_buffer"]), [1.0, 1.0])
    assert loaded["opt"]["param_groups"][0]["momentum"] == 0.9
    assert (loaded["step"], loaded["lr"], loaded["names"]) == (3, 0.5, ["a", "b"])


class _Exploit:
    def __reduce__(self):
        return (os.system, ("echo pwned > pwned.txt",))


def _torch_like_zip(path, payload):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", payload)
        archive.writestr("archive/byteorder", "little")
        archive.writestr("archive/version", "3\n")


@pytest.mark.parametrize("payload", [
    pickle.dumps({"w": _Exploit()}, protocol=2),
    pickle.dumps({"w": _Exploit()}, protocol=4),  # STACK_GLOBAL and FRAME
    b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.",
    b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(cos\nsystem\n)R.",
])
def test_a_malicious_torch_style_file_is_refused_without_running(tmp_path, monkeypatch, payload):
    monkeypatch.chdir(tmp_path)
    _torch_like_zip(tmp_path / "evil.pth", payload)
    with pytest.raises(taugrad.CheckpointError, match="never unpickles") as info:
        taugrad.load(tmp_path / "evil.pth", weights_only=False)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "pwned.txt").exists()


def test_a_tensor_view_past_its_storage_is_refused(tmp_path):
    torch.save({"w": torch.ones(4)}, tmp_path / "ok.pth")
    with zipfile.ZipFile(tmp_path / "ok.pth") as source, zipfile.ZipFile(tmp_path / "bad.pth", "w") as bad:
        for name in source.namelist():
            content = source.read(name)
            bad.writestr(name, content[:-4] if name.endswith("data/0") else content)
    with pytest.raises(taugrad.CheckpointError, match="shorter than its 4 elements"):
        taugrad.load(tmp_path / "bad.pth")


def test_saving_a_whole_module_loads_back_with_weights_only_false_as_the_tutorial_does(tmp_path):
    """saveloadrun_tutorial: ``torch.save(model, 'model.pth')``, then ``torch.load('model.pth', weights_only=False)``
    (the default weights_only=True refuses it, one line, as torch 2.6+ does)."""
    model = tnn.Linear(2, 2)
    taugrad.save(model, tmp_path / "model.pth")
    with pytest.raises(taugrad.CheckpointError, match="weights_only=False") as info:
        taugrad.load(tmp_path / "model.pth")
    assert "\n" not in str(info.value)
    again = taugrad.load(tmp_path / "model.pth", weights_only=False)
    assert type(again) is tnn.Linear and taugrad.equal(again.weight, model.weight)


def test_legacy_torch_pickle_is_refused_with_how_to_convert(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "old.pth", _use_new_zipfile_serialization=False)
    with pytest.raises(taugrad.CheckpointError, match="re-save the state_dict with torch.save's default zip"):
        taugrad.load(tmp_path / "old.pth")


def tensors_program(torch):
    """The tensors tutorial's operations, on deterministic data."""
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    x_np = torch.from_numpy(np.array(data))
    x_ones = torch.ones_like(x_data)
    tensor = torch.ones(4, 4)
    tensor[:, 1] = 0
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.zeros_like(tensor)
    torch.matmul(tensor, tensor.T, out=y3)
    z1 = tensor * tensor
    z2 = tensor.mul(tensor)
    z3 = torch.zeros_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    agg_item = tensor.sum().item()
    tensor.add_(5)
    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    n2 = np.ones(5)
    t2 = torch.from_numpy(n2)
    np.add(n2, 1, out=n2)
    out = [x_data, x_np, x_ones, tensor[0], tensor[:, 0], tensor[..., -1], t1, y1, y2, y3, z1, z2, z3, tensor, t2]
    return [o.numpy().tolist() for o in out] + [agg_item, type(agg_item).__name__, n.tolist(), str(x_np.dtype)[-5:]]


def test_tensors_tutorial_operations_match_torch():
    assert tensors_program(taugrad) == tensors_program(torch)


def test_out_argument_refuses_a_graph_and_a_wrong_shape():
    a = taugrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        taugrad.mul(a, a, out=taugrad.zeros(2))
    with pytest.raises(ValueError, match="does not resize out"):
        taugrad.add(taugrad.ones(2), 1, out=taugrad.zeros(3))


def autograd_program(torch, w0, b0):
    x = torch.ones(5)
    y = torch.zeros(3)
    w = torch.tensor(w0, requires_grad=True)
    b = torch.tensor(b0, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    loss.backward()
    flags = [z.grad_fn is not None, loss.grad_fn is not None]
    with torch.no_grad():
        flags.append(torch.matmul(x, w).requires_grad)
    flags.append((torch.matmul(x, w) + b).detach().requires_grad)
    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    first = inp.grad.clone()
    out.backward(torch.ones_like(out), retain_graph=True)
    second = inp.grad.clone()
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    grads = [g.numpy().ravel() for g in (w.grad, b.grad, first, second, inp.grad)]
    return np.concatenate([[loss.item()], *grads]), flags


def test_autograd_tutorial_matches_torch():
    rng = np.random.default_rng(2)
    w0, b0 = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    (ours, our_flags), (theirs, their_flags) = autograd_program(taugrad, w0, b0), autograd_program(torch, w0, b0)
    assert_close_steps(ours, theirs)
    assert our_flags == their_flags == [True, True, False, False]


def buildmodel_program(torch, nn, state, images):
    model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 20), nn.ReLU(), nn.Linear(20, 10))
    model.load_state_dict(state)
    logits = model(torch.tensor(images))
    pred_probab = nn.Softmax(dim=1)(logits)
    sizes = [tuple(p.size()) for _, p in model.named_parameters()]
    names = [name for name, _ in model.named_parameters()]
    return pred_probab.detach().numpy(), pred_probab.argmax(1).tolist(), sizes, names


def test_buildmodel_tutorial_matches_torch():
    torch.manual_seed(1)
    ref = pnn.Sequential(pnn.Flatten(), pnn.Linear(28 * 28, 20), pnn.ReLU(), pnn.Linear(20, 10))
    images = IMAGES[:3, 0]
    ours = buildmodel_program(taugrad, tnn, to_taugrad_state(ref.state_dict()), images)
    theirs = buildmodel_program(torch, pnn, ref.state_dict(), images)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-7)
    assert ours[1:] == theirs[1:]

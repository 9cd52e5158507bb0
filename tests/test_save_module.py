"""Saving a whole Module as data: ``save(model, f)`` and ``load(f, weights_only=False)`` rebuild it without pickle,
from classes already imported, never calling anything the file names; torch's ``weights_only`` rules hold."""
import io
import json
import os
import pickle
import sys
import zipfile

import numpy as np
import pytest
import torch

import taugrad
from taugrad import serialization
from taugrad.serialization import CheckpointError, WeightsOnlyError
from taugrad.serialization.npz import write_npz

nn = taugrad.nn


class Block(nn.Module):
    """A model with everything a module can hold: nested containers, recurrent and attention layers, tied
    weights, buffers (one not persistent), a frozen parameter and plain attributes."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 4)
        self.mlp = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Sequential(nn.Linear(4, 4), nn.ReLU()))
        self.rnn = nn.LSTM(4, 5, 2)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), 2)
        self.head = nn.Linear(4, 11)
        self.head.weight = self.embed.weight  # tied
        self.again = self.mlp[0]  # one submodule under two names
        self.scale = nn.Parameter(taugrad.ones(4), requires_grad=False)
        self.register_buffer("steps", taugrad.tensor([3], dtype=taugrad.int64))
        self.register_buffer("cache", taugrad.zeros(2), persistent=False)
        self.mask = None
        self.config = {"name": "block", "sizes": (4, 5), "rate": 0.5, "extra": [None, True]}
        self.kind = taugrad.float32

    def forward(self, idx):
        x = self.mlp(self.embed(idx)) * self.scale
        out, _ = self.rnn(x)
        return self.head(self.encoder(x)).sum() + out.sum()


class HoldsLambda(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.act = lambda x: x * 2


class NotAModule:
    pass


def saved(model) -> bytes:
    f = io.BytesIO()
    taugrad.save(model, f)
    return f.getvalue()


def rewritten(data: bytes, change) -> io.BytesIO:
    """The checkpoint ``data`` with its JSON header passed through ``change`` (a tampered file)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        arrays = {name[:-4]: np.load(archive.open(name), allow_pickle=False) for name in archive.namelist()}
    header = json.loads(str(arrays["__taugrad__"][()]))
    change(header)
    arrays["__taugrad__"] = np.array(json.dumps(header))
    out = io.BytesIO()
    write_npz(out, arrays)
    out.seek(0)
    return out


def test_round_trip_rebuilds_the_same_model():
    taugrad.manual_seed(0)
    model = Block()
    model.eval()
    model.mlp.train()  # training flags per submodule come back as they were
    back = taugrad.load(io.BytesIO(saved(model)), weights_only=False)
    assert type(back) is Block and type(back.rnn) is nn.LSTM
    assert [name for name, _ in back.named_modules()] == [name for name, _ in model.named_modules()]
    assert [(n, m.training) for n, m in back.named_modules()] == [(n, m.training) for n, m in model.named_modules()]
    assert back.state_dict().keys() == model.state_dict().keys()
    for key, value in model.state_dict().items():
        got = back.state_dict()[key]
        assert got.dtype == value.dtype
        np.testing.assert_array_equal(got.numpy(), value.numpy(), err_msg=key)
    assert back.head.weight is back.embed.weight and back.again is back.mlp[0]
    assert isinstance(back.scale, nn.Parameter) and not back.scale.requires_grad
    assert isinstance(back.head.weight, nn.Parameter) and back.head.weight.requires_grad
    assert "cache" in dict(back.named_buffers()) and "cache" not in back.state_dict()
    assert back.config == model.config and back.kind is taugrad.float32 and back.mask is None
    assert back.encoder.layers[0].activation is taugrad.nn.functional.relu
    idx = taugrad.tensor([[1, 2, 3], [4, 5, 6]])
    model.eval(), back.eval()
    assert back(idx).item() == model(idx).item()
    back(idx).backward()  # the rebuilt parameters are leaves that train
    assert back.embed.weight.grad is not None


def test_a_tensor_attribute_and_a_module_inside_a_checkpoint_dict():
    model = Block()
    model.mask = taugrad.log(taugrad.tril(taugrad.ones(3, 3)))  # as word_language_model's src_mask
    back = taugrad.load(io.BytesIO(saved({"model": model, "epoch": 3})), weights_only=False)
    assert back["epoch"] == 3
    np.testing.assert_array_equal(back["model"].mask.numpy(), model.mask.numpy())


def test_default_weights_only_refuses_a_whole_module_as_torch_does(tmp_path):
    path = tmp_path / "block.pt"
    taugrad.save(Block(), path)
    with pytest.raises(WeightsOnlyError) as ours:
        taugrad.load(path)
    message = str(ours.value)
    assert "\n" not in message and "weights_only=False" in message and "test_save_module.Block" in message
    assert isinstance(ours.value, pickle.UnpicklingError)  # the class torch raises, so torch's except clauses work
    torch.save(torch.nn.Sequential(torch.nn.Linear(2, 2)), tmp_path / "torch.pt")
    with pytest.raises(pickle.UnpicklingError, match="weights_only"):
        torch.load(tmp_path / "torch.pt")


def test_allowed_classes_load_with_the_default_weights_only(tmp_path):
    path = tmp_path / "tiny.pt"
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    taugrad.save(model, path)
    with pytest.raises(WeightsOnlyError, match="ReLU"):
        with serialization.safe_globals([nn.Sequential, nn.Linear]):
            taugrad.load(path)
    with serialization.safe_globals([nn.Sequential, nn.Linear, nn.modules.activation.ReLU]):
        back = taugrad.load(path)
    assert isinstance(back, nn.Sequential)
    with pytest.raises(WeightsOnlyError):  # the context manager's classes are gone after the block
        taugrad.load(path)
    serialization.add_safe_globals([nn.Sequential, nn.Linear, nn.ReLU])
    try:
        assert serialization.get_safe_globals()[-1] is nn.ReLU
        assert isinstance(taugrad.load(path), nn.Sequential)
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []


def test_torch_module_paths_name_the_same_classes():
    m = nn.modules
    assert m.rnn.LSTM is nn.LSTM and m.linear.Linear is nn.Linear and m.sparse.Embedding is nn.Embedding
    assert m.transformer.TransformerEncoderLayer is nn.TransformerEncoderLayer
    assert m.linear.NonDynamicallyQuantizableLinear is type(nn.MultiheadAttention(4, 2).out_proj)


@pytest.mark.parametrize("module, qualname, expected", [
    ("no_such_module_anywhere", "Block", "is not imported"),
    ("os", "system", "not a taugrad.nn.Module subclass"),
    ("builtins", "dict", "not a taugrad.nn.Module subclass"),
    (__name__, "NotAModule", "not a taugrad.nn.Module subclass"),
    (__name__, "Missing", "does not define"),
])
def test_a_file_naming_another_class_is_refused_in_one_line(module, qualname, expected):
    def change(header):
        header["modules"][0]["class"] = [module, qualname]

    tampered = rewritten(saved(nn.Linear(2, 2)), change)
    taugrad.load(io.BytesIO(saved(nn.Linear(2, 2))), weights_only=False)  # what reading any file imports (zip codecs)
    before = set(sys.modules)
    with pytest.raises(CheckpointError) as err:
        taugrad.load(tampered, weights_only=False)
    assert expected in str(err.value) and "\n" not in str(err.value)
    assert set(sys.modules) == before  # nothing the file names was imported


def test_a_tampered_hook_registry_is_refused():
    def change(header):
        header["modules"][0]["attributes"].append(["_forward_hooks", {"dict": [[0, {"function": "relu"}]]}])
        header["functions"] = ["relu"]

    with pytest.raises(CheckpointError, match="malformed layout .unexpected attribute name '_forward_hooks'"):
        taugrad.load(rewritten(saved(nn.Linear(2, 2)), change), weights_only=False)


def test_a_tampered_function_name_is_refused():
    def change(header):
        header["functions"] = ["system"]

    with pytest.raises(CheckpointError, match="not one of taugrad.nn.functional's"):
        taugrad.load(rewritten(saved(Block()), change), weights_only=False)


def test_no_constructor_runs_on_load():
    class Counting(nn.Linear):
        built = 0

        def __init__(self, *args):
            Counting.built += 1
            super().__init__(*args)

    Counting.__qualname__ = "Counting"  # findable by name as a module-level class would be
    globals()["Counting"] = Counting
    try:
        data = saved(Counting(2, 2))
        back = taugrad.load(io.BytesIO(data), weights_only=False)
    finally:
        del globals()["Counting"]
    assert type(back) is Counting and Counting.built == 1


@pytest.mark.parametrize("attribute, value, words", [
    ("act", lambda x: x, "function <lambda>"),
    ("helper", NotAModule(), "unsupported type NotAModule"),
    ("seen", {1, 2}, "unsupported type set"),
])
def test_saving_something_that_is_not_data_is_refused_naming_it(attribute, value, words):
    model = nn.Sequential(nn.Linear(2, 2))
    setattr(model[0], attribute, value)
    with pytest.raises(TypeError) as err:
        taugrad.save(model, io.BytesIO())
    assert f"Sequential.0.{attribute}" in str(err.value) and words in str(err.value)
    assert "\n" not in str(err.value)


def test_hooks_and_local_classes_are_refused():
    model = nn.Linear(2, 2)
    model.register_forward_hook(lambda *args: None)
    with pytest.raises(TypeError, match="hooks registered"):
        taugrad.save(model, io.BytesIO())

    class Local(nn.Module):
        pass

    with pytest.raises(TypeError, match="cannot be found again by name"):
        taugrad.save(Local(), io.BytesIO())


def test_a_refused_save_leaves_the_existing_file_intact(tmp_path):
    path = tmp_path / "model.pt"
    taugrad.save(Block(), path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match="HoldsLambda.act"):
        taugrad.save(HoldsLambda(), path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["model.pt"]
    assert isinstance(taugrad.load(path, weights_only=False), Block)

"""torch.save / torch.load of any nesting, to a path, an open file or BytesIO, and files torch wrote."""
import io
import math

import numpy as np
import pytest
import torch

import taugrad


def _checkpoint(lib):
    """nanoGPT's checkpoint: model and optimizer state, numbers, strings, None, tuples, a 0-d tensor."""
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 10))
        model.bias.zero_()
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    model(lib.ones(4, 3)).sum().backward()
    opt.step()
    return {"model": model.state_dict(), "optimizer": opt.state_dict(),
            "model_args": {"n_layer": 2, "bias": False, "dropout": 0.0, "vocab_size": None},
            "iter_num": 7, "best_val_loss": lib.tensor(4.25), "config": {"out_dir": "out", "lr": 6e-4,
                                                                          "decay": True, "betas": (0.9, 0.95)},
            "extremes": [math.inf, -0.0, 2 ** 40, -3, "é", ()]}


def _plain(obj):
    """Tensors as NumPy arrays, containers by kind: the comparable content of a loaded object."""
    if hasattr(obj, "detach"):
        return ("tensor", obj.detach().numpy().tolist(), str(obj.dtype).split(".")[-1])
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_plain(v) for v in obj])
    return obj


OBJECTS = {
    "tensor": lambda L: L.arange(6).reshape(2, 3),
    "list": lambda L: [L.ones(2), 3, "x", None, 1.5],
    "tuple of dicts": lambda L: ({"a": L.zeros(1)}, {"b": (1, 2)}),
    "number": lambda L: 3,
    "checkpoint": _checkpoint,
}


@pytest.mark.parametrize("kind", sorted(OBJECTS))
@pytest.mark.parametrize("target", ["path", "open file", "BytesIO"])
def test_round_trip_of_any_nesting(kind, target, tmp_path):
    obj = OBJECTS[kind](taugrad)
    path = tmp_path / "ckpt.pt"
    if target == "path":
        taugrad.save(obj, path)
        loaded = taugrad.load(path)
    elif target == "open file":
        with open(path, "wb") as f:
            taugrad.save(obj, f)
        with open(path, "rb") as f:
            loaded = taugrad.load(f)
    else:
        buffer = io.BytesIO()
        taugrad.save(obj, buffer)
        buffer.seek(0)
        loaded = taugrad.load(buffer)
    assert _plain(loaded) == _plain(obj)


@pytest.mark.parametrize("kind", sorted(OBJECTS))
def test_files_torch_wrote_load_as_torch_loads_them(kind, tmp_path):
    obj = OBJECTS[kind](torch)
    path = tmp_path / "from_torch.pt"
    torch.save(obj, path)
    assert _plain(taugrad.load(path)) == _plain(torch.load(path))
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    assert _plain(taugrad.load(buffer)) == _plain(torch.load(path))


def test_a_checkpoint_saved_by_torch_resumes_training_here(tmp_path):
    path = tmp_path / "ckpt.pt"
    torch.save(_checkpoint(torch), path)
    ck = taugrad.load(path)
    model = taugrad.nn.Linear(3, 2)
    model.load_state_dict(ck["model"])
    opt = taugrad.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    opt.load_state_dict(ck["optimizer"])
    reference = torch.nn.Linear(3, 2)
    ref_ck = torch.load(path)
    reference.load_state_dict(ref_ck["model"])
    ref_opt = torch.optim.AdamW(reference.parameters(), lr=1e-3, betas=(0.9, 0.95))
    ref_opt.load_state_dict(ref_ck["optimizer"])
    for m, o, L in ((model, opt, taugrad), (reference, ref_opt, torch)):
        m(L.ones(4, 3)).sum().backward()
        o.step()
    np.testing.assert_allclose(model.weight.detach().numpy(), reference.weight.detach().numpy(), rtol=1e-6)
    assert ck["iter_num"] == 7 and ck["model_args"]["vocab_size"] is None


def test_garbage_in_a_file_object_is_one_line():
    with pytest.raises(taugrad.CheckpointError, match="cannot load checkpoint from BytesIO"):
        taugrad.load(io.BytesIO(b"not a checkpoint"))


def test_a_whole_optimizer_is_still_refused():
    """A Module is saved as data (tests/test_save_module.py); an optimizer object holds its module's tensors by
    reference, so only its state_dict() is saved."""
    opt = taugrad.optim.SGD(taugrad.nn.Linear(2, 2).parameters(), lr=0.1)
    with pytest.raises(TypeError, match="cannot save a whole SGD"):
        taugrad.save(opt, io.BytesIO())

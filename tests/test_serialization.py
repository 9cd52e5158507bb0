"""taugrad.save / taugrad.load: round trips, atomic writes and hostile files."""
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import taugrad
from taugrad import serialization
from taugrad.serialization import CheckpointError
from taugrad._tensor import Tensor


def _files(directory):
    return sorted(os.listdir(directory))


def test_round_trip_of_arrays_numbers_and_nesting(tmp_path):
    path = tmp_path / "ckpt.npz"
    obj = {
        "weight": np.arange(6, dtype=np.float32).reshape(2, 3),
        "step": 7,
        "lr": 0.125,
        "inf": float("inf"),
        "name": "mlp",
        "flag": True,
        "nothing": None,
        "betas": (0.9, 0.999),
        "groups": [{"params": [0, 1], "lr": 1e-3}],
        "state": {0: {"exp_avg": np.ones(3)}, 1: {"momentum_buffer": None}},
        "file": np.zeros(1),  # names np.savez would choke on
        "allow_pickle": np.zeros(1),
    }
    taugrad.save(obj, path)
    back = taugrad.load(path)
    assert set(back) == set(obj)
    np.testing.assert_array_equal(back["weight"], obj["weight"])
    assert back["weight"].dtype == np.float32
    assert back["step"] == 7 and isinstance(back["step"], int)
    assert back["lr"] == 0.125 and back["inf"] == float("inf")
    assert back["name"] == "mlp" and back["flag"] is True and back["nothing"] is None
    assert back["betas"] == (0.9, 0.999)
    assert back["groups"] == [{"params": [0, 1], "lr": 1e-3}]
    np.testing.assert_array_equal(back["state"][0]["exp_avg"], np.ones(3))
    assert back["state"][1] == {"momentum_buffer": None}


def test_state_dict_keys_are_the_archive_entry_names(tmp_path):
    path = tmp_path / "model.npz"
    taugrad.save({"0.weight": np.ones((2, 2)), "0.bias": np.zeros(2)}, path)
    with np.load(path, allow_pickle=False) as archive:
        assert {"0.weight", "0.bias"} <= set(archive.files)


def test_tensors_come_back_as_tensors(tmp_path):
    path = tmp_path / "t.npz"
    taugrad.save({"w": Tensor(np.ones((2, 2), np.float32), requires_grad=True), "a": np.zeros(2)}, path)
    back = taugrad.load(path)
    assert isinstance(back["w"], Tensor) and back["w"].requires_grad is False
    assert back["w"].data.dtype == np.float32 and isinstance(back["a"], np.ndarray)
    np.testing.assert_array_equal(back["w"].data, np.ones((2, 2)))


def test_plain_numpy_npz_loads_as_tensors(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, w=np.eye(2))
    back = taugrad.load(path)
    assert isinstance(back["w"], Tensor)
    np.testing.assert_array_equal(back["w"].data, np.eye(2))


def test_unsavable_values_are_named(tmp_path):
    path = tmp_path / "x.npz"
    with pytest.raises(TypeError, match="layer.act"):
        taugrad.save({"layer": {"act": object()}}, path)
    with pytest.raises(TypeError, match="dtype object"):
        taugrad.save({"w": np.array([object()])}, path)
    with pytest.raises(TypeError, match="expects a dict"):
        taugrad.save([1, 2], path)
    assert _files(tmp_path) == []


def test_overwrite_replaces_the_file(tmp_path):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"w": np.zeros(2)}, path)
    taugrad.save({"w": np.ones(2)}, path)
    np.testing.assert_array_equal(taugrad.load(path)["w"], np.ones(2))
    assert _files(tmp_path) == ["ckpt.npz"]


# --- atomicity -------------------------------------------------------------


def _boom(*args, **kwargs):
    raise OSError("disk full (simulated)")


@pytest.mark.parametrize("target", ["replace", "write_array", "fsync"])
def test_failed_save_keeps_previous_file_and_leaves_no_temporary(tmp_path, monkeypatch, target):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"w": np.arange(3.0)}, path)
    before = path.read_bytes()
    if target == "replace":
        monkeypatch.setattr(serialization.os, "replace", _boom)
    elif target == "write_array":
        original = np.lib.format.write_array
        calls = []

        def write_then_fail(*args, **kwargs):  # fail midway: after the first array is written
            calls.append(1)
            if len(calls) > 1:
                raise OSError("disk full (simulated)")
            return original(*args, **kwargs)

        monkeypatch.setattr(np.lib.format, "write_array", write_then_fail)
    else:
        monkeypatch.setattr(serialization.os, "fsync", _boom)
    with pytest.raises(OSError, match="simulated"):
        taugrad.save({"w": np.arange(100.0), "v": np.ones(5)}, path)
    assert path.read_bytes() == before
    assert _files(tmp_path) == ["ckpt.npz"]
    monkeypatch.undo()
    np.testing.assert_array_equal(taugrad.load(path)["w"], np.arange(3.0))


def test_interrupt_during_save_cleans_up(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"w": np.zeros(1)}, path)

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(serialization, "_write_npz", interrupt)
    with pytest.raises(KeyboardInterrupt):
        taugrad.save({"w": np.ones(1)}, path)
    assert _files(tmp_path) == ["ckpt.npz"]


def test_save_into_missing_directory_or_onto_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        taugrad.save({"w": np.zeros(1)}, tmp_path / "nope" / "x.npz")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        taugrad.save({"w": np.zeros(1)}, tmp_path)


# --- hostile or broken files -------------------------------------------------


class _Exploit:
    def __reduce__(self):
        return (os.system, ("echo pwned > pwned.txt",))


def test_npz_with_pickled_object_array_is_rejected(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.npz"
    np.savez(path, w=np.array([_Exploit()], dtype=object))
    with pytest.raises(CheckpointError, match="pickled"):
        taugrad.load(path)
    assert not (tmp_path / "pwned.txt").exists()


def test_raw_pickle_file_is_rejected_without_unpickling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps({"w": _Exploit()}))
    with pytest.raises(CheckpointError, match="pickle"):
        taugrad.load(path)
    assert not (tmp_path / "pwned.txt").exists()


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.99])
def test_truncated_file_is_rejected(tmp_path, keep):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"w": np.arange(1000.0), "b": np.ones(10)}, path)
    content = path.read_bytes()
    path.write_bytes(content[: int(len(content) * keep)])
    with pytest.raises(CheckpointError, match="cannot load checkpoint"):
        taugrad.load(path)


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes_are_rejected(tmp_path, seed):
    rng = np.random.default_rng(seed)
    path = tmp_path / "junk.npz"
    prefix = b"PK\x03\x04" if seed % 2 else b""  # also random content behind a zip signature
    path.write_bytes(prefix + rng.integers(0, 256, size=4096, dtype=np.uint8).tobytes())
    with pytest.raises(CheckpointError, match="cannot load checkpoint"):
        taugrad.load(path)


def test_empty_file_and_bare_npy_are_rejected(tmp_path):
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    with pytest.raises(CheckpointError, match="not an .npz"):
        taugrad.load(empty)
    bare = tmp_path / "bare.npy"
    np.save(bare, np.zeros(3))
    with pytest.raises(CheckpointError, match="single .npy"):
        taugrad.load(bare)


def test_corrupt_layout_entry_is_rejected(tmp_path):
    path = tmp_path / "bad.npz"
    buffer = io.BytesIO()
    np.save(buffer, np.array('{"format": "taugrad-checkpoint", "version": 1, "layout": {"call": "os.system"}}'))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("__taugrad__.npy", buffer.getvalue())
    with pytest.raises(CheckpointError, match="malformed layout"):
        taugrad.load(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="no file"):
        taugrad.load(tmp_path / "missing.npz")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        taugrad.load(tmp_path)


def test_error_messages_are_one_line(tmp_path):
    path = tmp_path / "junk.npz"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(CheckpointError) as info:
        taugrad.load(path)
    assert "\n" not in str(info.value)

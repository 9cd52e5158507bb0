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
from taugrad.tensors.core.node import Tensor


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
    assert back["w"].detach().numpy().dtype == np.float32 and isinstance(back["a"], np.ndarray)
    np.testing.assert_array_equal(back["w"].detach().numpy(), np.ones((2, 2)))


def test_plain_numpy_npz_loads_as_tensors(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, w=np.eye(2))
    back = taugrad.load(path)
    assert isinstance(back["w"], Tensor)
    np.testing.assert_array_equal(back["w"].detach().numpy(), np.eye(2))


def test_unsavable_values_are_named(tmp_path):
    path = tmp_path / "x.npz"
    with pytest.raises(TypeError, match="layer.act"):
        taugrad.save({"layer": {"act": object()}}, path)
    with pytest.raises(TypeError, match="dtype object"):
        taugrad.save({"w": np.array([object()])}, path)
    with pytest.raises(TypeError, match="unsupported type object"):
        taugrad.save([1, object()], path)
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

    monkeypatch.setattr(serialization, "write_npz", interrupt)
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


# --- foreign archives, hostile layouts, cycles, scalars, modes, links ---------------


def _write_layout(path, layout_json, **arrays):
    """A hand-made checkpoint: ``layout_json`` (text) as the layout plus ``arrays`` as entries."""
    header = '{"format": "taugrad-checkpoint", "version": 1, "layout": ' + layout_json + "}"
    with zipfile.ZipFile(path, "w") as archive:
        for name, array in {"__taugrad__": np.array(header), **arrays}.items():
            buffer = io.BytesIO()
            np.save(buffer, array)
            archive.writestr(name + ".npy", buffer.getvalue())


def test_torch_checkpoint_of_tensors_is_read_without_unpickling(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "m.pt"
    torch.save({"w": torch.ones(2)}, path)
    loaded = taugrad.load(path)
    assert list(loaded) == ["w"] and loaded["w"].tolist() == [1.0, 1.0]


def test_torch_style_zip_with_pickle_is_rejected_without_unpickling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps({"w": _Exploit()}))
        archive.writestr("archive/version", "3\n")
    with pytest.raises(CheckpointError, match="never unpickles") as info:
        taugrad.load(path)
    assert not (tmp_path / "pwned.txt").exists()
    assert "\n" not in str(info.value)


def test_npz_with_a_member_that_is_not_npy_is_rejected(tmp_path):
    path = tmp_path / "evil.npz"
    with zipfile.ZipFile(path, "w") as archive:
        buffer = io.BytesIO()
        np.save(buffer, np.zeros(2))
        archive.writestr("w.npy", buffer.getvalue())
        archive.writestr("evil.py", "import os; os.system('echo pwned')")
    with pytest.raises(CheckpointError, match="'evil.py' is not a .npy array"):
        taugrad.load(path)


@pytest.mark.parametrize("depth", [serialization.npz.MAX_DEPTH + 1, 600, 5000])
def test_deeply_nested_layout_is_rejected(tmp_path, depth):
    path = tmp_path / "deep.npz"
    _write_layout(path, '{"list": [' * depth + '{"value": 1}' + "]}" * depth)
    with pytest.raises(CheckpointError, match=r"nested (too deeply to parse|more than \d+ containers deep)"):
        taugrad.load(path)


def _nested_lists(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


def test_nesting_up_to_the_limit_round_trips_and_deeper_is_refused(tmp_path):
    path = tmp_path / "ckpt.npz"
    deepest = _nested_lists(serialization.npz.MAX_DEPTH - 1)  # plus the top-level dict
    taugrad.save({"x": deepest}, path)
    assert taugrad.load(path) == {"x": deepest}
    before = path.read_bytes()
    with pytest.raises(ValueError, match="nested more than"):
        taugrad.save({"x": _nested_lists(serialization.npz.MAX_DEPTH)}, path)
    assert path.read_bytes() == before and _files(tmp_path) == ["ckpt.npz"]


def test_reference_cycle_is_refused_and_the_file_kept(tmp_path):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"w": np.zeros(2)}, path)
    before = path.read_bytes()
    itself = {}
    itself["self"] = itself
    with pytest.raises(ValueError, match=r"cannot save self: reference cycle \(it is the saved dict itself\)"):
        taugrad.save(itself, path)
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match=r"cannot save a.b.0: reference cycle \(it is a.b, which contains it\)"):
        taugrad.save({"a": {"b": loop}}, path)
    assert path.read_bytes() == before and _files(tmp_path) == ["ckpt.npz"]


def test_shared_values_that_are_not_cycles_still_save(tmp_path):
    path = tmp_path / "ckpt.npz"
    shared = [1, 2]
    taugrad.save({"a": shared, "b": shared, "c": (shared, shared)}, path)
    assert taugrad.load(path) == {"a": [1, 2], "b": [1, 2], "c": ([1, 2], [1, 2])}


def test_huge_integer_in_layout_is_rejected(tmp_path):
    path = tmp_path / "big.npz"
    _write_layout(path, '{"value": ' + "9" * 5000 + "}")
    with pytest.raises(CheckpointError, match="an integer in it has too many digits") as info:
        taugrad.load(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("scalar", [
    np.float32(0.1), np.float16(-2.5), np.float64(1 / 3), np.float64("nan"), np.longdouble(0.1),
    np.int8(-7), np.int64(3), np.uint64(2**64 - 1), np.bool_(True), np.bool_(False), np.complex64(1 + 2j),
], ids=lambda scalar: f"{type(scalar).__name__}({scalar})")
def test_numpy_scalars_keep_their_dtype(tmp_path, scalar):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"x": scalar, "nested": [{"y": scalar}]}, path)
    back = taugrad.load(path)
    for value in (back["x"], back["nested"][0]["y"]):
        assert type(value) is type(scalar) and value.dtype == scalar.dtype
        np.testing.assert_array_equal(value, scalar)


def test_numpy_string_scalar_still_saves_as_str(tmp_path):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"name": np.str_("mlp")}, path)
    assert taugrad.load(path) == {"name": "mlp"}


def test_checkpoint_written_before_scalars_existed_still_loads(tmp_path):
    path = tmp_path / "old.npz"  # the version-1 layout as save wrote it before "scalar" entries
    layout = ('{"dict": [["w", {"tensor": "w"}], ["lr", {"float": "lr"}], ["step", {"value": 7}], '
              '["m", {"array": "m"}], ["betas", {"tuple": [{"float": "betas.0"}]}], '
              '["state", {"dict": [[0, {"list": [{"value": null}, {"value": "x"}]}]]}]]}')
    _write_layout(path, layout, w=np.ones(2, np.float32), lr=np.array(0.5), m=np.arange(3),
                  **{"betas.0": np.array(0.9)})
    back = taugrad.load(path)
    assert isinstance(back["w"], Tensor) and back["w"].detach().numpy().dtype == np.float32
    assert back["lr"] == 0.5 and type(back["lr"]) is float and back["step"] == 7
    assert back["betas"] == (0.9,) and back["state"] == {0: [None, "x"]}
    np.testing.assert_array_equal(back["m"], np.arange(3))


def test_scalar_entry_must_be_zero_dimensional(tmp_path):
    path = tmp_path / "bad.npz"
    _write_layout(path, '{"dict": [["x", {"scalar": "x"}]]}', x=np.zeros(3))
    with pytest.raises(CheckpointError, match="malformed layout"):
        taugrad.load(path)


@pytest.fixture
def umask_027():
    previous = os.umask(0o027)
    yield
    os.umask(previous)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_new_file_gets_the_mode_open_would_give(tmp_path, umask_027):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"w": np.zeros(2)}, path)
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
@pytest.mark.parametrize("mode", [0o664, 0o600, 0o444], ids=oct)
def test_overwrite_keeps_the_existing_mode(tmp_path, umask_027, mode):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"w": np.zeros(2)}, path)
    os.chmod(path, mode)
    taugrad.save({"w": np.ones(2)}, path)
    assert oct(path.stat().st_mode & 0o777) == oct(mode)
    np.testing.assert_array_equal(taugrad.load(path)["w"], np.ones(2))


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="needs symlinks")
def test_save_writes_through_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "ckpt.npz"
    taugrad.save({"w": np.zeros(2)}, target)
    os.chmod(target, 0o664)
    link = tmp_path / "latest.npz"
    link.symlink_to(os.path.join("real", "ckpt.npz"))  # relative, as `ln -s` makes them
    taugrad.save({"w": np.ones(2)}, link)
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "ckpt.npz")
    np.testing.assert_array_equal(taugrad.load(target)["w"], np.ones(2))
    assert oct(target.stat().st_mode & 0o777) == oct(0o664)
    assert _files(tmp_path) == ["latest.npz", "real"] and _files(tmp_path / "real") == ["ckpt.npz"]


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="needs symlinks")
def test_save_through_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "latest.npz"
    link.symlink_to("ckpt.npz")
    taugrad.save({"w": np.ones(2)}, link)
    assert link.is_symlink() and (tmp_path / "ckpt.npz").is_file()
    np.testing.assert_array_equal(taugrad.load(link)["w"], np.ones(2))


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="needs symlinks")
def test_save_through_a_symlink_loop_fails_and_keeps_the_links(tmp_path):
    (tmp_path / "a.npz").symlink_to("b.npz")
    (tmp_path / "b.npz").symlink_to("a.npz")
    with pytest.raises(OSError, match="symbolic links"):
        taugrad.save({"w": np.ones(2)}, tmp_path / "a.npz")
    assert (tmp_path / "a.npz").is_symlink() and (tmp_path / "b.npz").is_symlink()
    assert _files(tmp_path) == ["a.npz", "b.npz"]

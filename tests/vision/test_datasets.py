"""MNIST-family idx files and CIFAR batches written here, read back as torchvision reads them; bad files refused."""
from __future__ import annotations

import io
import os
import pickle
import struct
import tarfile

import numpy as np
import pytest

import taugrad
from taugrad.vision import datasets, transforms
from taugrad.vision.datasets.download import download_file, extract_tar_folder
from taugrad.vision.datasets.idx import parse_idx
from taugrad.vision.datasets.safe_pickle import safe_loads

from .files import cifar_rows, idx_bytes, write_cifar10_python, write_mnist


@pytest.fixture
def digits():
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8), np.array([3, 1, 4, 1, 5], np.uint8)


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_items_are_the_files_pixels_and_labels(tmp_path, digits, gz):
    images, labels = digits
    write_mnist(tmp_path, images, labels, gz=gz)
    ds = datasets.MNIST(str(tmp_path), train=True)
    assert len(ds) == 5
    img, target = ds[2]
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.shape == (28, 28)
    np.testing.assert_array_equal(img, images[2])
    assert target == 4 and type(target) is int
    assert ds.data.dtype == taugrad.uint8 and tuple(ds.data.shape) == (5, 28, 28)
    assert ds.targets.dtype == taugrad.int64 and ds.targets.tolist() == [3, 1, 4, 1, 5]
    assert ds.class_to_idx["4 - four"] == 4


def test_mnist_test_split_reads_the_t10k_files(tmp_path, digits):
    images, labels = digits
    write_mnist(tmp_path, images, labels, test_images=images[:2], test_labels=[9, 8])
    ds = datasets.MNIST(tmp_path, train=False)
    assert len(ds) == 2 and [ds[i][1] for i in range(2)] == [9, 8]


def test_mnist_with_to_tensor_gives_a_1x28x28_tensor_in_0_1(tmp_path, digits):
    images, labels = digits
    write_mnist(tmp_path, images, labels)
    ds = datasets.MNIST(tmp_path, transform=transforms.ToTensor(), target_transform=lambda y: y * 10)
    x, y = ds[0]
    assert tuple(x.shape) == (1, 28, 28) and x.dtype == taugrad.float32 and y == 30
    np.testing.assert_allclose(x.numpy()[0], images[0] / np.float32(255), rtol=0, atol=1e-7)


def test_fashion_and_kmnist_read_their_own_folders(tmp_path, digits):
    images, labels = digits
    write_mnist(tmp_path, images, labels, folder="FashionMNIST")
    write_mnist(tmp_path, images[:3], labels[:3], folder="KMNIST")
    assert len(datasets.FashionMNIST(tmp_path)) == 5 and datasets.FashionMNIST.classes[9] == "Ankle boot"
    assert len(datasets.KMNIST(tmp_path)) == 3
    with pytest.raises(RuntimeError, match="no train-images-idx3-ubyte"):
        datasets.MNIST(tmp_path)


def test_missing_files_say_where_they_belong(tmp_path):
    with pytest.raises(RuntimeError) as err:
        datasets.MNIST(tmp_path)
    message = str(err.value)
    assert "\n" not in message and os.path.join(str(tmp_path), "MNIST", "raw") in message
    assert "download=True" in message


def test_download_offline_fails_with_one_line_naming_the_folder(tmp_path, monkeypatch):
    import urllib.request

    def offline(*args, **kwargs):
        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(RuntimeError) as err:
        datasets.MNIST(tmp_path, download=True)
    message = str(err.value)
    assert "\n" not in message
    assert "could not download train-images-idx3-ubyte.gz" in message
    assert "ossci-datasets.s3.amazonaws.com" in message and "network is unreachable" in message
    assert os.path.join(str(tmp_path), "MNIST", "raw") in message


def test_download_skips_files_that_are_there(tmp_path, digits, monkeypatch):
    import urllib.request

    images, labels = digits
    write_mnist(tmp_path, images, labels)
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: pytest.fail("no download expected"))
    assert len(datasets.MNIST(tmp_path, download=True)) == 5


def _bad(blob: bytes, ndim: int = 3) -> str:
    with pytest.raises(ValueError) as err:
        parse_idx(blob, ndim, "some-file")
    assert "\n" not in str(err.value) and str(err.value).startswith("some-file: ")
    return str(err.value)


def test_malformed_idx_files_are_refused_with_one_line():
    good = idx_bytes(np.zeros((2, 3, 4), np.uint8))
    assert parse_idx(good, 3, "f").shape == (2, 3, 4)
    assert "too short" in _bad(b"\x00\x00")
    assert "magic number 2049" in _bad(idx_bytes(np.zeros(3, np.uint8)))  # a label file read as images
    assert "magic number" in _bad(b"\x00\x00\x0c\x03" + good[4:])  # int32 values
    assert "magic number" in _bad(b"\x01\x00\x08\x03" + good[4:])
    assert "cut short" in _bad(good[:9])
    assert "24 bytes of data, the file has 23" in _bad(good[:-1])
    assert "the file has 25" in _bad(good + b"\x00")
    huge = b"\x00\x00\x08\x03" + struct.pack(">III", 60000, 4000000, 4000000) + b"\x00" * 10
    assert "the file has 10" in _bad(huge)


def test_a_truncated_image_file_is_refused_by_the_data_set(tmp_path, digits):
    images, labels = digits
    raw = write_mnist(tmp_path, images, labels)
    blob = (raw / "train-images-idx3-ubyte").read_bytes()
    (raw / "train-images-idx3-ubyte").write_bytes(blob[:-5])
    with pytest.raises(ValueError, match="train-images-idx3-ubyte: the header says 5x28x28"):
        datasets.MNIST(tmp_path)


def test_images_and_labels_must_agree(tmp_path, digits):
    images, labels = digits
    write_mnist(tmp_path, images, labels[:4])
    with pytest.raises(ValueError, match="5 images but 4 labels"):
        datasets.MNIST(tmp_path)
    write_mnist(tmp_path, images, [0, 1, 2, 3, 10])
    with pytest.raises(ValueError, match="label 10"):
        datasets.MNIST(tmp_path)


# -- CIFAR ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", [2, 4])
def test_cifar10_python_batches_are_read_as_hwc_images(tmp_path, protocol):
    written = write_cifar10_python(tmp_path, per_batch=2, protocol=protocol)
    train = datasets.CIFAR10(tmp_path, train=True)
    test = datasets.CIFAR10(str(tmp_path), train=False)
    assert len(train) == 10 and len(test) == 2
    assert train.data.shape == (10, 32, 32, 3) and train.data.dtype == np.uint8
    rows, labels = written["data_batch_3"]
    img, target = train[5]  # the second image of the third batch
    assert target == labels[1]
    # CIFAR stores channel planes: pixel (y, x) of channel c is byte c*1024 + y*32 + x
    np.testing.assert_array_equal(img[7, 11], rows[1][[0 * 1024 + 7 * 32 + 11, 1024 + 7 * 32 + 11,
                                                        2048 + 7 * 32 + 11]])
    assert train.classes[3] == "cat" and train.class_to_idx["truck"] == 9
    assert test.targets == written["test_batch"][1]


def _write_cifar10_binary(root, per_file=3):
    folder = root / "cifar-10-batches-bin"
    folder.mkdir(parents=True)
    out = {}
    for k, name in enumerate([f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]):
        rows = cifar_rows(per_file, 10 + k)
        labels = np.arange(per_file, dtype=np.uint8) + k
        (folder / name).write_bytes(np.concatenate([labels[:, None], rows], axis=1).tobytes())
        out[name] = (rows, labels)
    (folder / "batches.meta.txt").write_text("\n".join(["airplane", "automobile", "bird", "cat", "deer", "dog",
                                                         "frog", "horse", "ship", "truck"]) + "\n\n")
    return out


def test_cifar10_binary_version_is_read_when_the_python_one_is_absent(tmp_path):
    written = _write_cifar10_binary(tmp_path)
    train = datasets.CIFAR10(tmp_path)
    test = datasets.CIFAR10(tmp_path, train=False)
    assert len(train) == 15 and len(test) == 3 and len(train.classes) == 10
    rows, labels = written["test_batch.bin"]
    img, target = test[2]
    assert target == labels[2] == 7
    np.testing.assert_array_equal(img, rows[2].reshape(3, 32, 32).transpose(1, 2, 0))


def test_cifar10_binary_with_a_partial_record_is_refused(tmp_path):
    _write_cifar10_binary(tmp_path)
    path = tmp_path / "cifar-10-batches-bin" / "data_batch_2.bin"
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ValueError, match="not a whole number of 3073-byte records"):
        datasets.CIFAR10(tmp_path)


def test_cifar100_uses_the_fine_labels(tmp_path):
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    rows = cifar_rows(4, 1)
    for name in ("train", "test"):
        (folder / name).write_bytes(pickle.dumps({"data": rows, "fine_labels": [99, 0, 5, 42],
                                                  "coarse_labels": [1, 1, 1, 1]}, protocol=2))
    (folder / "meta").write_bytes(pickle.dumps({"fine_label_names": [f"c{i}" for i in range(100)]}, protocol=2))
    ds = datasets.CIFAR100(tmp_path)
    assert ds.targets == [99, 0, 5, 42] and ds[3][1] == 42 and ds.classes[42] == "c42"


def test_cifar_missing_is_one_line(tmp_path):
    with pytest.raises(RuntimeError, match=r"^Dataset not found or corrupted: no cifar-10-batches-py/ "):
        datasets.CIFAR10(tmp_path)


def test_cifar_with_to_tensor_and_normalize(tmp_path):
    write_cifar10_python(tmp_path)
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])
    ds = datasets.CIFAR10(tmp_path, transform=tf)
    x, _ = ds[0]
    assert tuple(x.shape) == (3, 32, 32)
    expected = (ds.data[0].transpose(2, 0, 1) / np.float32(255) - np.float32(0.5)) / np.float32(0.25)
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-6, atol=1e-6)


# -- the restricted unpickler ------------------------------------------------------------------------------


class _RunsCommand:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


class _Evaluates:
    def __reduce__(self):
        return (eval, ("1 + 1",))


@pytest.mark.parametrize("payload", [_RunsCommand(), _Evaluates(), {"data": [_RunsCommand()]}])
def test_a_pickle_naming_any_other_global_is_refused(payload):
    blob = pickle.dumps(payload, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match=r"refused to unpickle global (posix|nt|os|builtins|__builtin__)\."):
        safe_loads(blob)


def test_a_cifar_batch_holding_an_exploit_is_refused_before_running_it(tmp_path):
    write_cifar10_python(tmp_path)
    marker = tmp_path / "ran"
    evil = {"data": cifar_rows(2, 0), "labels": [0, 1], "x": _Touches(str(marker))}
    (tmp_path / "cifar-10-batches-py" / "data_batch_4").write_bytes(pickle.dumps(evil, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="refused to unpickle global"):
        datasets.CIFAR10(tmp_path)
    assert not marker.exists()


class _Touches:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_arrays_and_plain_containers_still_load():
    value = {"a": [1, 2.5, "s", b"bytes", (3, None, True)], "x": np.arange(6, dtype=np.uint8).reshape(2, 3)}
    for protocol in (2, 3, 4):
        got = safe_loads(pickle.dumps(value, protocol=protocol))
        assert got["a"] == value["a"]
        np.testing.assert_array_equal(got["x"], value["x"])


def test_an_object_array_in_a_batch_is_refused(tmp_path):
    write_cifar10_python(tmp_path)
    bad = {"data": np.array([[1, 2]], dtype=object), "labels": [0]}
    (tmp_path / "cifar-10-batches-py" / "data_batch_1").write_bytes(pickle.dumps(bad, protocol=2))
    with pytest.raises((ValueError, pickle.UnpicklingError)):
        datasets.CIFAR10(tmp_path)


# -- FakeData ------------------------------------------------------------------------------------------------


def test_fake_data_items_are_fixed_per_index_and_leave_the_global_generator_alone():
    ds = datasets.FakeData(size=6, image_size=(3, 5, 7), num_classes=4, transform=transforms.ToTensor())
    taugrad.manual_seed(0)
    before = taugrad.rand(3)
    taugrad.manual_seed(0)
    x0, y0 = ds[0]
    after = taugrad.rand(3)
    assert taugrad.equal(before, after)
    again, y_again = ds[0]
    assert taugrad.equal(x0, again) and y0 == y_again
    assert tuple(x0.shape) == (3, 5, 7) and 0 <= y0 < 4 and len(ds) == 6
    assert not taugrad.equal(ds[1][0], x0)
    with pytest.raises(IndexError):
        ds[6]


def test_fake_data_one_channel_is_a_gray_image():
    img, _ = datasets.FakeData(size=2, image_size=(1, 4, 4))[1]
    assert img.shape == (4, 4) and img.dtype == np.uint8


# -- downloading and unpacking -----------------------------------------------------------------------------


class _Response(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_download_file_checks_the_md5_and_tries_the_next_mirror(tmp_path, monkeypatch):
    import hashlib
    import urllib.request

    good = b"the real bytes"
    served = {"http://a/f.gz": b"corrupted", "http://b/f.gz": good}
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: _Response(served[url]))
    dest = tmp_path / "raw" / "f.gz"
    download_file(["http://a/f.gz", "http://b/f.gz"], str(dest), hashlib.md5(good).hexdigest(), str(tmp_path))
    assert dest.read_bytes() == good
    with pytest.raises(RuntimeError, match=r"http://a/f.gz: checksum mismatch; http://b/f.gz: checksum mismatch"):
        download_file(["http://a/f.gz", "http://b/f.gz"], str(tmp_path / "g.gz"), "0" * 32, str(tmp_path))
    assert not (tmp_path / "g.gz").exists() and not (tmp_path / "g.gz.part").exists()


def test_extracting_an_archive_writes_only_regular_files_inside_its_folder(tmp_path):
    archive = tmp_path / "a.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in (("cifar-10-batches-py/data_batch_1", b"ok"), ("cifar-10-batches-py/../escaped", b"x"),
                           ("/tmp/absolute_escape", b"x"), ("other/file", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("cifar-10-batches-py/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    dest = tmp_path / "out"
    extract_tar_folder(str(archive), "cifar-10-batches-py", str(dest))
    written = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file() or p.is_symlink())
    assert written == ["cifar-10-batches-py/data_batch_1"]
    assert not (tmp_path / "escaped").exists()

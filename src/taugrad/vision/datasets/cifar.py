"""CIFAR-10 and CIFAR-100 as torchvision lays them out under ``root``.

Two on-disk versions are read:

* ``cifar-10-batches-py`` / ``cifar-100-python`` (what torchvision downloads):
  pickled batches, read with :mod:`taugrad.vision.datasets.safe_pickle`, never
  with the plain ``pickle`` module;
* ``cifar-10-batches-bin`` / ``cifar-100-binary``: fixed-size records
  (label byte(s), then 3072 pixel bytes), used when the python version is absent.

Either way ``data`` is a ``uint8`` array of shape ``(N, 32, 32, 3)`` (height,
width, channel) and ``targets`` a list of ints, as torchvision keeps them.
"""
from __future__ import annotations

import os
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from taugrad.vision.datasets.download import download_file, extract_tar_folder, md5_of
from taugrad.vision.datasets.safe_pickle import safe_loads
from taugrad.vision.datasets.vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100"]

PIXELS = 3 * 32 * 32


class CIFAR10(VisionDataset):
    """``torchvision.datasets.CIFAR10(root, train=True, transform=None, target_transform=None, download=False)``.

    Items are ``(image, target)``: ``image`` a ``(32, 32, 3)`` ``uint8`` array
    (``transforms.ToTensor()`` makes it a ``(3, 32, 32)`` float tensor in
    [0, 1]), ``target`` the class index (``classes[target]`` names it).
    """

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [[f"data_batch_{i}", None] for i in range(1, 6)]
    test_list = [["test_batch", None]]
    meta = {"filename": "batches.meta", "key": "label_names"}
    labels_key = "labels"
    #: the binary version: folder, batch files, label-names file, label bytes before each image
    bin_folder = "cifar-10-batches-bin"
    bin_train = [f"data_batch_{i}.bin" for i in range(1, 6)]
    bin_test = ["test_batch.bin"]
    bin_meta = "batches.meta.txt"
    bin_label_bytes = 1

    def __init__(self, root: Any, train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download and not self._has_python() and not self._has_binary():
            self.download()
        if self._has_python():
            self.data, self.targets, self.classes = self._load_python()
        elif self._has_binary():
            self.data, self.targets, self.classes = self._load_binary()
        else:
            raise RuntimeError(
                f"Dataset not found or corrupted: no {self.base_folder}/ or {self.bin_folder}/ in {self.root}. "
                "You can use download=True to download it")
        self.class_to_idx = {name: i for i, name in enumerate(self.classes)}

    # -- the python (pickled) version -------------------------------------------------------------
    def _has_python(self) -> bool:
        names = [n for n, _ in self.train_list + self.test_list] + [self.meta["filename"]]
        return all(os.path.isfile(os.path.join(self.root, self.base_folder, n)) for n in names)

    def _read_pickle(self, name: str) -> dict:
        path = os.path.join(self.root, self.base_folder, name)
        with open(path, "rb") as f:
            entry = safe_loads(f.read())
        if not isinstance(entry, dict):
            raise ValueError(f"{type(self).__name__}: {path} holds a {type(entry).__name__}, not a batch dict")
        return entry

    def _load_python(self) -> Tuple[np.ndarray, List[int], List[str]]:
        images, targets = [], []
        for name, _ in self.train_list if self.train else self.test_list:
            entry = self._read_pickle(name)
            path = os.path.join(self.root, self.base_folder, name)
            data, labels = entry.get("data"), entry.get(self.labels_key)
            if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != PIXELS:
                raise ValueError(f"{type(self).__name__}: {path}: 'data' must be a uint8 array of shape (N, {PIXELS}), "
                                 f"got {getattr(data, 'dtype', type(data).__name__)} "
                                 f"{tuple(getattr(data, 'shape', ()))}")
            if not isinstance(labels, list) or len(labels) != len(data) or not all(isinstance(v, int) for v in labels):
                raise ValueError(f"{type(self).__name__}: {path}: {self.labels_key!r} must be a list of "
                                 f"{len(data)} ints")
            images.append(data)
            targets += labels
        meta = self._read_pickle(self.meta["filename"])
        classes = list(meta.get(self.meta["key"], []))
        return self._finish(images, targets, classes)

    # -- the binary version --------------------------------------------------------------------------
    def _has_binary(self) -> bool:
        names = self.bin_train + self.bin_test + [self.bin_meta]
        return all(os.path.isfile(os.path.join(self.root, self.bin_folder, n)) for n in names)

    def _load_binary(self) -> Tuple[np.ndarray, List[int], List[str]]:
        images, targets = [], []
        record = self.bin_label_bytes + PIXELS
        for name in self.bin_train if self.train else self.bin_test:
            path = os.path.join(self.root, self.bin_folder, name)
            raw = np.fromfile(path, dtype=np.uint8)
            if raw.size % record:
                raise ValueError(f"{type(self).__name__}: {path} has {raw.size} bytes, not a whole number of "
                                 f"{record}-byte records")
            raw = raw.reshape(-1, record)
            images.append(raw[:, self.bin_label_bytes:])
            targets += raw[:, self.bin_label_bytes - 1].astype(int).tolist()  # the fine label is the last byte
        with open(os.path.join(self.root, self.bin_folder, self.bin_meta)) as f:
            classes = [line.strip() for line in f if line.strip()]
        return self._finish(images, targets, classes)

    def _finish(self, images: List[np.ndarray], targets: List[int], classes: List[str]):
        data = np.concatenate(images) if images else np.zeros((0, PIXELS), np.uint8)
        if classes and targets and not 0 <= min(targets) <= max(targets) < len(classes):
            raise ValueError(f"{type(self).__name__}: labels run from {min(targets)} to {max(targets)}, "
                             f"but there are {len(classes)} classes")
        # stored channel-major per image (1024 red, 1024 green, 1024 blue); items are height x width x channel
        return np.ascontiguousarray(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)), targets, classes

    # -- items -----------------------------------------------------------------------------------------
    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        return self._apply(self.data[index], self.targets[index])

    def __len__(self) -> int:
        return len(self.data)

    def download(self) -> None:
        """Fetch torchvision's archive (checked by MD5) and unpack its python folder under ``root``."""
        archive = os.path.join(self.root, self.filename)
        if not (os.path.isfile(archive) and md5_of(archive) == self.tgz_md5):
            try:
                download_file([self.url], archive, self.tgz_md5, self.root)
            except RuntimeError as err:
                raise RuntimeError(f"{type(self).__name__}: {err} (the {self.base_folder}/ or {self.bin_folder}/ "
                                   "folder of the archive)") from None
        extract_tar_folder(archive, self.base_folder, self.root)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class CIFAR100(CIFAR10):
    """``torchvision.datasets.CIFAR100``: as :class:`CIFAR10`, 100 fine classes (``targets`` are the fine labels)."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", None]]
    test_list = [["test", None]]
    meta = {"filename": "meta", "key": "fine_label_names"}
    labels_key = "fine_labels"
    bin_folder = "cifar-100-binary"
    bin_train = ["train.bin"]
    bin_test = ["test.bin"]
    bin_meta = "fine_label_names.txt"
    bin_label_bytes = 2

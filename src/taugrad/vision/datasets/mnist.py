"""MNIST and its drop-in relatives (Fashion-MNIST, KMNIST) from idx files laid out as torchvision lays them out.

The four files live in ``root/<ClassName>/raw/``, each either as the
uncompressed idx file (``train-images-idx3-ubyte``) or gzipped
(``train-images-idx3-ubyte.gz``)::

    root/MNIST/raw/train-images-idx3-ubyte   train-labels-idx1-ubyte
                   t10k-images-idx3-ubyte    t10k-labels-idx1-ubyte
"""
from __future__ import annotations

import os
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from taugrad.tensors.ops.creation import from_numpy
from taugrad.vision.datasets.download import download_file, gunzip
from taugrad.vision.datasets.idx import read_idx
from taugrad.vision.datasets.vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "KMNIST"]


class MNIST(VisionDataset):
    """``torchvision.datasets.MNIST(root, train=True, transform=None, target_transform=None, download=False)``.

    Items are ``(image, target)``: ``image`` a ``(28, 28)`` ``uint8`` array
    (``transforms.ToTensor()`` makes it a ``(1, 28, 28)`` float tensor in
    [0, 1]), ``target`` an int.  ``data`` (``uint8``, ``(N, 28, 28)``) and
    ``targets`` (``int64``) are tensors, as torchvision's.  With
    ``download=True`` the missing files are fetched from torchvision's mirrors
    (MD5-checked); offline that fails with one line naming the folder to fill.
    """

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
               "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root: Any, train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        split = "train" if train else "t10k"
        images = read_idx(self._find(f"{split}-images-idx3-ubyte"), 3)
        labels = read_idx(self._find(f"{split}-labels-idx1-ubyte"), 1)
        if len(images) != len(labels):
            raise ValueError(f"{type(self).__name__}: {len(images)} images but {len(labels)} labels "
                             f"in {self.raw_folder}")
        if labels.size and labels.max() >= len(self.classes):
            raise ValueError(f"{type(self).__name__}: label {int(labels.max())} in {self.raw_folder} is not one of "
                             f"the {len(self.classes)} classes")
        self._images = images
        self.data = from_numpy(images.copy())  # a private copy: the file's buffer is read-only
        self.targets = from_numpy(labels.astype(np.int64))

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def class_to_idx(self) -> dict:
        return {name: i for i, name in enumerate(self.classes)}

    def _find(self, name: str) -> str:
        for candidate in (name, name + ".gz"):
            path = os.path.join(self.raw_folder, candidate)
            if os.path.isfile(path):
                return path
        raise RuntimeError(f"Dataset not found: no {name}[.gz] in {self.raw_folder}. "
                           "You can use download=True to download it")

    def _missing(self) -> List[Tuple[str, str]]:
        return [(f, md5) for f, md5 in self.resources
                if not any(os.path.isfile(os.path.join(self.raw_folder, n)) for n in (f, f[:-3]))]

    def download(self) -> None:
        """Fetch the idx files that are not in ``raw_folder`` yet, trying each mirror in turn."""
        for filename, md5 in self._missing():
            gz = os.path.join(self.raw_folder, filename)
            try:
                download_file([m + filename for m in self.mirrors], gz, md5, self.raw_folder)
            except RuntimeError as err:
                names = ", ".join(f[:-3] for f, _ in self.resources)
                raise RuntimeError(f"{type(self).__name__}: {err} ({names}, each may be gzipped)") from None
            gunzip(gz, gz[:-3])

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        return self._apply(self._images[index], int(self.targets[index]))

    def __len__(self) -> int:
        return len(self._images)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class FashionMNIST(MNIST):
    """``torchvision.datasets.FashionMNIST``: Zalando's clothes images in MNIST's files and layout."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    """``torchvision.datasets.KMNIST``: Kuzushiji (cursive Japanese) characters in MNIST's files and layout."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
        ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
        ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
        ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134"),
    ]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]

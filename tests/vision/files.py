"""Tiny data-set files in the layouts torchvision reads, written by the tests themselves."""
from __future__ import annotations

import gzip
import pickle
import struct
from pathlib import Path
from typing import Sequence

import numpy as np


def idx_bytes(array: np.ndarray) -> bytes:
    """An idx file of unsigned bytes: magic ``0 0 8 ndim``, the sizes big-endian, then the values."""
    array = np.asarray(array, dtype=np.uint8)
    return struct.pack(">BBBB", 0, 0, 8, array.ndim) + struct.pack(">" + "I" * array.ndim, *array.shape) + \
        array.tobytes()


def write_mnist(root: Path, images: np.ndarray, labels: Sequence[int], test_images=None, test_labels=None,
                folder: str = "MNIST", gz: bool = False) -> Path:
    """The four files under ``root/<folder>/raw`` (the test split repeats the training one unless given)."""
    raw = Path(root) / folder / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    test_images = images if test_images is None else test_images
    test_labels = labels if test_labels is None else test_labels
    for name, arr in (("train-images-idx3-ubyte", images), ("train-labels-idx1-ubyte", labels),
                      ("t10k-images-idx3-ubyte", test_images), ("t10k-labels-idx1-ubyte", test_labels)):
        blob = idx_bytes(np.asarray(arr))
        if gz:
            (raw / (name + ".gz")).write_bytes(gzip.compress(blob))
        else:
            (raw / name).write_bytes(blob)
    return raw


def cifar_rows(n: int, seed: int) -> np.ndarray:
    """``n`` images as CIFAR stores them: one row of 1024 red, 1024 green, 1024 blue bytes each."""
    return np.random.default_rng(seed).integers(0, 256, size=(n, 3072), dtype=np.uint8)


def write_cifar10_python(root: Path, per_batch: int = 2, protocol: int = 2) -> dict:
    """cifar-10-batches-py with ``per_batch`` images in each of the six batches; returns what was written."""
    folder = Path(root) / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for k, name in enumerate(names):
        rows = cifar_rows(per_batch, k)
        labels = [(3 * k + j) % 10 for j in range(per_batch)]
        entry = {"batch_label": name, "labels": labels, "data": rows, "filenames": [f"{name}_{j}.png" for j in
                                                                                   range(per_batch)]}
        (folder / name).write_bytes(pickle.dumps(entry, protocol=protocol))
        written[name] = (rows, labels)
    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": classes, "num_vis": 3072},
                                                       protocol=protocol))
    return written

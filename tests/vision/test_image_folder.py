"""ImageFolder: classes from sorted sub-folders, files sorted, images decoded to RGB arrays."""
from __future__ import annotations

import numpy as np
import pytest

from taugrad.vision import datasets, transforms
from taugrad.vision.png import encode_png

from .png_reader import read_png


def _tree(root):
    rng = np.random.default_rng(0)
    images = {}
    for cls, names in (("dog", ["b.png", "a.png"]), ("cat", ["z.png"]), ("cat/inner", ["y.png"])):
        (root / cls).mkdir(parents=True, exist_ok=True)
        for name in names:
            pixels = rng.integers(0, 256, size=(5, 6, 3), dtype=np.uint8)
            (root / cls / name).write_bytes(encode_png(pixels))
            images[f"{cls}/{name}"] = pixels
    (root / "dog" / "notes.txt").write_text("not an image")
    return images


def test_classes_samples_and_targets_follow_torchvisions_order(tmp_path):
    images = _tree(tmp_path)
    ds = datasets.ImageFolder(str(tmp_path), loader=lambda p: read_png(open(p, "rb").read()))
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    rel = [(str(p)[len(str(tmp_path)) + 1:], t) for p, t in ds.samples]
    assert rel == [("cat/z.png", 0), ("cat/inner/y.png", 0), ("dog/a.png", 1), ("dog/b.png", 1)]
    assert ds.targets == [0, 0, 1, 1] and len(ds) == 4
    img, target = ds[2]
    np.testing.assert_array_equal(img, images["dog/a.png"])


def test_the_default_loader_decodes_with_pillow_and_feeds_the_transforms(tmp_path):
    pytest.importorskip("PIL")
    images = _tree(tmp_path)
    ds = datasets.ImageFolder(tmp_path, transform=transforms.Compose([transforms.CenterCrop(4),
                                                                      transforms.ToTensor()]))
    x, y = ds[3]
    assert tuple(x.shape) == (3, 4, 4) and y == 1
    np.testing.assert_allclose(x.numpy(), images["dog/b.png"][0:4, 1:5].transpose(2, 0, 1) / np.float32(255),
                               rtol=0, atol=1e-7)


def test_an_empty_class_or_root_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="found no valid file for the class empty"):
        datasets.ImageFolder(tmp_path)
    assert len(datasets.ImageFolder(tmp_path, allow_empty=True)) == 0
    with pytest.raises(FileNotFoundError, match="couldn't find any class folder"):
        datasets.ImageFolder(tmp_path / "empty")

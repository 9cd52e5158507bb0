"""``ImageFolder``: one sub-folder per class of image files, decoded with Pillow (an optional extra)."""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from taugrad.vision.datasets.vision import VisionDataset

__all__ = ["ImageFolder", "IMG_EXTENSIONS", "pil_loader"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def pil_loader(path: str) -> np.ndarray:
    """The image at ``path`` as an RGB ``uint8`` array, height x width x 3 (decoded by Pillow)."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(f"ImageFolder: decoding {os.path.basename(path)} needs Pillow: pip install pillow") from None
    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"))


class ImageFolder(VisionDataset):
    """``torchvision.datasets.ImageFolder(root, transform=None, target_transform=None, loader=pil_loader, ...)``.

    ``root/<class>/<file>``: the classes are the sub-folder names in sorted
    order (``class_to_idx``), ``samples`` the ``(path, class index)`` pairs of
    the files whose extension is in ``extensions`` (or that pass
    ``is_valid_file``), sorted by path, as torchvision walks them.  Items are
    ``(loader(path), class index)``: the default loader gives an RGB array.
    """

    def __init__(self, root: Any, transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 loader: Callable[[str], Any] = pil_loader, is_valid_file: Optional[Callable[[str], bool]] = None,
                 allow_empty: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.classes, self.class_to_idx = self.find_classes(self.root)
        valid = is_valid_file or (lambda p: p.lower().endswith(IMG_EXTENSIONS))
        self.samples = self.make_dataset(self.root, self.class_to_idx, valid, allow_empty)
        self.imgs = self.samples
        self.targets = [target for _, target in self.samples]
        self.loader = loader
        self.extensions = None if is_valid_file else IMG_EXTENSIONS

    @staticmethod
    def find_classes(directory: str) -> Tuple[List[str], Dict[str, int]]:
        """The sorted sub-folder names of ``directory`` and their indices."""
        if not os.path.isdir(directory):
            raise FileNotFoundError(f"ImageFolder: no folder {directory}")
        classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
        if not classes:
            raise FileNotFoundError(f"ImageFolder: couldn't find any class folder in {directory}")
        return classes, {name: i for i, name in enumerate(classes)}

    @staticmethod
    def make_dataset(directory: str, class_to_idx: Dict[str, int], is_valid_file: Callable[[str], bool],
                     allow_empty: bool = False) -> List[Tuple[str, int]]:
        """Every valid file under each class folder (links followed), sorted, with its class index."""
        samples = []
        for name in sorted(class_to_idx):
            found = []
            for base, _, files in sorted(os.walk(os.path.join(directory, name), followlinks=True)):
                found += [(os.path.join(base, f), class_to_idx[name]) for f in sorted(files)
                          if is_valid_file(os.path.join(base, f))]
            if not found and not allow_empty:
                raise FileNotFoundError(f"ImageFolder: found no valid file for the class {name} "
                                        f"(supported extensions: {', '.join(IMG_EXTENSIONS)})")
            samples += found
        return samples

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        path, target = self.samples[index]
        return self._apply(self.loader(path), target)

    def __len__(self) -> int:
        return len(self.samples)

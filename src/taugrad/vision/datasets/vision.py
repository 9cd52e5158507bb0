"""The base class every image data set here shares: ``root``, ``transform``, ``target_transform``, a readable repr."""
from __future__ import annotations

import os
from typing import Any, Callable, List, Optional, Tuple

from taugrad.utils.data import Dataset


class VisionDataset(Dataset):
    """``torchvision.datasets.VisionDataset``: items are ``(image, target)`` pairs after the two transforms.

    ``transform`` is applied to the image (a NumPy ``uint8`` array, height x
    width [x channels]; see :mod:`taugrad.vision`) and ``target_transform`` to
    the class index.
    """

    _repr_indent = 4

    def __init__(self, root: Any = None, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None) -> None:
        self.root = os.path.expanduser(os.fspath(root)) if root is not None else None
        self.transform = transform
        self.target_transform = target_transform

    def _apply(self, img: Any, target: Any) -> Tuple[Any, Any]:
        """The pair an item is: both transforms applied, image first."""
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines: List[str] = [f"Number of datapoints: {len(self)}"]
        if self.root is not None:
            lines.append(f"Root location: {self.root}")
        lines += [line for line in self.extra_repr().splitlines() if line]
        for name, value in (("Transforms", self.transform), ("Target transforms", self.target_transform)):
            if value is not None:
                body = repr(value).splitlines()
                lines.append(f"{name} (if any): {body[0]}")
                lines += [" " * len(f"{name} (if any): ") + line for line in body[1:]]
        pad = " " * self._repr_indent
        return "\n".join([f"Dataset {type(self).__name__}"] + [pad + line for line in lines])

"""``FakeData``: random images, each the same every time it is read (its own seed), for smoke-testing a pipeline."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

from taugrad.vision.datasets.vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """``torchvision.datasets.FakeData(size=1000, image_size=(3, 224, 224), num_classes=10, ...)``.

    Item ``i`` is drawn from a generator seeded with ``i + random_offset``, so
    it is the same on every read and the global random state is untouched (as
    torchvision does by saving and restoring torch's).  As torchvision, the
    image is standard normal noise ``z`` of shape ``image_size`` (C, H, W)
    turned into bytes the way ``ToPILImage`` turns a float tensor:
    ``uint8(trunc(255 z))``, wrapping modulo 256; it is handed to
    ``transform`` as a height x width x channel ``uint8`` array.  The draws
    are NumPy's, so the pixels differ from torchvision's for the same index.
    """

    def __init__(self, size: int = 1000, image_size: Sequence[int] = (3, 224, 224), num_classes: int = 10,
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 random_offset: int = 0) -> None:
        super().__init__(None, transform=transform, target_transform=target_transform)
        if len(tuple(image_size)) != 3:
            raise ValueError(f"FakeData: image_size must be (channels, height, width), got {tuple(image_size)}")
        self.size = int(size)
        self.num_classes = int(num_classes)
        self.image_size = tuple(int(s) for s in image_size)
        self.random_offset = int(random_offset)

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        if not -self.size <= index < self.size:
            raise IndexError(f"{type(self).__name__} index out of range")
        index %= self.size
        rng = np.random.default_rng(index + self.random_offset)
        noise = rng.standard_normal(self.image_size, dtype=np.float32)
        target = int(rng.integers(0, self.num_classes))
        pixels = (noise * 255).astype(np.int64).astype(np.uint8)  # truncate, then wrap modulo 256
        image = pixels.transpose(1, 2, 0)
        return self._apply(image[:, :, 0] if image.shape[2] == 1 else image, target)

    def __len__(self) -> int:
        return self.size

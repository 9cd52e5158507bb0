"""``taugrad.vision.transforms``: torchvision's composable image transforms (``import torchvision.transforms``).

    transform = transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
    ])

Images are NumPy arrays (or PIL images, or tensors): see
:mod:`taugrad.vision.transforms.functional`.  Random transforms draw from
taugrad's default generator, so ``taugrad.manual_seed`` makes them repeat
(the draws are NumPy's, not torch's, so a seed picks other crops than torch's).
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, List, Optional, Sequence, Tuple

from taugrad.tensors.core.generator import get_generator
from taugrad.vision.transforms import functional
from taugrad.vision.transforms.functional import InterpolationMode

__all__ = ["Compose", "ToTensor", "PILToTensor", "Normalize", "Resize", "CenterCrop", "RandomCrop", "Pad",
           "RandomHorizontalFlip", "RandomVerticalFlip", "Lambda", "InterpolationMode", "functional"]


class Compose:
    """Apply ``transforms`` one after another: ``Compose([a, b])(img) == b(a(img))``."""

    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = list(transforms)

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        return "\n".join([f"{type(self).__name__}("] + [f"    {t}" for t in self.transforms] + [")"])


class _Transform:
    """A transform whose repr lists its arguments, as torchvision prints them."""

    _shown: Tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self._shown)})"


class ToTensor(_Transform):
    """An image as a ``(C, H, W)`` tensor, bytes ``v`` scaled to ``v / 255`` (see ``functional.to_tensor``)."""

    def __call__(self, pic: Any):
        return functional.to_tensor(pic)

    def __repr__(self) -> str:
        return "ToTensor()"


class PILToTensor(_Transform):
    """An image as a ``(C, H, W)`` tensor of its own dtype, unscaled."""

    def __call__(self, pic: Any):
        return functional.pil_to_tensor(pic)


class Normalize(_Transform):
    """``output[c] = (input[c] - mean[c]) / std[c]`` on a float ``(..., C, H, W)`` tensor."""

    _shown = ("mean", "std")

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor: Any):
        return functional.normalize(tensor, self.mean, self.std, self.inplace)


class Resize(_Transform):
    """Resample to ``size`` (an int: the smaller edge; ``(h, w)``: exactly), bilinear and antialiased by default."""

    _shown = ("size", "interpolation", "max_size", "antialias")

    def __init__(self, size: Any, interpolation: Any = InterpolationMode.BILINEAR, max_size: Optional[int] = None,
                 antialias: Optional[bool] = True) -> None:
        self.size, self.interpolation, self.max_size, self.antialias = size, interpolation, max_size, antialias

    def __call__(self, img: Any):
        return functional.resize(img, self.size, self.interpolation, self.max_size, self.antialias)


class CenterCrop(_Transform):
    """The centred ``size`` window (padded with zeros where the image is smaller)."""

    _shown = ("size",)

    def __init__(self, size: Any) -> None:
        self.size = functional._size_pair(size, "CenterCrop")

    def __call__(self, img: Any):
        return functional.center_crop(img, self.size)


class Pad(_Transform):
    """Borders of ``padding`` pixels (see ``functional.pad``)."""

    _shown = ("padding", "fill", "padding_mode")

    def __init__(self, padding: Any, fill: Any = 0, padding_mode: str = "constant") -> None:
        functional._pad_widths(padding)  # refuse a malformed padding now, not at the first image
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def __call__(self, img: Any):
        return functional.pad(img, self.padding, self.fill, self.padding_mode)


class RandomCrop(_Transform):
    """A ``size`` window at a uniformly drawn position, after optional ``padding`` (the CIFAR augmentation).

    The top row is drawn from ``0 .. h - th`` and the left column from
    ``0 .. w - tw``, each every position equally likely, as torchvision's
    ``get_params``.  ``pad_if_needed`` pads an image smaller than ``size``.
    """

    _shown = ("size", "padding")

    def __init__(self, size: Any, padding: Any = None, pad_if_needed: bool = False, fill: Any = 0,
                 padding_mode: str = "constant") -> None:
        self.size = functional._size_pair(size, "RandomCrop")
        if padding is not None:
            functional._pad_widths(padding)
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    @staticmethod
    def get_params(img: Any, output_size: Tuple[int, int]) -> Tuple[int, int, int, int]:
        """``(top, left, height, width)`` of a random window of ``output_size``."""
        _, h, w = functional.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"RandomCrop: required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if (h, w) == (th, tw):
            return 0, 0, h, w
        rng = get_generator()
        return int(rng.integers(0, h - th + 1)), int(rng.integers(0, w - tw + 1)), th, tw

    def __call__(self, img: Any):
        if self.padding is not None:
            img = functional.pad(img, self.padding, self.fill, self.padding_mode)
        _, h, w = functional.get_dimensions(img)
        th, tw = self.size
        if self.pad_if_needed and (w < tw or h < th):
            img = functional.pad(img, [max(tw - w, 0), max(th - h, 0)], self.fill, self.padding_mode)
        return functional.crop(img, *self.get_params(img, self.size))


class RandomHorizontalFlip(_Transform):
    """Mirror left to right with probability ``p``."""

    _shown = ("p",)

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def __call__(self, img: Any):
        return functional.hflip(img) if get_generator().random() < self.p else img


class RandomVerticalFlip(RandomHorizontalFlip):
    """Mirror top to bottom with probability ``p``."""

    def __call__(self, img: Any):
        return functional.vflip(img) if get_generator().random() < self.p else img


class Lambda(_Transform):
    """Any callable as a transform: ``Lambda(f)(img) == f(img)``."""

    def __init__(self, lambd: Callable) -> None:
        if not callable(lambd):
            raise TypeError(f"Lambda: argument should be callable, got {type(lambd).__name__}")
        self.lambd = lambd

    def __call__(self, img: Any):
        return self.lambd(img)

    def __repr__(self) -> str:
        return "Lambda()"

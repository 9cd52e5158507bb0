"""``taugrad.vision``: the part of torchvision that training scripts use, written over NumPy.

Under ``taugrad run`` a script's ``import torchvision`` gives this package:

* :mod:`~taugrad.vision.datasets`: MNIST, FashionMNIST, KMNIST (idx files),
  CIFAR10, CIFAR100 (pickled or binary batches, read without ``pickle``'s
  code execution), FakeData and ImageFolder (decoded with Pillow, an optional extra);
* :mod:`~taugrad.vision.transforms`: ``Compose``, ``ToTensor``,
  ``Normalize``, ``Resize``, ``CenterCrop``, ``RandomCrop``, ``Pad``, the
  random flips, ``Lambda``;
* :mod:`~taugrad.vision.utils`: ``make_grid`` and ``save_image`` (PNG
  written with ``zlib``; no Pillow needed).

Where torchvision hands a PIL image, these data sets hand a NumPy ``uint8``
array (height x width [x channels]); the transforms take arrays, PIL images
(when Pillow is installed) and tensors, and ``ToTensor`` gives torchvision's
tensor for each.
"""
from taugrad.vision import datasets, transforms, utils

__version__ = "0.0+taugrad"

__all__ = ["datasets", "transforms", "utils"]

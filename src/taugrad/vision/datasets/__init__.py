"""``taugrad.vision.datasets``: the image data sets of ``torchvision.datasets`` that taugrad reads.

Items are ``(image, target)`` with the image a NumPy ``uint8`` array (height x
width for gray images, height x width x channel for colour ones) where
torchvision hands a PIL image; every transform in
:mod:`taugrad.vision.transforms` takes it, and ``ToTensor`` makes the same
tensor from it as torchvision makes from the PIL image.
"""
from taugrad.vision.datasets.cifar import CIFAR10, CIFAR100
from taugrad.vision.datasets.fakedata import FakeData
from taugrad.vision.datasets.folder import ImageFolder
from taugrad.vision.datasets.mnist import KMNIST, MNIST, FashionMNIST
from taugrad.vision.datasets.vision import VisionDataset

__all__ = ["VisionDataset", "MNIST", "FashionMNIST", "KMNIST", "CIFAR10", "CIFAR100", "FakeData", "ImageFolder"]

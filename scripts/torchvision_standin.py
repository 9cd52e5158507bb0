"""A stand-in ``torchvision`` for the PyTorch run of ``compare_with_torch.py``, where torchvision is not installed.

A torchvision built for the PyTorch beside taugrad cannot always be
installed, and a torchvision program cannot run on PyTorch without one.  This
stand-in is :mod:`taugrad.vision` seen from PyTorch: the data sets and
transforms are taugrad.vision's (they run inside the data set, before any
sample reaches the program), and every tensor crossing over is copied
through NumPy: a sample a data set returns becomes a ``torch`` tensor, and a
``torch`` tensor given to ``utils.make_grid`` or ``utils.save_image``
becomes a taugrad one.  Both runs of a comparison then read the same images
and labels, and what is compared is everything the program does with them.

Only a data set's own ``transform`` may use taugrad.vision's transforms; a
transform the program applies itself to a ``torch`` tensor is not supported.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any, Callable


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Builds the stand-in when the program first imports ``torchvision`` (and tells ``imported``)."""

    def __init__(self, torch: Any, imported: Callable[[], None]) -> None:
        self.torch, self.imported = torch, imported

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torchvision" and not fullname.startswith("torchvision."):
            return None
        if "torchvision" not in sys.modules:
            build(self.torch)
            self.imported()
        if fullname not in sys.modules:
            return None  # a part of torchvision the stand-in lacks (models, ops...): ModuleNotFoundError
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        return sys.modules[spec.name]

    def exec_module(self, module) -> None:
        pass


def install(torch: Any, imported: Callable[[], None]) -> None:
    """Make ``import torchvision`` give the stand-in, built at that import; ``imported()`` is called then."""
    sys.meta_path.append(_Finder(torch, imported))


def build(torch: Any) -> None:
    """Put the stand-in ``torchvision`` (and its ``datasets``, ``transforms``, ``utils``) in ``sys.modules``."""
    import numpy as np

    import taugrad
    import taugrad.vision as vision

    def to_torch(value: Any) -> Any:
        if isinstance(value, taugrad.Tensor):
            return torch.from_numpy(np.array(value.detach().numpy()))
        if isinstance(value, (tuple, list)):
            return type(value)(to_torch(v) for v in value)
        return value

    def to_taugrad(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return taugrad.from_numpy(np.array(value.detach().cpu().numpy()))
        if isinstance(value, (tuple, list)):
            return type(value)(to_taugrad(v) for v in value)
        return value

    datasets = ModuleType("torchvision.datasets")
    for name in vision.datasets.__all__:
        base = getattr(vision.datasets, name)

        def getitem(self, index, _base=base):
            return to_torch(_base.__getitem__(self, index))
        setattr(datasets, name, type(name, (base,), {"__getitem__": getitem, "__module__": "torchvision.datasets"}))

    utils = ModuleType("torchvision.utils")
    utils.make_grid = lambda tensor, *args, **kwargs: to_torch(vision.utils.make_grid(to_taugrad(tensor), *args,
                                                                                       **kwargs))
    utils.save_image = lambda tensor, fp, *args, **kwargs: vision.utils.save_image(to_taugrad(tensor), fp, *args,
                                                                                   **kwargs)
    package = ModuleType("torchvision")
    package.__path__ = []
    package.__version__ = vision.__version__ + "-standin"
    package.datasets, package.transforms, package.utils = datasets, vision.transforms, utils
    sys.modules.update({"torchvision": package, "torchvision.datasets": datasets,
                        "torchvision.transforms": vision.transforms,
                        "torchvision.transforms.functional": vision.transforms.functional,
                        "torchvision.utils": utils})

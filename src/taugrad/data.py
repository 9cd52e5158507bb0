"""``taugrad.data``: the former name of :mod:`taugrad.datasets`, kept so existing code runs.

Everything public in :mod:`taugrad.datasets` (``moons``, ``digits``, ``load``,
``train_test_split``...) is here, the very same objects.  ``DataLoader`` here
is :func:`taugrad.datasets.array_loader`: called as before,
``DataLoader((X, y), batch_size=32, shuffle=True, seed=0)`` gives the same
batches as before, from the one loader class,
:class:`taugrad.utils.data.DataLoader`.
"""
from taugrad import datasets as _datasets
from taugrad.datasets import *  # noqa: F401,F403  (the re-export is the point of this module)
from taugrad.datasets import array_loader as DataLoader  # the old name and call of array_loader

__all__ = list(_datasets.__all__) + ["DataLoader"]

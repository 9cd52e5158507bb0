"""``taugrad.utils.data.dataset``: map-style and iterable datasets, tensors as a dataset, subsets,
concatenation and random splits (where ``torch.utils.data`` keeps them)."""
from __future__ import annotations

import bisect
import math
import warnings
from itertools import accumulate
from typing import Any, Generic, Iterable, Iterator, List, Sequence, TypeVar, Union

import numpy as np

from taugrad.tensors.core.generator import get_generator
from taugrad.tensors.core.node import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]

T = TypeVar("T")


class Dataset(Generic[T]):
    """A map-style dataset: subclasses define ``__getitem__(index)`` and, for a DataLoader, ``__len__``."""

    def __getitem__(self, index: int) -> T:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other: "Dataset[T]") -> "ConcatDataset[T]":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T]):
    """A stream of samples: subclasses define ``__iter__``; a DataLoader batches what it yields, in order."""

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class TensorDataset(Dataset):
    """Samples ``(t[i] for t in tensors)`` from tensors (or arrays) sharing their first dimension."""

    def __init__(self, *tensors: Any) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        tensors = tuple(t if isinstance(t, Tensor) else Tensor(np.asarray(t)) for t in tensors)
        sizes = [t.shape[0] if t.ndim else None for t in tensors]
        if None in sizes or len(set(sizes)) != 1:
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise ValueError(f"TensorDataset: tensors must share their first dimension, got shapes {shapes}")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Several datasets of one length side by side: ``StackDataset(a, b)[i] == (a[i], b[i])``, or with keywords
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output,"
                             " but both types are given.")
        parts = list(args) or list(kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(len(p) != self._length for p in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets: Any = tuple(args) if args else dict(kwargs)

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ChainDataset(IterableDataset):
    """Several iterable datasets one after another (each iterated in turn)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class ConcatDataset(Dataset[T]):
    """Several map-style datasets one after another (``dataset_a + dataset_b``)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset needs at least one dataset")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not take an IterableDataset")
        self.cumulative_sizes = list(accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> T:
        if index < 0:
            if -index > len(self):
                raise IndexError(f"index {index} is out of range for a dataset of {len(self)} samples")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class Subset(Dataset[T]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> T:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(total: int, lengths: Sequence[Union[int, float]]) -> List[int]:
    """Counts from counts, or from fractions summing to 1 (floors, then the remainder one by one from the first)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for number, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split: fraction at index {number} is not between 0 and 1: {fraction}")
            counts.append(int(math.floor(total * fraction)))
        for i in range(total - sum(counts)):
            counts[i % len(counts)] += 1
        for number, count in enumerate(counts):
            if count == 0:
                warnings.warn(f"random_split: length of split at index {number} is 0", stacklevel=3)
        return counts
    if any(isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0 for n in lengths):
        raise ValueError(f"random_split: lengths must be non-negative integers or fractions summing to 1, "
                         f"got {list(lengths)}")
    if sum(lengths) != total:
        raise ValueError(f"random_split: lengths sum to {sum(lengths)}, the dataset has {total} samples")
    return [int(n) for n in lengths]


def random_split(dataset: Any, lengths: Sequence[Union[int, float]], generator: Any = None) -> List[Subset]:
    """Split ``dataset`` at random into non-overlapping :class:`Subset` s of the given lengths.

    ``lengths`` are counts adding up to ``len(dataset)``, or fractions adding up
    to 1: then each part gets ``floor(n * fraction)`` samples and the ones left
    over go one each to the first parts (PyTorch's rule).
    """
    counts = _split_lengths(len(dataset), lengths)
    order = get_generator(generator).permutation(sum(counts)).tolist()
    return [Subset(dataset, order[end - count:end]) for end, count in zip(accumulate(counts), counts)]

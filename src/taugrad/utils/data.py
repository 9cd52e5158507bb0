"""``taugrad.utils.data``: datasets, samplers and the mini-batch loader of ``torch.utils.data``.

    from taugrad.utils.data import DataLoader, TensorDataset, random_split
    train, test = random_split(TensorDataset(X, y), [0.8, 0.2])
    for xb, yb in DataLoader(train, batch_size=32, shuffle=True):
        ...

Batches are collated as ``torch.utils.data.default_collate`` does: Tensors and
NumPy arrays are stacked into a Tensor, Python floats become a float64 Tensor,
ints an int64 one, bools a bool one; tuples and lists are collated field by
field (a tuple sample gives a *list* of fields, as in PyTorch), dicts key by
key, namedtuples keep their type, strings stay a list.

Randomness (shuffling, :func:`random_split`) comes from ``generator`` when one
is given, else from taugrad's default generator (``taugrad.manual_seed``); the
permutations are NumPy's, so the order differs from PyTorch's for the same seed.

There are no worker processes: ``num_workers > 0`` loads in the main process,
in the same order, after a one-time warning (the batches are the ones
``num_workers=0`` gives).  ``pin_memory`` is accepted and ignored (no device).
"""
from __future__ import annotations

import bisect
import collections.abc
import math
import warnings
from itertools import accumulate
from typing import Any, Callable, Dict, Generic, Iterable, Iterator, List, Optional, Sequence, TypeVar, Union

import numpy as np

from taugrad.tensors.generator import get_generator
from taugrad.tensors.node import Tensor
from taugrad.tensors.ops.creation import as_tensor
from taugrad.tensors.ops.shape import stack

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "ConcatDataset",
    "Subset",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "BatchSampler",
    "DataLoader",
    "default_collate",
    "default_convert",
]

T = TypeVar("T")


# ---------------------------------------------------------------------------
# datasets
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------


class Sampler(Generic[T]):
    """Yields the indices (or, for a batch sampler, the lists of indices) a DataLoader fetches."""

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A fresh random permutation each pass; with ``replacement=True``, ``num_samples`` independent draws."""

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: Optional[int] = None,
                 generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = bool(replacement)
        self._num_samples = num_samples
        self.generator = generator
        if num_samples is not None and (isinstance(num_samples, bool) or not isinstance(num_samples, int)
                                        or num_samples <= 0):
            raise ValueError(f"num_samples must be a positive integer, got {num_samples!r}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        rng = get_generator(self.generator)
        n = len(self.data_source)
        if self.replacement:
            return iter(rng.integers(0, n, size=self.num_samples).tolist())
        passes = [rng.permutation(n) for _ in range(-(-self.num_samples // n))] if n else [np.arange(0)]
        return iter(np.concatenate(passes)[: self.num_samples].tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a fresh random order each pass."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in get_generator(self.generator).permutation(len(self.indices)):
            yield self.indices[int(i)]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler[List[int]]):
    """Group the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless ``drop_last``)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = bool(drop_last)

    def __iter__(self) -> Iterator[List[int]]:
        batch: List[int] = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


# ---------------------------------------------------------------------------
# collation
# ---------------------------------------------------------------------------


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def default_collate(batch: Sequence[Any]) -> Any:
    """Merge a list of samples into a batch, as ``torch.utils.data.default_collate``.

    Tensors and arrays are stacked along a new first dimension; Python floats
    give a float64 Tensor, ints int64, bools bool, NumPy scalars their dtype;
    strings stay as they are; dicts, namedtuples, tuples and lists are collated
    entry by entry (a tuple or list comes back as a list).  New tensors go to
    the default device (``set_default_device``), as torch's ``as_tensor`` does.
    """
    if len(batch) == 0:
        raise ValueError("default_collate: the batch is empty")
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch), 0)
    if isinstance(first, np.ndarray):
        if first.dtype.kind in "OUSV":
            raise TypeError(f"default_collate: cannot batch NumPy arrays of dtype {first.dtype}")
        return as_tensor(np.stack([np.asarray(item) for item in batch]))
    if isinstance(first, np.generic):
        return as_tensor(np.asarray(batch))
    if isinstance(first, bool):
        return as_tensor(np.asarray(batch, dtype=np.bool_))
    if isinstance(first, float):
        return as_tensor(np.asarray(batch, dtype=np.float64))
    if isinstance(first, int):
        return as_tensor(np.asarray(batch, dtype=np.int64))
    if isinstance(first, (str, bytes)):
        return batch  # as given: a list at the top, a tuple of one field inside a batch of tuples
    if isinstance(first, collections.abc.Mapping):
        collated = {key: default_collate([sample[key] for sample in batch]) for key in first}
        try:
            return type(first)(collated)  # an OrderedDict stays one, as in PyTorch
        except TypeError:  # a mapping type that cannot be built from a dict
            return collated
    if _is_namedtuple(first):
        return type(first)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        size = len(first)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        return [default_collate(field) for field in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, NumPy arrays, numbers, dicts or lists; "
                    f"found {type(first).__name__}")


def default_convert(data: Any) -> Any:
    """One sample (``batch_size=None``): NumPy arrays become Tensors, containers are converted entry by entry."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OUSV":
        return Tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return Tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


# ---------------------------------------------------------------------------
# the loader
# ---------------------------------------------------------------------------

_warned_about_workers = [False]


class DataLoader(Generic[T]):
    """Iterate over ``dataset`` in mini-batches, as ``torch.utils.data.DataLoader``.

    Each pass (``for batch in loader``) is one epoch: every sample once, in a
    fresh random order with ``shuffle=True`` (each pass reshuffles), else in
    order.  ``len(loader)`` is the number of batches.  ``batch_size=None``
    yields single samples (converted by :func:`default_convert`).  Give either
    ``shuffle``/``sampler`` with ``batch_size``/``drop_last``, or a
    ``batch_sampler`` alone.  An :class:`IterableDataset` is batched in the
    order it yields.

    ``num_workers > 0`` loads in this process (see the module docstring).
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: Optional[int] = 1,
        shuffle: Optional[bool] = None,
        sampler: Optional[Iterable[int]] = None,
        batch_sampler: Optional[Iterable[List[int]]] = None,
        num_workers: int = 0,
        collate_fn: Optional[Callable[[List[Any]], Any]] = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Optional[Callable[[int], None]] = None,
        generator: Any = None,
        *,
        prefetch_factor: Optional[int] = None,
        persistent_workers: bool = False,
    ) -> None:
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"num_workers must be a non-negative integer, got {num_workers!r}")
        if num_workers > 0 and not _warned_about_workers[0]:
            _warned_about_workers[0] = True
            warnings.warn(f"DataLoader: num_workers={num_workers} runs in the main process here "
                          "(taugrad has no worker processes); the batches are the same", stacklevel=2)
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle:
                raise ValueError("DataLoader: shuffle=True cannot be used with an IterableDataset")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader: an IterableDataset takes no sampler or batch_sampler")
        elif not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise TypeError(f"DataLoader: dataset must have __getitem__ and __len__ (or be an IterableDataset), "
                            f"got {type(dataset).__name__}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle=True are mutually exclusive")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler excludes batch_size, shuffle, sampler and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                                         or batch_size <= 0):
            raise ValueError(f"DataLoader: batch_size must be a positive integer or None, got {batch_size!r}")
        if not self._iterable and sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, int(batch_size), drop_last)
        self.batch_size = None if batch_size is None else int(batch_size)
        self.drop_last = bool(drop_last)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_convert if self.batch_size is None and batch_sampler is None else default_collate
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator[Any]:
        if self._iterable:
            yield from self._iterate_stream()
        elif self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])
        else:
            for index in self.sampler:  # type: ignore[union-attr]
                yield self.collate_fn(self.dataset[index])

    def _iterate_stream(self) -> Iterator[Any]:
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch: List[Any] = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # TypeError if the stream has no length, as in PyTorch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]

"""``taugrad.utils.data.sampler``: the orders in which a DataLoader visits a dataset's indices
(where ``torch.utils.data`` keeps them)."""
from __future__ import annotations

from typing import Any, Generic, Iterable, Iterator, List, Optional, Sequence, TypeVar

import numpy as np

from taugrad.tensors.core.generator import get_generator

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler"]

T = TypeVar("T")


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

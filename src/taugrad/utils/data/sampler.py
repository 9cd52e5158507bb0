"""``taugrad.utils.data.sampler``: the orders in which a DataLoader visits a dataset's indices
(where ``torch.utils.data`` keeps them)."""
from __future__ import annotations

from typing import Any, Generic, Iterable, Iterator, List, Optional, Sequence, TypeVar

import numpy as np

from taugrad.tensors.core.generator import get_generator

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]

T = TypeVar("T")

#: indices drawn at a time by the samplers that draw with replacement, so that memory does not grow with
#: ``num_samples`` (``RandomSampler(data, replacement=True, num_samples=10**10)`` is an endless stream)
CHUNK = 32


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
        """Drawn lazily: ``CHUNK`` indices at a time with replacement, one permutation per pass without, so
        memory stays bounded however large ``num_samples`` is."""
        rng = get_generator(self.generator)
        n = len(self.data_source)
        total = self.num_samples
        if self.replacement:
            if n == 0:
                raise ValueError("RandomSampler: cannot draw with replacement from an empty dataset")
            for start in range(0, total, CHUNK):
                yield from rng.integers(0, n, size=min(CHUNK, total - start)).tolist()
            return
        for start in range(0, total, max(n, 1)):
            if n == 0:
                return
            yield from rng.permutation(n)[: total - start].tolist()

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


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    With replacement (the default) the draws are made ``CHUNK`` at a time, by
    inverting the cumulative weights; without, ``num_samples`` distinct
    indices (at most ``len(weights)``).
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        array = np.asarray(weights.numpy() if hasattr(weights, "numpy") else weights, dtype=np.float64)
        if array.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(array.shape)}")
        if array.size == 0 or not np.all(np.isfinite(array)) or np.any(array < 0) or array.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0, or a weight negative, "
                               "inf or nan)")
        if not replacement and num_samples > np.count_nonzero(array):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        self.weights = array
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rng = get_generator(self.generator)
        if not self.replacement:
            yield from rng.choice(self.weights.size, size=self.num_samples, replace=False,
                                  p=self.weights / self.weights.sum()).tolist()
            return
        cumulative = np.cumsum(self.weights)
        for start in range(0, self.num_samples, CHUNK):
            u = rng.random(min(CHUNK, self.num_samples - start)) * cumulative[-1]
            yield from np.minimum(np.searchsorted(cumulative, u, side="right"), self.weights.size - 1).tolist()

    def __len__(self) -> int:
        return self.num_samples


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

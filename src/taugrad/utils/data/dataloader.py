"""``taugrad.utils.data.dataloader``: collating samples into batches and the mini-batch loader
(where ``torch.utils.data`` keeps them)."""
from __future__ import annotations

import collections.abc
import warnings
from typing import Any, Callable, Generic, Iterable, Iterator, List, Optional, Sequence, TypeVar

import numpy as np

from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.creation import as_tensor
from taugrad.tensors.ops.shape import stack
from taugrad.utils.data.dataset import IterableDataset
from taugrad.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

T = TypeVar("T")


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


def get_worker_info() -> None:
    """None: data is always loaded in the main process here (torch returns None there too), so code that
    splits an IterableDataset among workers takes its single-process branch."""
    return None


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
        pin_memory_device: str = "",
        in_order: bool = True,
        multiprocessing_context: Any = None,
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
        # worker-process settings torch takes; with no workers the batches come in order either way
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self.multiprocessing_context = multiprocessing_context
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

"""``taugrad.utils.data.distributed``: ``DistributedSampler``, for one process among ``num_replicas``.

taugrad runs in one process (:mod:`taugrad.distributed`), so ``num_replicas``
and ``rank`` must be given (``num_replicas=1, rank=0`` gives every index);
left out, they are asked of the process group, which raises as torch does
before ``init_process_group``.  Each replica gets every ``num_replicas``-th
index of one permutation, seeded by ``seed + epoch`` (call ``set_epoch`` each
epoch), padded by repetition to equal shares unless ``drop_last``.
"""
from __future__ import annotations

import math
from typing import Any, Iterator, Optional

import numpy as np

from taugrad import distributed
from taugrad.tensors.core.generator import Generator, get_generator
from taugrad.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[int]):
    """The indices of ``dataset`` that replica ``rank`` of ``num_replicas`` visits this epoch."""

    def __init__(self, dataset: Any, num_replicas: Optional[int] = None, rank: Optional[int] = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = distributed.get_world_size()
        if rank is None:
            rank = distributed.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = get_generator(Generator().manual_seed(self.seed + self.epoch)).permutation(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / max(len(indices), 1)))[:padding]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose permutation the next pass uses (so each epoch is shuffled differently)."""
        self.epoch = epoch

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
from taugrad.utils.data.dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split,
)
from taugrad.utils.data.sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)
from taugrad.utils.data.dataloader import DataLoader, default_collate, default_convert, get_worker_info
from taugrad.utils.data.distributed import DistributedSampler
from taugrad.utils.data import dataloader, dataset, distributed, sampler

__all__ = [
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "ChainDataset",
    "WeightedRandomSampler",
    "DistributedSampler",
    "get_worker_info",
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

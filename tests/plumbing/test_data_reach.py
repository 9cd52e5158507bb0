"""utils.data as programs use it: lazy samplers, weighted and distributed sampling, stacked and chained datasets."""
import tracemalloc

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import taugrad
import taugrad.utils.data as data
from taugrad.utils.data.sampler import CHUNK


def test_an_endless_random_sampler_starts_at_once_in_bounded_memory():
    """minGPT's and makemore's infinite loader: RandomSampler(replacement=True, num_samples=int(1e10))."""
    ds = data.TensorDataset(taugrad.arange(50))
    loader = data.DataLoader(ds, sampler=data.RandomSampler(ds, replacement=True, num_samples=int(1e10)),
                             batch_size=8)
    tracemalloc.start()
    try:
        batches = iter(loader)
        first = [next(batches)[0] for _ in range(200)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1024 * 1024
    assert len(loader) == int(1e10) // 8
    values = np.concatenate([b.numpy() for b in first])
    assert values.min() >= 0 and values.max() < 50 and len(np.unique(values)) == 50


def test_the_loader_pulls_only_the_indices_it_yields():
    pulled = []

    class Counting(data.Sampler):
        def __iter__(self):
            for i in range(10 ** 9):
                pulled.append(i)
                yield i % 7

        def __len__(self):
            return 10 ** 9

    loader = data.DataLoader(data.TensorDataset(taugrad.arange(7)), sampler=Counting(), batch_size=4)
    it = iter(loader)
    next(it)
    next(it)
    assert len(pulled) == 8


def test_random_sampler_draws_chunks_deterministically_under_a_seed():
    ds = list(range(20))
    g1, g2 = taugrad.Generator().manual_seed(5), taugrad.Generator().manual_seed(5)
    a = list(data.RandomSampler(ds, replacement=True, num_samples=3 * CHUNK + 5, generator=g1))
    b = list(data.RandomSampler(ds, replacement=True, num_samples=3 * CHUNK + 5, generator=g2))
    assert a == b and len(a) == 3 * CHUNK + 5
    passes = list(data.RandomSampler(ds, num_samples=45))
    assert len(passes) == 45 and sorted(passes[:20]) == ds and sorted(passes[20:40]) == ds


def test_weighted_random_sampler_by_contract_and_torchs_errors():
    weights = [0.0, 1.0, 3.0, 0.0]
    draws = np.array(list(data.WeightedRandomSampler(weights, 4000, generator=taugrad.Generator().manual_seed(0))))
    assert set(np.unique(draws)) == {1, 2}
    assert abs((draws == 2).mean() - 0.75) < 0.03
    distinct = list(data.WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False))
    assert sorted(distinct) == [0, 1, 2]
    for args, error in [(([1.0], 0), ValueError), (([[1.0]], 2), ValueError), (([1.0, 1.0], 3, False), RuntimeError),
                        (([-1.0, 1.0], 2), RuntimeError)]:
        with pytest.raises(error):
            list(tdata.WeightedRandomSampler(*args))
        with pytest.raises(error):
            list(data.WeightedRandomSampler(*args))


def test_stack_and_chain_datasets_as_torch():
    a, b = [1, 2, 3], ["x", "y", "z"]
    assert data.StackDataset(a, b)[1] == tdata.StackDataset(a, b)[1]
    assert data.StackDataset(p=a, q=b)[2] == tdata.StackDataset(p=a, q=b)[2]
    assert len(data.StackDataset(a, b)) == 3
    with pytest.raises(ValueError, match="Size mismatch"):
        data.StackDataset(a, [1])

    class Stream(data.IterableDataset):
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            return iter(self.items)

        def __len__(self):
            return len(self.items)

    chained = data.ChainDataset([Stream([1, 2]), Stream([3])])
    assert list(chained) == [1, 2, 3] and len(chained) == 3
    assert data.get_worker_info() is None is tdata.get_worker_info()


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 4, False), (12, 4, False)])
def test_distributed_sampler_without_shuffle_is_torchs(n, replicas, drop_last):
    for rank in range(replicas):
        ours = data.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        theirs = tdata.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False,
                                          drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_distributed_sampler_shuffles_per_epoch_and_splits_every_index():
    shares = [data.DistributedSampler(range(12), num_replicas=3, rank=r, seed=4) for r in range(3)]
    assert sorted(i for s in shares for i in s) == list(range(12))
    first = list(shares[0])
    shares[0].set_epoch(1)
    assert list(shares[0]) != first
    with pytest.raises(ValueError, match="process group"):
        data.DistributedSampler(range(4))
    import taugrad.utils.data.distributed as module
    assert module.DistributedSampler is data.DistributedSampler

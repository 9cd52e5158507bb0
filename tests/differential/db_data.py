"""taugrad.utils.data: datasets, samplers, the DataLoader and collation, as torch code uses them.

Deterministic orders are compared exactly; shuffling draws from taugrad's own stream and is
compared by contract in db_random.py.
"""
from __future__ import annotations

import numpy as np

from .scenarios import arr, raises, scenario

ENTRIES: list = []


def _tds(L, n=7):
    return L.data.TensorDataset(L.root.tensor(arr("dsx", n, 2)), L.root.tensor(np.arange(n)))


def _batches(loader):
    return [list(b) if isinstance(b, (list, tuple)) else b for b in loader]


@scenario(ENTRIES, "TensorDataset", "index_len", ("tensors",))
def _(L):
    ds = _tds(L)
    return len(ds), list(ds[2]), list(ds[-1]), raises(lambda: L.data.TensorDataset(L.root.zeros(3), L.root.zeros(4)))


@scenario(ENTRIES, "Dataset", "subclass_and_add")
def _(L):
    class Squares(L.data.Dataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return float(i * i)

    both = Squares(3) + Squares(2)
    return type(both).__name__, len(both), [both[i] for i in range(len(both))]


@scenario(ENTRIES, "IterableDataset", "loader_over_stream")
def _(L):
    class Count(L.data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    return _batches(L.data.DataLoader(Count(), batch_size=3)), _batches(L.data.DataLoader(Count(), batch_size=3, drop_last=True))


@scenario(ENTRIES, "ConcatDataset", "index_len", ("datasets",))
def _(L):
    ds = L.data.ConcatDataset([_tds(L, 3), _tds(L, 4)])
    return len(ds), list(ds[4]), list(ds[-1]), list(ds.cumulative_sizes)


@scenario(ENTRIES, "Subset", "index_len", ("dataset", "indices"))
def _(L):
    ds = L.data.Subset(dataset=_tds(L), indices=[5, 1, 3])
    return len(ds), list(ds[0]), [list(ds[i]) for i in range(3)], list(ds.indices)


@scenario(ENTRIES, "StackDataset", "positional_and_keyword", ("args", "kwargs"))
def _(L):
    a, b = _tds(L, 4), L.data.TensorDataset(L.root.tensor(arr("dsy", 4)))
    return list(L.data.StackDataset(a, b)[1]), sorted(L.data.StackDataset(x=a, y=b)[2]), len(L.data.StackDataset(a, b))


@scenario(ENTRIES, "SequentialSampler", "order", ("data_source",))
def _(L):
    return list(L.data.SequentialSampler(range(5))), len(L.data.SequentialSampler(data_source=_tds(L)))


@scenario(ENTRIES, "BatchSampler", "drop_last", ("sampler", "batch_size", "drop_last"))
def _(L):
    seq = L.data.SequentialSampler(range(7))
    return list(L.data.BatchSampler(seq, 3, False)), list(L.data.BatchSampler(sampler=seq, batch_size=3, drop_last=True)), \
        len(L.data.BatchSampler(seq, 3, False)), len(L.data.BatchSampler(seq, 3, True)), list(L.data.BatchSampler(range(5), 2, False))


@scenario(ENTRIES, "Sampler", "custom_sampler_in_loader")
def _(L):
    class Reverse(L.data.Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n - 1, -1, -1))

        def __len__(self):
            return self.n

    return _batches(L.data.DataLoader(_tds(L), batch_size=3, sampler=Reverse(7)))


@scenario(ENTRIES, "DataLoader", "batching_keywords", ("dataset", "batch_size", "shuffle", "sampler", "drop_last",
                                                         "collate_fn", "num_workers", "pin_memory", "timeout",
                                                         "worker_init_fn", "prefetch_factor", "persistent_workers"))
def _(L):
    ds = _tds(L)
    plain = _batches(L.data.DataLoader(ds, 3))
    kw = _batches(L.data.DataLoader(dataset=ds, batch_size=2, shuffle=False, sampler=None, drop_last=True, collate_fn=None,
                                    num_workers=0, pin_memory=False, timeout=0, worker_init_fn=None, prefetch_factor=None,
                                    persistent_workers=False))
    custom = list(L.data.DataLoader(ds, batch_size=4, collate_fn=lambda items: len(items)))
    unbatched = _batches(L.data.DataLoader(ds, batch_size=None))[:2]
    return plain, kw, custom, unbatched, len(L.data.DataLoader(ds, batch_size=3)), len(L.data.DataLoader(ds, 3, drop_last=True))


@scenario(ENTRIES, "DataLoader", "worker_keywords", ("pin_memory_device", "in_order", "multiprocessing_context"))
def _(L):
    loader = L.data.DataLoader(_tds(L), batch_size=3, pin_memory_device="", in_order=True, multiprocessing_context=None)
    return _batches(loader)


@scenario(ENTRIES, "DataLoader", "batch_sampler", ("batch_sampler",))
def _(L):
    return _batches(L.data.DataLoader(_tds(L), batch_sampler=[[0, 2], [6, 1, 3]])), \
        raises(lambda: L.data.DataLoader(_tds(L), batch_size=2, batch_sampler=[[0]]))


@scenario(ENTRIES, "default_collate", "structures", ("batch",))
def _(L):
    t = [L.root.tensor(arr(f"c{i}", 2)) for i in range(3)]
    return (L.data.default_collate(t), L.data.default_collate([1, 2, 3]), L.data.default_collate([0.5, 1.5]),
            L.data.default_collate([{"a": t[0], "b": 1}, {"a": t[1], "b": 2}]),
            L.data.default_collate([(t[0], 1), (t[1], 2)]), L.data.default_collate(batch=[np.ones(2), np.zeros(2)]),
            L.data.default_collate(["x", "y"]))


@scenario(ENTRIES, "default_convert", "structures", ("data",))
def _(L):
    return L.data.default_convert(np.arange(3.0)), L.data.default_convert(data=[np.ones(2), 3]), \
        L.data.default_convert({"k": np.zeros(2)})


@scenario(ENTRIES, "get_worker_info", "main_process")
def _(L):
    return L.data.get_worker_info()


@scenario(ENTRIES, "ChainDataset", "chained_streams", ("datasets",))
def _(L):
    class Count(L.data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

    chain = L.data.ChainDataset([Count(3), Count(2)])
    return list(chain), _batches(L.data.DataLoader(L.data.ChainDataset(datasets=[Count(4), Count(3)]), batch_size=3))


@scenario(ENTRIES, "DistributedSampler", "unshuffled_shards", ("dataset", "num_replicas", "rank", "shuffle", "drop_last"))
def _(L):
    shards = [list(L.data.DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    dropped = [list(L.data.DistributedSampler(dataset=range(10), num_replicas=3, rank=r, shuffle=False, drop_last=True))
               for r in range(3)]
    return shards, dropped, len(L.data.DistributedSampler(range(10), num_replicas=3, rank=0, shuffle=False))

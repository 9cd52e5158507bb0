"""taugrad.utils.data against torch.utils.data: collation, lengths, splits, shuffling."""
import collections
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import taugrad
from taugrad.tensors.core.node import Tensor
from taugrad.utils import data as tgd

Point = collections.namedtuple("Point", "x y")


def _same(ours, theirs):
    """Recursively equal: same container kinds, Tensors with torch's dtype, shape and values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, Tensor), type(ours)
        assert str(ours.dtype).replace("taugrad.", "").replace("torch.", "") == str(theirs.dtype).replace("torch.", "")
        np.testing.assert_array_equal(ours._data, theirs.numpy())
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for key in theirs:
            _same(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    else:
        assert ours == theirs


def _pair(make):
    """The same sample structure built with numpy for each library (tensors from the same arrays)."""
    return make(Tensor), make(lambda a: torch.from_numpy(np.asarray(a)))


SAMPLES = {
    "floats": lambda T: [1.5, 2.0, -3.25],
    "ints": lambda T: [1, 2, 3],
    "bools": lambda T: [True, False],
    "numpy scalars": lambda T: [np.float32(1.5), np.float32(2)],
    "tensors": lambda T: [T(np.arange(6.0).reshape(2, 3)), T(np.ones((2, 3)))],
    "arrays": lambda T: [np.arange(3, dtype=np.int32), np.zeros(3, dtype=np.int32)],
    "tuples": lambda T: [(T(np.ones(2, np.float32)), 1), (T(np.zeros(2, np.float32)), 0)],
    "lists": lambda T: [[1.0, 2], [3.0, 4]],
    "dicts": lambda T: [{"x": T(np.ones(2)), "label": 3, "name": "a"},
                        {"x": T(np.zeros(2)), "label": 4, "name": "b"}],
    "ordered dicts": lambda T: [collections.OrderedDict(b=1.0, a=2), collections.OrderedDict(b=3.0, a=4)],
    "namedtuples": lambda T: [Point(T(np.ones(2)), 1.0), Point(T(np.zeros(2)), 2.0)],
    "nested": lambda T: [({"a": [1, (2.0, T(np.ones(1)))]}, "s"), ({"a": [3, (4.0, T(np.ones(1)))]}, "t")],
}


@pytest.mark.parametrize("name", SAMPLES)
def test_default_collate_matches_torch(name):
    ours_batch, theirs_batch = _pair(SAMPLES[name])
    _same(tgd.default_collate(ours_batch), tud.default_collate(theirs_batch))


def test_default_collate_rejects_ragged_lists_as_torch():
    with pytest.raises(RuntimeError, match="equal size"):
        tgd.default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="equal size"):
        tud.default_collate([[1, 2], [3]])


def test_tensor_dataset_and_loader_batches_match_torch():
    X = np.arange(30.0).reshape(10, 3)
    y = np.arange(10) % 3
    ours = tgd.DataLoader(tgd.TensorDataset(Tensor(X), Tensor(y)), batch_size=4)
    theirs = tud.DataLoader(tud.TensorDataset(torch.tensor(X), torch.tensor(y)), batch_size=4)
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs):
        _same(a, b)
    assert len(list(ours)) == 3


@pytest.mark.parametrize("n, batch_size, drop_last", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                                      (2, 5, True), (0, 4, False)])
def test_len_matches_torch(n, batch_size, drop_last):
    ours = tgd.DataLoader(list(range(n)), batch_size=batch_size, drop_last=drop_last)
    theirs = tud.DataLoader(list(range(n)), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs) == len(list(ours))


def test_shuffle_visits_every_sample_once_and_reshuffles_each_pass():
    loader = tgd.DataLoader(list(range(50)), batch_size=8, shuffle=True, generator=np.random.default_rng(0))
    epochs = [np.concatenate([b._data for b in loader]) for _ in range(3)]
    for order in epochs:
        assert sorted(order.tolist()) == list(range(50))
    assert not np.array_equal(epochs[0], epochs[1]) and not np.array_equal(epochs[1], epochs[2])


def test_shuffle_is_reproducible_with_a_seeded_generator_or_manual_seed():
    first = [b._data.tolist() for b in tgd.DataLoader(list(range(20)), 5, shuffle=True,
                                                     generator=np.random.default_rng(7))]
    second = [b._data.tolist() for b in tgd.DataLoader(list(range(20)), 5, shuffle=True,
                                                      generator=np.random.default_rng(7))]
    assert first == second
    taugrad.manual_seed(3)
    third = [b._data.tolist() for b in tgd.DataLoader(list(range(20)), 5, shuffle=True)]
    taugrad.manual_seed(3)
    fourth = [b._data.tolist() for b in tgd.DataLoader(list(range(20)), 5, shuffle=True)]
    assert third == fourth


def test_collate_fn_receives_the_list_of_samples():
    seen = []
    loader = tgd.DataLoader(list("abcde"), batch_size=2, collate_fn=lambda batch: seen.append(batch) or len(batch))
    assert list(loader) == [2, 2, 1]
    assert seen == [["a", "b"], ["c", "d"], ["e"]]


def test_batch_size_none_yields_converted_samples_as_torch():
    samples = [(np.arange(2.0), 1), (np.arange(2.0) + 1, 2)]
    for ours, theirs in zip(tgd.DataLoader(samples, batch_size=None), tud.DataLoader(samples, batch_size=None)):
        _same(ours, theirs)


def test_batch_sampler_and_sampler_arguments_match_torch():
    data = list(range(10))
    batches = [[0, 3], [9, 1, 2], [5]]
    ours = [b._data.tolist() for b in tgd.DataLoader(data, batch_sampler=batches)]
    theirs = [b.tolist() for b in tud.DataLoader(data, batch_sampler=batches)]
    assert ours == theirs == batches
    ours = [b._data.tolist() for b in tgd.DataLoader(data, batch_size=4, sampler=[9, 8, 7, 6, 5])]
    theirs = [b.tolist() for b in tud.DataLoader(data, batch_size=4, sampler=[9, 8, 7, 6, 5])]
    assert ours == theirs
    with pytest.raises(ValueError, match="mutually exclusive"):
        tgd.DataLoader(data, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler"):
        tgd.DataLoader(data, batch_size=3, batch_sampler=batches)


class Stream(tgd.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


class TorchStream(tud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


@pytest.mark.parametrize("drop_last", [False, True])
def test_iterable_dataset_is_batched_in_order_as_torch(drop_last):
    ours = [b._data.tolist() for b in tgd.DataLoader(Stream(7), batch_size=3, drop_last=drop_last)]
    theirs = [b.tolist() for b in tud.DataLoader(TorchStream(7), batch_size=3, drop_last=drop_last)]
    assert ours == theirs
    with pytest.raises(ValueError, match="shuffle"):
        tgd.DataLoader(Stream(3), shuffle=True)


def test_num_workers_runs_in_process_with_one_warning_and_the_same_batches():
    tgd.dataloader._warned_about_workers[0] = False
    with pytest.warns(UserWarning, match="main process"):
        loader = tgd.DataLoader(list(range(7)), batch_size=2, num_workers=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tgd.DataLoader(list(range(7)), batch_size=2, num_workers=2)  # once only
    assert [b._data.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6]]


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [0.33, 0.33, 0.34], [0.5, 0.5],
                                     [1 / 3, 1 / 3, 1 / 3]])
def test_random_split_sizes_match_torch_and_parts_are_disjoint(lengths):
    ours = tgd.random_split(list(range(10)), lengths, generator=np.random.default_rng(0))
    theirs = tud.random_split(list(range(10)), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in ours] == [len(p) for p in theirs]
    together = [x for part in ours for x in part]
    assert sorted(together) == list(range(10))


def test_random_split_is_reproducible_and_random():
    a = tgd.random_split(range(100), [50, 50], generator=np.random.default_rng(1))
    b = tgd.random_split(range(100), [50, 50], generator=np.random.default_rng(1))
    assert a[0].indices == b[0].indices
    assert a[0].indices != list(range(50))


@pytest.mark.parametrize("lengths, message", [([3, 3], "sum to 6"), ([0.5, 0.6], "lengths"), ([-1, 11], "non-negative")])
def test_random_split_rejects_bad_lengths(lengths, message):
    with pytest.raises(ValueError, match=message):
        tgd.random_split(list(range(10)), lengths)


def test_subset_concat_and_tensor_dataset_indexing():
    X, y = np.arange(12.0).reshape(6, 2), np.arange(6)
    dataset = tgd.TensorDataset(X, y)
    x0, y0 = dataset[2]
    assert x0._data.tolist() == [4.0, 5.0] and int(y0._data) == 2
    subset = tgd.Subset(dataset, [5, 0])
    assert len(subset) == 2 and int(subset[0][1]._data) == 5
    both = subset + tgd.Subset(dataset, [1])
    assert len(both) == 3 and [int(both[i][1]._data) for i in range(3)] == [5, 0, 1]
    assert int(both[-1][1]._data) == 1
    with pytest.raises(ValueError, match="first dimension"):
        tgd.TensorDataset(np.zeros(3), np.zeros(4))


def test_taugrad_data_keeps_its_own_loader():
    """The array-based loader of taugrad.data (used by the CLI) is unchanged."""
    X, y = np.arange(8.0).reshape(4, 2), np.arange(4)
    batches = list(taugrad.data.DataLoader((X, y), batch_size=3))
    assert isinstance(batches[0][0], np.ndarray) and batches[1][1].tolist() == [3]


def test_import_paths_as_in_pytorch():
    from taugrad.utils.data import DataLoader, Dataset, TensorDataset, random_split  # noqa: F401
    assert taugrad.utils.data.DataLoader is DataLoader

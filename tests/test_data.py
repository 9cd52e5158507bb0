"""taugrad.data: generated datasets, digits, stratified split, DataLoader."""
import sys

import numpy as np
import pytest

from taugrad import data

GENERATED = [data.moons, data.circles, data.spirals, data.blobs]


@pytest.mark.parametrize("make", GENERATED)
def test_generated_shapes_dtypes_and_seeding(make):
    X, y = make(n_samples=101, seed=3)
    assert X.shape == (101, 2) and X.dtype == np.float64
    assert y.shape == (101,) and y.dtype == np.int64
    assert np.isfinite(X).all()
    X2, y2 = make(n_samples=101, seed=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = make(n_samples=101, seed=4)
    assert not np.array_equal(X, X3)


@pytest.mark.parametrize("make", GENERATED)
def test_generated_classes_are_balanced(make):
    _, y = make(n_samples=100, seed=0)
    counts = np.bincount(y)
    assert counts.min() >= counts.max() - 1 and len(counts) >= 2


def test_moons_has_the_geometry_of_sklearn_make_moons():
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    for n in (10, 11, 100):
        X, y = data.moons(n_samples=n, noise=0.0, seed=0)
        Xs, ys = sklearn_datasets.make_moons(n_samples=n, noise=None, random_state=0)
        for label in (0, 1):
            ours = X[y == label]
            theirs = Xs[ys == label]
            order = lambda a: a[np.lexsort((a[:, 1], a[:, 0]))]  # noqa: E731
            np.testing.assert_allclose(order(ours), order(theirs), atol=1e-12)


def test_circles_matches_sklearn_geometry():
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    X, y = data.circles(n_samples=40, noise=0.0, factor=0.5, seed=0)
    Xs, ys = sklearn_datasets.make_circles(n_samples=40, noise=None, factor=0.5, random_state=0)
    order = lambda a: a[np.lexsort((a[:, 1], a[:, 0]))]  # noqa: E731
    for label in (0, 1):
        np.testing.assert_allclose(order(X[y == label]), order(Xs[ys == label]), atol=1e-12)


def test_noise_moves_points_by_about_its_scale():
    X0, y0 = data.moons(2000, noise=0.0, seed=1)
    X1, y1 = data.moons(2000, noise=0.2, seed=1)
    np.testing.assert_array_equal(y0, y1)  # same shuffle, then noise
    assert abs((X1 - X0).std() - 0.2) < 0.01


def test_spirals_and_blobs_class_count():
    _, y = data.spirals(90, n_classes=3, seed=0)
    assert set(y.tolist()) == {0, 1, 2}
    _, y = data.blobs(90, centers=4, seed=0)
    assert set(y.tolist()) == {0, 1, 2, 3}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: data.moons(n_samples=1), "n_samples"),
        (lambda: data.moons(n_samples=2.5), "n_samples"),
        (lambda: data.moons(noise=-1), "noise"),
        (lambda: data.circles(factor=1.5), "factor"),
        (lambda: data.spirals(n_classes=1), "n_classes"),
        (lambda: data.load("mnist"), "unknown dataset"),
    ],
)
def test_bad_arguments_are_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_digits_from_sklearn():
    pytest.importorskip("sklearn")
    X, y = data.digits()
    assert X.shape == (1797, 64) and X.dtype == np.float64
    assert y.dtype == np.int64 and set(y.tolist()) == set(range(10))


def test_digits_without_sklearn_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # makes "import sklearn..." fail
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'taugrad\[datasets\]'"):
        data.digits()


# --- train_test_split -------------------------------------------------------


def test_split_is_a_stratified_partition():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), [50, 30, 20])
    X = np.arange(len(y) * 2).reshape(-1, 2).astype(float)
    X_train, X_test, y_train, y_test = data.train_test_split(X, y, test_size=0.25, seed=rng.integers(1000))
    assert len(X_test) == 25 and len(X_train) == 75
    counts = np.bincount(y_test)
    assert counts.sum() == 25 and counts[2] == 5
    assert np.all(np.abs(counts - np.array([12.5, 7.5, 5.0])) < 1)  # proportional, rounded to total 25
    rows = np.concatenate([X_train[:, 0], X_test[:, 0]]) // 2
    np.testing.assert_array_equal(np.sort(rows), np.arange(len(y)))  # a partition of the rows
    np.testing.assert_array_equal(y[(X_test[:, 0] // 2).astype(int)], y_test)  # labels follow their rows


def test_split_is_seeded():
    X, y = data.moons(60, seed=0)
    a = data.train_test_split(X, y, seed=5)
    b = data.train_test_split(X, y, seed=5)
    for left, right in zip(a, b):
        np.testing.assert_array_equal(left, right)


def test_split_rejects_bad_sizes():
    X, y = data.moons(10, seed=0)
    with pytest.raises(ValueError, match="test_size"):
        data.train_test_split(X, y, test_size=1.5)
    with pytest.raises(ValueError, match="same number of rows"):
        data.train_test_split(X[:5], y)


# --- DataLoader ---------------------------------------------------------------


@pytest.mark.parametrize("n, batch_size", [(10, 3), (12, 4), (1, 5), (7, 1)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_sample_exactly_once_per_epoch(n, batch_size, shuffle):
    X = np.arange(n, dtype=np.float64).reshape(n, 1) * np.ones((1, 2))
    y = np.arange(n)
    loader = data.DataLoader((X, y), batch_size=batch_size, shuffle=shuffle, seed=0)
    assert len(loader) == -(-n // batch_size)
    for _ in range(3):
        seen = []
        batches = list(loader)
        assert len(batches) == len(loader)
        for xb, yb in batches:
            assert len(xb) == len(yb) <= batch_size
            np.testing.assert_array_equal(xb[:, 0], yb)  # rows stay paired
            seen.extend(yb.tolist())
        assert sorted(seen) == list(range(n))
        if not shuffle:
            assert seen == list(range(n))


def test_drop_last_drops_only_the_short_batch():
    loader = data.DataLoader((np.arange(10),), batch_size=4, drop_last=True, shuffle=True, seed=1)
    assert len(loader) == 2
    batches = [b for (b,) in loader]
    assert [len(b) for b in batches] == [4, 4]
    assert len(set(np.concatenate(batches).tolist())) == 8


def test_seeded_shuffles_are_reproducible_and_epochs_differ():
    X = np.arange(50)
    orders = []
    for _ in range(2):
        loader = data.DataLoader((X,), batch_size=50, shuffle=True, seed=7)
        orders.append([next(iter(loader))[0].tolist() for _ in range(3)])
    assert orders[0] == orders[1]
    assert orders[0][0] != orders[0][1]
    assert orders[0][0] != list(range(50))


def test_map_style_dataset_is_collated():
    class Squares:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.array([i, i * i], dtype=float), i

    batches = list(data.DataLoader(Squares(), batch_size=2))
    assert [len(b[1]) for b in batches] == [2, 2, 1]
    np.testing.assert_array_equal(batches[1][0], [[2, 4], [3, 9]])
    np.testing.assert_array_equal(batches[2][1], [4])


def test_loader_rejects_bad_input():
    with pytest.raises(ValueError, match="batch_size"):
        data.DataLoader((np.arange(3),), batch_size=0)
    with pytest.raises(ValueError, match="same number of rows"):
        data.DataLoader((np.zeros((3, 2)), np.zeros(4)))
    with pytest.raises(TypeError, match="dataset"):
        data.DataLoader(5)


def test_a_list_is_a_list_of_samples_as_in_pytorch():
    # a list of rows was once read as one field per row: one "batch" of three
    # two-row arrays, silently
    batches = list(data.DataLoader([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], batch_size=2))
    assert len(batches) == 2
    np.testing.assert_array_equal(batches[0], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(batches[1], [[5, 6]])


def test_a_list_of_pairs_and_of_dicts_is_collated_field_by_field():
    pairs = [(np.full(2, i, dtype=float), i) for i in range(3)]
    x, y = next(iter(data.DataLoader(pairs, batch_size=3)))
    np.testing.assert_array_equal(x, [[0, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(y, [0, 1, 2])
    batch = next(iter(data.DataLoader([{"x": 1.0, "y": 2}, {"x": 3.0, "y": 4}], batch_size=2)))
    np.testing.assert_array_equal(batch["x"], [1.0, 3.0])
    np.testing.assert_array_equal(batch["y"], [2, 4])


def test_samples_of_different_shapes_are_a_clear_error():
    with pytest.raises(ValueError, match=r"cannot be stacked into one array \(shapes \[\(1,\), \(2,\)\]\)"):
        list(data.DataLoader([[1.0, 2.0], [3.0]], batch_size=2))

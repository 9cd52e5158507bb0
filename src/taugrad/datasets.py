"""Small datasets, a stratified split and a mini-batch loader.

Generated 2-D sets (:func:`moons`, :func:`circles`, :func:`spirals`,
:func:`blobs`) return ``(X, y)`` with ``X`` a float64 array of shape ``(n, 2)``
and ``y`` an int64 array of class ids ``0 .. k-1``.  They are seedable: the same
``seed`` gives the same points, ``seed=None`` draws fresh randomness.

:func:`digits` loads the 8x8 handwritten digits that scikit-learn ships with its
wheel (an optional extra: ``pip install 'taugrad[datasets]'``).

:func:`train_test_split` keeps the class proportions in both parts, and
:func:`array_loader` makes a :class:`taugrad.utils.data.DataLoader` that yields
shuffled NumPy mini-batches of ``(X, y)`` in which every sample appears exactly
once per epoch, in an order fixed by ``seed``.
"""
from __future__ import annotations

import math
from typing import Any, Iterator, Optional, Sequence, Tuple

import numpy as np

from taugrad.utils.data import DataLoader, Dataset, Sampler

__all__ = [
    "moons",
    "circles",
    "spirals",
    "blobs",
    "digits",
    "load",
    "DATASETS",
    "train_test_split",
    "array_loader",
]

Arrays = Tuple[np.ndarray, np.ndarray]


# ---------------------------------------------------------------------------
# generated 2-D datasets
# ---------------------------------------------------------------------------


def _check_n_samples(n_samples: Any, minimum: int = 2) -> int:
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
        raise TypeError(f"n_samples must be an integer, got {type(n_samples).__name__}")
    if n_samples < minimum:
        raise ValueError(f"n_samples must be at least {minimum}, got {n_samples}")
    return int(n_samples)


def _check_noise(noise: Any) -> float:
    noise = float(noise)
    if not noise >= 0.0:  # also rejects nan
        raise ValueError(f"noise must be a non-negative number, got {noise}")
    return noise


def _random_state(seed: Any) -> Any:
    """A NumPy random source from ``seed``: an int or None (a new ``Generator``),
    or a ``Generator`` / legacy ``RandomState`` used as it is."""
    if isinstance(seed, (np.random.Generator, np.random.RandomState)):
        return seed
    return np.random.default_rng(seed)


def _shuffle_and_jitter(X: np.ndarray, y: np.ndarray, noise: float, rng: Any) -> Arrays:
    """Shuffle rows (so classes are mixed) then add N(0, noise^2) to every coordinate."""
    order = rng.permutation(len(y))
    X, y = X[order], y[order]
    if noise > 0.0:
        X = X + rng.normal(scale=noise, size=X.shape)
    return np.ascontiguousarray(X, dtype=np.float64), y.astype(np.int64)


def moons(n_samples: int = 100, noise: float = 0.1, seed: Any = None) -> Arrays:
    """Two interleaving half circles (the construction of scikit-learn's ``make_moons``).

    Class 0 is the upper half circle ``(cos t, sin t)``, ``t`` evenly spaced in
    ``[0, pi]`` (``n_samples // 2`` points); class 1 is the lower one
    ``(1 - cos t, 0.5 - sin t)`` with the remaining points.  Rows are shuffled,
    then Gaussian noise of standard deviation ``noise`` is added to each coordinate.
    ``seed``: an int or None, or a NumPy ``Generator``/``RandomState`` to draw from
    (with ``RandomState(s)`` the points equal ``make_moons`` after ``np.random.seed(s)``).
    """
    n_samples = _check_n_samples(n_samples)
    noise = _check_noise(noise)
    rng = _random_state(seed)
    n_upper = n_samples // 2
    n_lower = n_samples - n_upper
    t_upper = np.linspace(0.0, np.pi, n_upper)
    t_lower = np.linspace(0.0, np.pi, n_lower)
    upper = np.stack([np.cos(t_upper), np.sin(t_upper)], axis=1)
    # written 1 - sin t - 0.5 (not 0.5 - sin t) to round exactly as make_moons does
    lower = np.stack([1.0 - np.cos(t_lower), 1.0 - np.sin(t_lower) - 0.5], axis=1)
    X = np.concatenate([upper, lower])
    y = np.concatenate([np.zeros(n_upper, np.int64), np.ones(n_lower, np.int64)])
    return _shuffle_and_jitter(X, y, noise, rng)


def circles(
    n_samples: int = 100, noise: float = 0.05, factor: float = 0.5, seed: Optional[int] = None
) -> Arrays:
    """A circle of radius 1 (class 0) around a circle of radius ``factor`` (class 1).

    Angles are evenly spaced in ``[0, 2 pi)`` (as scikit-learn's ``make_circles``);
    rows are shuffled, then Gaussian noise of standard deviation ``noise`` is added.
    """
    n_samples = _check_n_samples(n_samples)
    noise = _check_noise(noise)
    factor = float(factor)
    if not 0.0 < factor < 1.0:
        raise ValueError(f"factor must be in (0, 1), got {factor}")
    rng = np.random.default_rng(seed)
    n_outer = n_samples // 2
    n_inner = n_samples - n_outer
    t_outer = np.linspace(0.0, 2.0 * np.pi, n_outer, endpoint=False)
    t_inner = np.linspace(0.0, 2.0 * np.pi, n_inner, endpoint=False)
    outer = np.stack([np.cos(t_outer), np.sin(t_outer)], axis=1)
    inner = factor * np.stack([np.cos(t_inner), np.sin(t_inner)], axis=1)
    X = np.concatenate([outer, inner])
    y = np.concatenate([np.zeros(n_outer, np.int64), np.ones(n_inner, np.int64)])
    return _shuffle_and_jitter(X, y, noise, rng)


def spirals(
    n_samples: int = 100,
    n_classes: int = 2,
    noise: float = 0.05,
    turns: float = 1.0,
    seed: Optional[int] = None,
) -> Arrays:
    """``n_classes`` interleaved spiral arms (the classic CS231n toy problem).

    Arm ``k`` holds points at radius ``r`` evenly spaced in ``[0.05, 1]`` and angle
    ``2 pi (turns r + k / n_classes)``, so arms are rotated copies of one another.
    Samples are split between arms as evenly as possible; rows are shuffled, then
    Gaussian noise of standard deviation ``noise`` is added to each coordinate.
    """
    n_samples = _check_n_samples(n_samples)
    noise = _check_noise(noise)
    n_classes = int(n_classes)
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2, got {n_classes}")
    if n_samples < n_classes:
        raise ValueError(f"n_samples ({n_samples}) must be at least n_classes ({n_classes})")
    rng = np.random.default_rng(seed)
    sizes = [n_samples // n_classes + (k < n_samples % n_classes) for k in range(n_classes)]
    points, labels = [], []
    for k, size in enumerate(sizes):
        radius = np.linspace(0.05, 1.0, size)
        angle = 2.0 * np.pi * (turns * radius + k / n_classes)
        points.append(np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1))
        labels.append(np.full(size, k, np.int64))
    return _shuffle_and_jitter(np.concatenate(points), np.concatenate(labels), noise, rng)


def blobs(
    n_samples: int = 100,
    centers: int = 3,
    cluster_std: float = 1.0,
    box: float = 10.0,
    seed: Optional[int] = None,
) -> Arrays:
    """Isotropic Gaussian blobs: class ``k`` is ``N(c_k, cluster_std^2 I)``.

    The ``centers`` points ``c_k`` are drawn uniformly from the square
    ``[-box, box]^2`` (as scikit-learn's ``make_blobs``); samples are split between
    classes as evenly as possible and the rows are shuffled.
    """
    n_samples = _check_n_samples(n_samples)
    cluster_std = _check_noise(cluster_std)
    n_centers = int(centers)
    if n_centers < 1:
        raise ValueError(f"centers must be at least 1, got {centers}")
    if n_samples < n_centers:
        raise ValueError(f"n_samples ({n_samples}) must be at least centers ({n_centers})")
    rng = np.random.default_rng(seed)
    middle = rng.uniform(-box, box, size=(n_centers, 2))
    sizes = [n_samples // n_centers + (k < n_samples % n_centers) for k in range(n_centers)]
    y = np.repeat(np.arange(n_centers, dtype=np.int64), sizes)
    return _shuffle_and_jitter(middle[y], y, cluster_std, rng)


# ---------------------------------------------------------------------------
# digits (optional extra)
# ---------------------------------------------------------------------------

DIGITS_EXTRA_HINT = "pip install 'taugrad[datasets]'"


def digits() -> Arrays:
    """The 1797 8x8 handwritten digits bundled with scikit-learn.

    Returns ``X`` float64 of shape ``(1797, 64)`` (pixel intensities 0..16, not
    rescaled) and ``y`` int64 digit labels 0..9.  Needs scikit-learn; without it
    this raises ``ModuleNotFoundError`` naming the extra to install.
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:  # ModuleNotFoundError or a broken install
        raise ModuleNotFoundError(
            f"the digits dataset needs scikit-learn: {DIGITS_EXTRA_HINT}"
        ) from err
    bunch = load_digits()
    return np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target, dtype=np.int64)


#: dataset name -> (loader, is it 2-D?); used by ``taugrad train``.
DATASETS = {
    "moons": (moons, True),
    "circles": (circles, True),
    "spirals": (spirals, True),
    "blobs": (blobs, True),
    "digits": (digits, False),
}


def load(name: str, n_samples: Optional[int] = None, noise: Optional[float] = None, seed: Optional[int] = None) -> Arrays:
    """Load a dataset by name (one of :data:`DATASETS`); extra arguments go to generated sets."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")
    loader, two_dimensional = DATASETS[name]
    if not two_dimensional:
        return loader()
    kwargs: dict = {"seed": seed}
    if n_samples is not None:
        kwargs["n_samples"] = n_samples
    if noise is not None:
        kwargs["cluster_std" if name == "blobs" else "noise"] = noise
    return loader(**kwargs)


# ---------------------------------------------------------------------------
# stratified split
# ---------------------------------------------------------------------------


def _largest_remainder(total: int, weights: np.ndarray) -> np.ndarray:
    """Integers proportional to ``weights`` that add up to exactly ``total``."""
    exact = total * weights / weights.sum()
    counts = np.floor(exact).astype(np.int64)
    shortfall = total - counts.sum()
    # the classes that lost the most to rounding down get one more each
    counts[np.argsort(-(exact - counts), kind="stable")[:shortfall]] += 1
    return counts


def train_test_split(
    X: Any, y: Any, test_size: float = 0.25, seed: Optional[int] = None, stratify: bool = True
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split ``(X, y)`` into ``X_train, X_test, y_train, y_test`` (scikit-learn's order).

    The test part has ``ceil(test_size * n)`` rows.  With ``stratify=True`` each
    class contributes to it in proportion to its size (rounded so the total is
    exact), so both parts keep the class balance; within a class the rows are
    chosen at random.  Both parts come back in shuffled order.
    """
    X = np.asarray(X)
    y = np.asarray(y)
    n = len(y)
    if X.ndim == 0 or len(X) != n:
        raise ValueError(f"X and y must have the same number of rows, got {tuple(X.shape)} and {tuple(y.shape)}")
    test_size = float(test_size)
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be in (0, 1), got {test_size}")
    n_test = math.ceil(test_size * n)
    if n_test >= n:
        raise ValueError(f"test_size={test_size} leaves no training rows out of {n}")
    rng = np.random.default_rng(seed)
    if stratify:
        classes, class_of_row, class_sizes = np.unique(y, return_inverse=True, return_counts=True)
        test_counts = _largest_remainder(n_test, class_sizes.astype(np.float64))
        test_rows = []
        for k in range(len(classes)):
            rows = np.flatnonzero(class_of_row == k)
            test_rows.append(rng.permutation(rows)[: test_counts[k]])
        is_test = np.zeros(n, dtype=bool)
        is_test[np.concatenate(test_rows)] = True
    else:
        is_test = np.zeros(n, dtype=bool)
        is_test[rng.permutation(n)[:n_test]] = True
    train = rng.permutation(np.flatnonzero(~is_test))
    test = rng.permutation(np.flatnonzero(is_test))
    return X[train], X[test], y[train], y[test]


# ---------------------------------------------------------------------------
# mini-batches of arrays
# ---------------------------------------------------------------------------


def array_loader(
    dataset: Any,
    batch_size: int = 1,
    shuffle: bool = False,
    seed: Optional[int] = None,
    drop_last: bool = False,
) -> DataLoader:
    """A :class:`taugrad.utils.data.DataLoader` over arrays, yielding NumPy batches in a seeded order.

    ``dataset`` is either a *tuple* of arrays (or Tensors) with the same first
    dimension, e.g. ``(X, y)``, whose batches are the same kind of object indexed
    by a block of row numbers; or any object with ``__len__`` and ``__getitem__``
    -- a list of samples too, as in PyTorch -- returning a sample (an array, a
    list of numbers, a tuple of fields or a dict), whose samples are stacked
    into NumPy arrays.

    Every epoch visits every sample exactly once: with ``shuffle=True`` in the
    order of a fresh random permutation (from a NumPy generator seeded once with
    ``seed``, so a run is reproducible and successive epochs differ), otherwise in
    order.  The last, smaller batch is dropped when ``drop_last=True``.  The
    loader's sampler yields whole blocks of rows (``batch_size=None`` in PyTorch's
    terms), so a tuple of arrays is sliced once per batch, not row by row.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if isinstance(dataset, tuple):  # fields sharing rows; a list is a list of samples
        if not dataset:
            raise ValueError("dataset must hold at least one array")
        lengths = {len(field) for field in dataset}
        if len(lengths) != 1:
            shapes = ", ".join(str(tuple(getattr(f, "shape", (len(f),)))) for f in dataset)
            raise ValueError(f"dataset arrays must have the same number of rows, got {shapes}")
        rows: Dataset = _Fields(tuple(_as_indexable(field) for field in dataset))
    elif hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__"):
        rows = _Samples(dataset)
    else:
        raise TypeError(
            "dataset must be a tuple of arrays such as (X, y) or an object with __len__ and __getitem__"
        )
    blocks = _RowBlocks(len(rows), int(batch_size), bool(shuffle), seed, bool(drop_last))
    return DataLoader(rows, batch_size=None, sampler=blocks, collate_fn=_as_is)


class _RowBlocks(Sampler):
    """Blocks of row numbers, one per batch: a fresh permutation each epoch from one seeded generator."""

    def __init__(self, n: int, batch_size: int, shuffle: bool, seed: Optional[int], drop_last: bool) -> None:
        self.n, self.batch_size, self.shuffle, self.drop_last = n, batch_size, shuffle, drop_last
        self._rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        """Number of batches per epoch."""
        if self.drop_last:
            return self.n // self.batch_size
        return -(-self.n // self.batch_size)

    def __iter__(self) -> Iterator[np.ndarray]:
        order = self._rng.permutation(self.n) if self.shuffle else np.arange(self.n)
        for batch in range(len(self)):
            yield order[batch * self.batch_size : (batch + 1) * self.batch_size]


class _Fields(Dataset):
    """A tuple of arrays sharing rows, indexed by a block of rows at once."""

    def __init__(self, fields: tuple) -> None:
        self.fields = fields

    def __len__(self) -> int:
        return len(self.fields[0])

    def __getitem__(self, rows: np.ndarray) -> tuple:
        return tuple(_take(field, rows) for field in self.fields)


class _Samples(Dataset):
    """Any dataset, indexed by a block of rows: its samples fetched one by one and stacked."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, rows: np.ndarray) -> Any:
        return _stack([self.dataset[int(i)] for i in rows])


def _as_is(batch: Any) -> Any:
    """The collate step of :func:`array_loader`: a block of rows is already a batch."""
    return batch


def _stack(items: Sequence[Any]) -> Any:
    """Collate samples fetched one by one: tuples field by field, dicts key by key, the rest stacked.

    A sample that is a list of numbers is one array row (``[x1, x2]`` gives a
    batch of shape (n, 2)), not one field per position.
    """
    first = items[0]
    if isinstance(first, tuple):
        return tuple(_stack([item[i] for item in items]) for i in range(len(first)))
    if isinstance(first, dict):
        return {key: _stack([item[key] for item in items]) for key in first}
    arrays = [np.asarray(item) for item in items]
    shapes = {array.shape for array in arrays}
    if len(shapes) > 1 or arrays[0].dtype == object:
        raise ValueError(f"DataLoader: the samples of a batch cannot be stacked into one array "
                         f"(shapes {sorted(shapes)}); return a tuple of fields such as (x, label)")
    return np.stack(arrays)


def _as_indexable(field: Any) -> Any:
    """Keep Tensors as they are; make the rest arrays."""
    if isinstance(field, np.ndarray) or isinstance(getattr(field, "_data", None), np.ndarray):
        return field
    return np.asarray(field)


def _take(field: Any, rows: np.ndarray) -> Any:
    if isinstance(field, np.ndarray):
        return field[rows]
    return type(field)(field._data[rows])  # a Tensor: a new leaf holding the rows

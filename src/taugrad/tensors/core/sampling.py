"""Drawing arrays of random numbers from a NumPy generator, with PyTorch's argument checks.

The random ops (creation functions, ``multinomial``, in-place fills) call
these with the generator :func:`taugrad.tensors.core.generator.get_generator`
chose; each returns a new array of the dtype asked for.  The errors are the
ones PyTorch raises (``RuntimeError`` for a bad distribution parameter), on
one line naming the op.
"""
from __future__ import annotations

import operator

import numpy as np

#: floating dtypes NumPy draws directly; others are drawn in float32 and rounded
_DRAWN = (np.dtype(np.float32), np.dtype(np.float64))


def check_floating(dtype, op: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating dtype, got {dtype}")
    return dtype


def _draw_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if dtype in _DRAWN else np.dtype(np.float32)


def standard_normal(rng, shape: tuple, dtype, op: str) -> np.ndarray:
    """Samples of N(0, 1)."""
    dtype = check_floating(dtype, op)
    return rng.standard_normal(shape, dtype=_draw_dtype(dtype)).astype(dtype, copy=False)


def uniform01(rng, shape: tuple, dtype, op: str) -> np.ndarray:
    """Samples of U[0, 1)."""
    dtype = check_floating(dtype, op)
    return rng.random(shape, dtype=_draw_dtype(dtype)).astype(dtype, copy=False)


def normal(rng, mean, std, shape: tuple, dtype, op: str) -> np.ndarray:
    """Samples of N(mean, std^2); ``mean`` and ``std`` are numbers or arrays broadcasting to ``shape``."""
    if np.any(np.asarray(std) < 0):
        bad = np.min(std)
        raise RuntimeError(f"{op}: expects std >= 0.0, but found std {bad:g}")
    z = standard_normal(rng, shape, dtype, op)
    return (mean + std * z).astype(dtype, copy=False)


def uniform(rng, low: float, high: float, shape: tuple, dtype, op: str) -> np.ndarray:
    """Samples of U[low, high)."""
    if low > high:
        raise RuntimeError(f"{op}: expects to return a [from, to) range, but found from={low:g} > to={high:g}")
    u = uniform01(rng, shape, dtype, op)
    return (low + (high - low) * u).astype(dtype, copy=False)


def exponential(rng, lambd: float, shape: tuple, dtype, op: str) -> np.ndarray:
    """Samples of the exponential distribution with rate ``lambd`` (mean 1/lambd)."""
    if not lambd > 0:
        raise RuntimeError(f"{op}: expects lambda > 0.0, but found lambda={lambd:g}")
    dtype = check_floating(dtype, op)
    return (rng.standard_exponential(shape, dtype=_draw_dtype(dtype)) / lambd).astype(dtype, copy=False)


def integers(rng, low: int, high: int, shape: tuple, dtype, op: str) -> np.ndarray:
    """Integers drawn uniformly from [low, high), stored as ``dtype``."""
    if not low < high:
        raise RuntimeError(f"{op}: expects 'from' to be less than 'to', but got from={low} >= to={high}")
    drawn = np.uint64 if high > 2 ** 63 else np.int64  # uint64's full range does not fit int64
    return rng.integers(low, high, size=shape, dtype=drawn).astype(dtype, copy=False)


def full_range_high(dtype) -> int:
    """One past the largest value ``random_()`` draws for ``dtype``.

    As PyTorch: floats get the integers a float of that precision holds exactly,
    [0, 2**mantissa]; integer dtypes [0, max]; bool {0, 1}.
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return 2 ** (np.finfo(dtype).nmant + 1) + 1
    if dtype.kind == "b":
        return 2
    return int(np.iinfo(dtype).max) + 1


def bernoulli(rng, p, shape: tuple, dtype, op: str) -> np.ndarray:
    """1 with probability ``p`` (a number or an array broadcasting to ``shape``), else 0."""
    p_array = np.asarray(p)
    if p_array.dtype.kind not in "fiub":
        raise TypeError(f"{op}: probabilities must be numbers, got dtype {p_array.dtype}")
    if not np.all((p_array >= 0) & (p_array <= 1)):
        raise RuntimeError(f"{op}: expects p to be in [0, 1]")
    return (rng.random(shape) < p_array).astype(dtype)


def poisson(rng, rates: np.ndarray, op: str) -> np.ndarray:
    """Counts drawn from Poisson(rate) for each rate, in the rates' (floating) dtype."""
    check_floating(rates.dtype, op)
    if not np.all(rates >= 0):
        raise RuntimeError(f"{op}: invalid Poisson rate, expected rate to be non-negative")
    return rng.poisson(rates).astype(rates.dtype)


def _check_weights(weights: np.ndarray, num_samples: int, replacement: bool, op: str) -> None:
    if weights.dtype.kind != "f":
        raise RuntimeError(f"{op}: only floating-point weights are supported, got dtype {weights.dtype}")
    if weights.ndim not in (1, 2):
        raise RuntimeError(f"{op}: weights must be 1-D or 2-D, got shape {tuple(weights.shape)}")
    if num_samples <= 0:
        raise RuntimeError(f"{op}: cannot sample n_sample <= 0 samples (num_samples={num_samples})")
    if not replacement and num_samples > weights.shape[-1]:
        raise RuntimeError(f"{op}: cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"({num_samples} > {weights.shape[-1]})")
    if not np.all(np.isfinite(weights) & (weights >= 0)):
        raise RuntimeError(f"{op}: probability tensor contains either `inf`, `nan` or element < 0")
    if not np.all(weights.sum(axis=-1) > 0):
        raise RuntimeError(f"{op}: invalid multinomial distribution (sum of probabilities <= 0)")


def _with_replacement(rng, row: np.ndarray, num_samples: int) -> np.ndarray:
    """Inverse-CDF sampling: category i is drawn when u*total falls in [cdf[i-1], cdf[i])."""
    cdf = np.cumsum(row, dtype=np.float64)
    u = rng.random(num_samples) * cdf[-1]
    picks = np.searchsorted(cdf, u, side="right")
    return np.minimum(picks, np.flatnonzero(row > 0)[-1])  # u*total rounded up to total: the last positive


def _without_replacement(rng, weights: np.ndarray, num_samples: int) -> np.ndarray:
    """Exponential races: E_i / w_i with E_i ~ Exp(1); the smallest k keys are k draws without replacement,
    in the order sequential sampling (each draw proportional to the remaining weights) would give.
    Zero weights get infinite keys and come last, in index order, as PyTorch gives them."""
    with np.errstate(divide="ignore"):
        keys = rng.standard_exponential(weights.shape) / weights.astype(np.float64)
    return np.argsort(keys, axis=-1, kind="stable")[..., :num_samples]


def multinomial(rng, weights: np.ndarray, num_samples, replacement: bool, op: str = "multinomial") -> np.ndarray:
    """Indices of categories drawn with probability proportional to ``weights`` (per row if 2-D), int64."""
    try:
        num_samples = operator.index(num_samples)
    except TypeError:
        raise TypeError(f"{op}: num_samples must be an int, got {num_samples!r}") from None
    _check_weights(weights, num_samples, replacement, op)
    if not replacement:
        return _without_replacement(rng, weights, num_samples).astype(np.int64)
    rows = weights.reshape(-1, weights.shape[-1])
    out = np.stack([_with_replacement(rng, row, num_samples) for row in rows])
    return out.reshape(weights.shape[:-1] + (num_samples,)).astype(np.int64)

"""Argument helpers shared by Tensor and its ops: dims, PyTorch/NumPy aliases, shape errors."""
from __future__ import annotations

import operator


def normalize_dim(dim, ndim: int, op: str) -> int:
    """A dimension index in ``range(ndim)``; negative counts from the end."""
    try:
        d = operator.index(dim)  # ints and NumPy ints only: a float dim (inf, 1.5) is a mistake
    except TypeError:
        raise TypeError(f"{op}: dim must be an int, got {dim!r}") from None
    if not -ndim <= d < ndim:
        if ndim == 0 and d in (0, -1):
            raise IndexError(f"{op}: dim {dim} out of range for a 0-d tensor")
        raise IndexError(f"{op}: dim {dim} out of range for a tensor with {ndim} dimension(s)")
    return d + ndim if d < 0 else d


def normalize_dims(dim, ndim: int, op: str):
    """Reduction axes as a sorted tuple, or None for "all axes".

    Accepts an int or a tuple/list of ints, negative ones counting from the end.
    A 0-d tensor accepts dim 0 or -1 (as in PyTorch) and reduces nothing.
    """
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        dims = dim
    else:
        dims = (dim,)
    if ndim == 0:
        for d in dims:
            if d not in (0, -1):
                raise IndexError(f"{op}: dim {d} out of range for a 0-d tensor")
        return ()
    out = tuple(sorted(normalize_dim(d, ndim, op) for d in dims))
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: dim {tuple(dims)} repeats a dimension")
    return out


def pick(primary, alias, default, name_primary: str, name_alias: str, op: str):
    """Resolve a PyTorch argument and its NumPy alias (``dim``/``axis``)."""
    if alias is None:
        return default if primary is None else primary
    if primary is not None and primary is not default:
        raise TypeError(f"{op}: pass either {name_primary} or {name_alias}, not both")
    return alias


def broadcast_error(op: str, a, b) -> ValueError:
    return ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot broadcast")


def tuple_of(value, n: int, name: str, op: str, minimum: int = 0) -> tuple:
    """``value`` (an int or a sequence of ``n`` ints) as an ``n``-tuple of ints >= ``minimum``."""
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{op}: {name} must be an int or {n} ints, got {tuple(value)}")
        items = value
    else:
        items = (value,) * n
    try:
        out = tuple(operator.index(v) for v in items)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int or {n} ints, got {value!r}") from None
    if any(v < minimum for v in out):
        raise ValueError(f"{op}: {name} must be >= {minimum}, got {value!r}")
    return out


def integer_scalar(value, *arrays):
    """A scalar that takes no part in type promotion, as PyTorch applies it to integer arrays.

    ``addcmul``'s ``value`` and ``index_add``'s ``alpha`` are cast to the
    result's type: on integer arrays a float is truncated (``2.7`` scales by 2).
    """
    if isinstance(value, float) and all(a.dtype.kind in "iu" for a in arrays):
        return int(value)
    return value

"""``taugrad.preserve_format``, ``contiguous_format``, ``channels_last``: the memory formats torch names.

Code written for torch passes them to ``zeros_like(p, memory_format=...)``,
``contiguous(memory_format=...)`` and ``to(memory_format=...)``.  taugrad
keeps every tensor it makes in a dense layout chosen by NumPy (the default:
C order), so the formats are accepted and change no value; they exist so
that such code runs.
"""
from __future__ import annotations

__all__ = ["memory_format", "preserve_format", "contiguous_format", "channels_last", "channels_last_3d"]


class memory_format:  # noqa: N801  (named as torch.memory_format)
    """One named memory format; printed as torch prints it (``torch.preserve_format``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"taugrad.{self.name}"

    def __reduce__(self):
        return self.name  # pickled by name: the module-level instance comes back


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def dense_order(shape, strides, itemsize: int = 1):
    """The axes of a dense array from the outermost in memory to the innermost, or None if it has gaps.

    A layout made by permuting the axes of a row-major array (a transpose, a
    channels-last or batch-last image) is dense: sorted by stride, each axis
    steps over exactly the axes inside it.  Size-1 axes step over nothing, so
    they may sit anywhere.  ``strides`` in the unit of ``itemsize`` (NumPy's bytes, or elements with 1).
    """
    order = sorted(range(len(shape)), key=lambda i: (-strides[i], i))
    step = itemsize
    for axis in reversed(order):
        if shape[axis] == 1:
            continue
        if strides[axis] != step:
            return None
        step *= shape[axis]
    return tuple(order)


#: the dims from the innermost in memory outwards, per format and rank, as torch checks them
_INNER_FIRST = {("channels_last", 4): (1, 3, 2, 0), ("channels_last_3d", 5): (1, 4, 3, 2, 0)}


def format_order(fmt, ndim: int, op: str = "memory_format"):
    """The axes from the outermost in memory inwards that ``fmt`` lays out a tensor of ``ndim`` dims in.

    ``contiguous_format``: row-major; ``channels_last``: (N, H, W, C) memory of
    an (N, C, H, W) tensor; ``channels_last_3d``: (N, D, H, W, C) of (N, C, D, H, W).
    """
    if fmt is None or fmt is contiguous_format:
        return tuple(range(ndim))
    if fmt is channels_last or fmt is channels_last_3d:
        inner = _INNER_FIRST.get((fmt.name, ndim))
        if inner is None:
            raise RuntimeError(f"{op}: required rank {4 if fmt is channels_last else 5} tensor to use "
                               f"{fmt.name} format, got {ndim} dims")
        return tuple(reversed(inner))
    raise RuntimeError(f"{op}: memory format {fmt!r} is not supported here (contiguous_format, channels_last "
                       "or channels_last_3d)")


def is_laid_out(shape, strides, order) -> bool:
    """Whether ``strides`` (in elements) are dense in ``order`` (outermost first), size-1 dims not counted, as torch."""
    step = 1
    for axis in reversed(order):
        if shape[axis] != 1:
            if strides[axis] != step:
                return False
            step *= shape[axis]
    return True

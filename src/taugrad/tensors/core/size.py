"""``taugrad.Size``: a tensor's shape, a tuple of ints that prints as PyTorch's ``torch.Size`` does.

``x.shape`` and ``x.size()`` return one: ``taugrad.Size([32, 27])``, equal to
the tuple ``(32, 27)``, with ``numel()``; slicing it or joining it with a
tuple gives a Size again, as in torch.
"""
from __future__ import annotations

import operator
from typing import Any, Iterable

__all__ = ["Size"]


class Size(tuple):
    """A shape: ``Size([2, 3]) == (2, 3)``, ``Size([2, 3]).numel() == 6``."""

    __slots__ = ()

    def __new__(cls, sizes: Iterable[Any] = ()) -> "Size":
        items = tuple(sizes)
        for i, n in enumerate(items):
            if type(n) is not int:
                try:
                    items = items[:i] + (operator.index(n),) + items[i + 1:]
                except TypeError:
                    raise TypeError(f"taugrad.Size() takes an iterable of 'int' (item {i} is "
                                    f"'{type(n).__name__}')") from None
        return tuple.__new__(cls, items)

    def __repr__(self) -> str:
        return f"taugrad.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds (1 for ``Size([])``)."""
        total = 1
        for n in self:
            total *= n
        return total

    def __getitem__(self, index: Any) -> Any:
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other: Any) -> "Size":
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: Any) -> "Size":
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, times: Any) -> "Size":
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))

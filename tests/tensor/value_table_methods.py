"""Value-table rows (no gradients) for torch ``Tensor`` methods that make or count:
``new_*``, ``nonzero``, ``count_nonzero``, ``floor_divide``, ``is_contiguous``.

Same row format as ``value_table.py`` (which appends these to its ``VALUE_OPS``):
``fn(L, x, y)`` on two float64 (3, 4) tensors (``y`` has no zeros), compared with torch exactly.
"""
from __future__ import annotations

import numpy as np

from .helpers import ValueOp


def _ints(L, x):
    """Small ints -3..3 (int64), some zero, in both libraries."""
    return (x * 4).long()


METHOD_VALUE_OPS = [
    ValueOp("new_zeros", lambda L, x, y: x.new_zeros(2, 3)),
    ValueOp("new_zeros_dtype", lambda L, x, y: x.new_zeros((2,), dtype=L.int32)),
    ValueOp("new_ones", lambda L, x, y: _ints(L, x).new_ones((3, 1))),
    ValueOp("new_full", lambda L, x, y: x.new_full((2, 2), 7)),
    ValueOp("new_full_int", lambda L, x, y: _ints(L, x).new_full((2,), 3)),
    ValueOp("new_empty", lambda L, x, y: x.new_empty(2, 5).fill_(0.5)),
    ValueOp("new_tensor", lambda L, x, y: x.new_tensor([[1, 2], [3, 4]])),
    ValueOp("new_tensor_int", lambda L, x, y: _ints(L, x).new_tensor([1.75, -2.5])),
    ValueOp("floor_divide", lambda L, x, y: x.floor_divide(y) + (x * 3) // 0.5),
    ValueOp("floor_divide_int", lambda L, x, y: _ints(L, x) // 2 + _ints(L, x).floor_divide(_ints(L, y) + 9)),
    ValueOp("remainder_int", lambda L, x, y: _ints(L, x) % 3 + _ints(L, x).remainder(-2)),
    ValueOp("fmod_int", lambda L, x, y: _ints(L, x).fmod(3) + _ints(L, x).fmod(_ints(L, y) + 9)),
    ValueOp("nonzero", lambda L, x, y: _ints(L, x).nonzero()),
    ValueOp("nonzero_as_tuple", lambda L, x, y: L.stack(_ints(L, x).nonzero(as_tuple=True))),
    ValueOp("count_nonzero", lambda L, x, y: _ints(L, x).count_nonzero(dim=1)),
    ValueOp("count_nonzero_all", lambda L, x, y: _ints(L, x).count_nonzero() + _ints(L, x).count_nonzero((0, 1))),
    ValueOp("is_contiguous", lambda L, x, y: L.tensor(np.array([x.is_contiguous(), x.contiguous().is_contiguous()]))),
]
METHOD_VALUE_OPS += [
    # in-place rounding: the values (the gradient, 0, is checked in tests/test_api_gaps2.py)
    ValueOp("floor_", lambda L, x, y: (x * 3).floor_()),
    ValueOp("round_", lambda L, x, y: (x * 3).round_() + (x * 3).round_(decimals=1)),
    # the comparison functions with torch's long names
    ValueOp("lt_less", lambda L, x, y: L.stack([L.less(x, y), x.less(0.5), L.lt(x, 0.0)])),
    ValueOp("le_less_equal", lambda L, x, y: L.stack([L.less_equal(x, y), x.less_equal(0.5), L.le(x, y)])),
    ValueOp("gt_greater", lambda L, x, y: L.stack([L.greater(x, y), x.greater(0.5), L.gt(x, 0.0)])),
    ValueOp("ge_greater_equal", lambda L, x, y: L.stack([L.greater_equal(x, y), x.greater_equal(0.5), L.ge(x, y)])),
    ValueOp("eq_function", lambda L, x, y: L.stack([L.eq(x, x.clamp(max=0.0)), L.eq(x, 0.0)])),
    ValueOp("ne_not_equal", lambda L, x, y: L.stack([L.not_equal(x, x.clamp(max=0.0)), L.ne(x, y),
                                                    x.not_equal(0.0)])),
    ValueOp("argwhere", lambda L, x, y: L.cat([L.argwhere(_ints(L, x)), _ints(L, y).argwhere()])),
    ValueOp("isin", lambda L, x, y: L.stack([L.isin(_ints(L, x), _ints(L, y)), L.isin(_ints(L, x), 1, invert=True)])),
    ValueOp("searchsorted", lambda L, x, y: L.stack([L.searchsorted(x.flatten().sort()[0], y, right=r)
                                                     for r in (False, True)])),
    ValueOp("bucketize", lambda L, x, y: L.bucketize(_ints(L, y), L.tensor([-2, 0, 0, 3]), right=True)),
]

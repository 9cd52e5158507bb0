"""Value-table rows (no gradients) for sorting, counting and testing values.

Same row format as ``value_table.py`` (which appends these to its
``VALUE_OPS``): ``fn(L, x, y)`` on two float64 (3, 4) tensors, compared with
torch exactly.  Bools and tuples are turned into one tensor here.
"""
from __future__ import annotations

import numpy as np

from .helpers import ValueOp


def _special(L, x):
    """x with a nan, an inf and a -inf in it."""
    values = np.asarray(x.detach()).copy()
    values[0, 0], values[1, 1], values[2, 2] = np.nan, np.inf, -np.inf
    return L.tensor(values)


def _small_ints(x):
    """Ints 0..3 in both libraries, without a dtype conversion: where each element sorts in its row."""
    return x.argsort(dim=1)


API_VALUE_OPS = [
    ValueOp("argsort", lambda L, x, y: x.argsort(dim=0, descending=True)),
    ValueOp("argsort_fn", lambda L, x, y: L.argsort(L.cat([x, x]), dim=0, stable=True)),
    ValueOp("argsort_nan", lambda L, x, y: _special(L, x).argsort(dim=1)),
    ValueOp("sort_indices", lambda L, x, y: L.sort(L.cat([x, x, x]), dim=0, stable=True).indices),
    ValueOp("sort_descending_ties", lambda L, x, y: (x > 0).float().sort(dim=1, descending=True, stable=True)[1]),
    ValueOp("sort_nan", lambda L, x, y: _special(L, x).sort(dim=0, descending=True).values),
    ValueOp("topk_indices", lambda L, x, y: x.topk(3, dim=1).indices),
    ValueOp("argmax_keepdim", lambda L, x, y: L.argmax(x, dim=0, keepdim=True)),
    ValueOp("argmax_all_keepdim", lambda L, x, y: x.argmax(keepdim=True)),
    ValueOp("argmin_keepdim", lambda L, x, y: x.argmin(1, True)),
    ValueOp("unique", lambda L, x, y: L.unique((x > 0).float() + (y > 0).float())),
    ValueOp("unique_inverse", lambda L, x, y: (x > 0).float().unique(return_inverse=True)[1]),
    ValueOp("unique_counts", lambda L, x, y: L.unique(_small_ints(x), return_counts=True)[1]),
    ValueOp("unique_dim", lambda L, x, y: L.unique(L.cat([x, x[:1]]), dim=0)),
    ValueOp("unique_dim_inverse", lambda L, x, y: L.unique(L.cat([x, x[:1]]), dim=0, return_inverse=True)[1]),
    ValueOp("bincount", lambda L, x, y: L.bincount(_small_ints(x).flatten())),
    ValueOp("bincount_minlength", lambda L, x, y: _small_ints(x).flatten().bincount(minlength=7)),
    ValueOp("bincount_weights", lambda L, x, y: L.bincount(_small_ints(x).flatten(), weights=y.flatten())),
    ValueOp("histc", lambda L, x, y: x.histc(bins=5, min=-1, max=1)),
    ValueOp("histc_data_range", lambda L, x, y: L.histc(y, bins=7)),
    ValueOp("histc_float32", lambda L, x, y: L.histc(x.float(), bins=4, min=-0.5, max=0.5)),
    ValueOp("histogram", lambda L, x, y: L.histogram(x, bins=5).hist),
    ValueOp("histogram_edges", lambda L, x, y: x.histogram(6, range=(-1.0, 1.0)).bin_edges),
    ValueOp("histogram_weight_density", lambda L, x, y: L.histogram(
        x, bins=4, weight=y.abs(), density=True).hist),
    ValueOp("histogram_given_edges", lambda L, x, y: L.histogram(x, bins=L.tensor([-1.0, -0.2, 0.0, 0.9])).hist),
    ValueOp("isnan", lambda L, x, y: L.isnan(_special(L, x))),
    ValueOp("isinf", lambda L, x, y: _special(L, x).isinf()),
    ValueOp("isfinite", lambda L, x, y: L.isfinite(_special(L, x))),
    ValueOp("isposinf", lambda L, x, y: L.isposinf(_special(L, x))),
    ValueOp("signbit", lambda L, x, y: L.signbit(_special(L, x)) | (-x).signbit()),
    ValueOp("isneginf", lambda L, x, y: _special(L, x).isneginf()),
    ValueOp("isclose", lambda L, x, y: L.isclose(x, x + y * 1e-6, rtol=1e-5, atol=1e-6)),
    ValueOp("isclose_nan", lambda L, x, y: _special(L, x).isclose(_special(L, x), equal_nan=True)),
    ValueOp("allclose", lambda L, x, y: L.tensor(np.array([L.allclose(x, x + 1e-9), x.allclose(y),
                                                         L.allclose(x, x + y * 1e-3, rtol=0.0, atol=1e-2)]))),
    ValueOp("equal", lambda L, x, y: L.tensor(np.array([L.equal(x, x * 1.0), x.equal(y), L.equal(x, x[:2]),
                                                      L.equal(_special(L, x), _special(L, x))]))),
]

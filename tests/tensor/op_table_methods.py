"""Op-table rows for torch ``Tensor`` methods: the fixed-rank products (mm, bmm, mv, dot,
addmm), softmax as a method, type_as, reciprocal, remainder/fmod, nan-skipping reductions,
unflatten, diff and the two-operand functions (lerp, logaddexp, hypot, xlogy).

Same row format and harness as ``op_table.py`` (which appends these rows to its ``OPS``);
the value-only methods (``new_*``, ``nonzero``, ``floor_divide``...) are in
``value_table_methods.py``.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .helpers import (Case, Op, broadcast_pair, dim_of, one_input, reduction, same_shape_pair, shapes,
                      softmax_case)

unary = one_input()
pair = broadcast_pair()
side = st.integers(0, 3)


@st.composite
def mm_case(draw) -> Case:
    n, k, m = draw(side), draw(side), draw(side)
    return Case(((n, k), (k, m)))


@st.composite
def bmm_case(draw) -> Case:
    b, n, k, m = draw(side), draw(side), draw(side), draw(side)
    return Case(((b, n, k), (b, k, m)))


@st.composite
def mv_case(draw) -> Case:
    n, k = draw(side), draw(side)
    return Case(((n, k), (k,)))


@st.composite
def dot_case(draw) -> Case:
    k = draw(side)
    return Case(((k,), (k,)))


@st.composite
def addmm_case(draw) -> Case:
    """input of the product's shape or one that broadcasts to it; alpha and beta."""
    n, k, m = draw(side), draw(side), draw(side)
    bias = draw(st.sampled_from([(n, m), (m,), (1, m), (n, 1), ()]))
    return Case((bias, (n, k), (k, m)), {"beta": draw(st.sampled_from([1, 0.5, -2.0])),
                                         "alpha": draw(st.sampled_from([1, 3.0]))})


@st.composite
def unflatten_case(draw) -> Case:
    """A dim of size a * b split into (a, b), or (a, -1)."""
    shape = list(draw(shapes(min_dims=1, max_dims=3)))
    d = draw(st.integers(0, len(shape) - 1))
    a, b = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    shape[d] = a * b
    sizes = (a, -1) if b and draw(st.booleans()) else (a, b)
    return Case((tuple(shape),), {"dim": d - len(shape) if draw(st.booleans()) else d, "sizes": sizes})


@st.composite
def diff_case(draw) -> Case:
    """x, and maybe a prepend/append of x's shape with a different size along ``dim``."""
    shape = draw(shapes(min_dims=1, max_dims=3))
    d = draw(st.integers(0, len(shape) - 1))
    extras = []
    for _ in range(draw(st.integers(0, 2))):
        extra = list(shape)
        extra[d] = draw(st.integers(1, 2))
        extras.append(tuple(extra))
    # n = 0 ignores prepend and append (no gradient reaches them): only without them
    return Case((shape, *extras), {"n": draw(st.integers(1 if extras else 0, 3)), "dim": d - len(shape) if draw(st.booleans()) else d})


def _diff(L, x, *extras, n, dim):
    prepend = extras[0] if extras else None
    append = extras[1] if len(extras) > 1 else None
    return x.diff(n=n, dim=dim, prepend=prepend, append=append)


METHOD_OPS = [
    # softmax / log_softmax as methods (a cast by dtype= is checked in test_tensor_methods_more.py)
    Op("softmax_method", lambda L, x, dim: x.softmax(dim), softmax_case()),
    Op("softmax_dtype", lambda L, x, dim: x.softmax(dim, dtype=L.float64), softmax_case()),
    Op("log_softmax_method", lambda L, x, dim: x.log_softmax(dim=dim), softmax_case()),
    Op("type_as", lambda L, x: x.type_as(L.const(np.zeros(1))) * 2.0 + x.type_as(x), unary),
    # fixed-rank products
    Op("mm", lambda L, a, b: a.mm(b), mm_case()),
    Op("bmm", lambda L, a, b: a.bmm(b), bmm_case()),
    Op("mv", lambda L, a, b: a.mv(b), mv_case()),
    Op("dot", lambda L, a, b: a.dot(b), dot_case()),
    Op("addmm", lambda L, c, a, b, beta, alpha: c.addmm(a, b, beta=beta, alpha=alpha), addmm_case()),
    # elementwise
    Op("reciprocal", lambda L, x: x.reciprocal(), unary, "nonzero"),
    Op("remainder", lambda L, a, b: a.remainder(b), pair, ("real", "nonzero")),
    Op("remainder_operator", lambda L, a, b: a % b + a % 0.75, pair, ("real", "nonzero")),
    Op("fmod", lambda L, a, b: a.fmod(b) + a.fmod(-0.75), pair, ("real", "nonzero")),
    Op("lerp", lambda L, a, b: a.lerp(b, 0.25), pair),
    Op("lerp_tensor_weight", lambda L, a, b, w: a.lerp(b, w),
       same_shape_pair().map(lambda c: Case(c.shapes + c.shapes[:1])), ("real", "real", "unit")),
    Op("logaddexp", lambda L, a, b: a.logaddexp(b), pair),
    Op("hypot", lambda L, a, b: a.hypot(b), pair, "nonzero"),
    Op("xlogy", lambda L, a, b: a.xlogy(b), pair, ("real", "positive")),
    Op("nan_to_num", lambda L, x: (x / L.const(np.array([0.0, 1.0, -0.0, 2.0]))).nan_to_num(posinf=2.5, neginf=-1.5)
       if x.ndim and x.shape[-1] == 4 else x.nan_to_num(), unary, "nonzero"),
    # reductions that skip nan (these inputs have none: the value tests in test_tensor_methods_more.py do)
    Op("nansum", lambda L, x, dim, keepdim: x.nansum(dim=dim, keepdim=keepdim), reduction(min_side=0)),
    Op("nanmean", lambda L, x, dim, keepdim: x.nanmean(dim=dim, keepdim=keepdim), reduction()),
    # shapes
    Op("unflatten", lambda L, x, dim, sizes: x.unflatten(dim, sizes), unflatten_case()),
    Op("diff", _diff, diff_case()),
]

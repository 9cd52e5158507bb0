"""Op-table rows for torch ``Tensor`` methods: the fixed-rank products (mm, bmm, mv, dot,
addmm), softmax as a method, type_as, reciprocal, remainder/fmod, nan-skipping reductions,
unflatten, diff and the two-operand functions (lerp, logaddexp, hypot, xlogy); addcmul/addcdiv,
select, take, diagonal, tensordot, broadcast_tensors, meshgrid, hstack/vstack/dstack, index_fill
and the in-place forms (``exp_``, ``index_add_``, ``addcmul_``...).

Same row format and harness as ``op_table.py`` (which appends these rows to its ``OPS``);
the value-only methods (``new_*``, ``nonzero``, ``floor_divide``...) are in
``value_table_methods.py``.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .helpers import index_add_case
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


@st.composite
def triple_case(draw) -> Case:
    """Three operands that broadcast together (addcmul, addcdiv): x, t1, t2."""
    import hypothesis.extra.numpy as hnp

    drawn = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=3))
    return Case(tuple(drawn.input_shapes), {"value": draw(st.sampled_from([1, 0.5, -2.0]))})


@st.composite
def inplace_triple_case(draw) -> Case:
    """x and two operands whose broadcast shape is x's (an in-place update cannot grow x)."""
    shape = draw(shapes(max_dims=3))
    t1 = tuple(1 if draw(st.booleans()) else n for n in shape)
    t2 = shape[draw(st.integers(0, len(shape))):]
    return Case((shape, t1, t2), {"value": draw(st.sampled_from([1, 0.5, -2.0]))})


@st.composite
def select_case(draw) -> Case:
    shape = draw(shapes(min_dims=1, min_side=1))
    dim = draw(dim_of(len(shape)))
    n = shape[dim]
    return Case((shape,), {"dim": dim, "index": draw(st.integers(-n, n - 1))})


@st.composite
def take_case(draw) -> Case:
    """x with at least one element; an index of any shape (repeats and negative positions)."""
    shape = draw(shapes(min_side=1))
    n = int(np.prod(shape, dtype=np.int64))
    index_shape = draw(shapes(max_dims=2))
    size = int(np.prod(index_shape, dtype=np.int64))
    values = draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size))
    return Case((shape,), {"index": np.array(values, dtype=np.int64).reshape(index_shape)})


@st.composite
def diagonal_case(draw) -> Case:
    shape = draw(shapes(min_dims=2))
    ndim = len(shape)
    dim1 = draw(dim_of(ndim))
    dim2 = draw(dim_of(ndim).filter(lambda d: (d - dim1) % ndim != 0))
    return Case((shape,), {"offset": draw(st.integers(-3, 3)), "dim1": dim1, "dim2": dim2})


@st.composite
def tensordot_case(draw) -> Case:
    """Shapes sharing ``n`` contracted sizes; dims as an int or as two lists (in any pairing order)."""
    contracted = draw(shapes(max_dims=2))
    left, right = draw(shapes(max_dims=2)), draw(shapes(max_dims=2))
    n = len(contracted)
    if draw(st.booleans()):
        return Case((left + contracted, contracted + right), {"dims": n})
    order = draw(st.permutations(range(n)))
    a_shape = contracted + left  # contracted dims first in a
    b_shape = right + tuple(contracted[i] for i in order)  # and last in b, in another order
    dims_a = [int(i) for i in order]
    dims_b = [len(right) + k for k in range(n)]
    return Case((a_shape, b_shape), {"dims": (dims_a, dims_b)})


@st.composite
def meshgrid_case(draw) -> Case:
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    return Case(tuple((n,) for n in sizes), {"indexing": draw(st.sampled_from(["ij", "xy"]))})


@st.composite
def stack_pair_case(draw) -> Case:
    """Two tensors of one shape but a different size in the joined dim (0, 1 or 2 by rank)."""
    shape = list(draw(shapes(max_dims=3)))
    other = list(shape)
    joined = 0 if len(shape) <= 1 else 1
    if len(shape) > joined:
        other[joined] = draw(st.integers(0, 3))
    return Case((tuple(shape), tuple(other)))


@st.composite
def index_fill_case(draw) -> Case:
    shape = draw(shapes(min_dims=1, min_side=1))
    dim = draw(dim_of(len(shape)))
    index = np.array(draw(st.lists(st.integers(0, shape[dim] - 1), max_size=4)), dtype=np.int64)
    return Case((shape,), {"dim": dim, "index": index})


@st.composite
def scatter_add_inplace_case(draw) -> Case:
    """x (2-D), src of index's shape (torch's backward refuses a larger src), an index with repeats along ``dim``."""
    rows, cols = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    dim = draw(st.integers(0, 1))
    n = (rows, cols)[dim]
    k = draw(st.integers(1, n + 2))
    index_shape = (k, cols) if dim == 0 else (rows, k)
    size = index_shape[0] * index_shape[1]
    index = np.array(draw(st.lists(st.integers(0, n - 1), min_size=size, max_size=size)),
                     dtype=np.int64).reshape(index_shape)
    return Case(((rows, cols), index_shape), {"dim": dim, "index": index})


def _in_place(method: str, *args, **kwargs):
    """``(x * 1.0).method(...)``: an in-place op on a non-leaf, which the op table differentiates through."""
    def fn(L, x, *rest, **kw):
        return getattr(x * 1.0, method)(*args, *rest, **kwargs, **kw)

    return fn


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
    # a + value * t1 * t2, a + value * t1 / t2
    Op("addcmul", lambda L, x, a, b, value: x.addcmul(a, b, value=value), triple_case()),
    Op("fn_addcmul", lambda L, x, a, b, value: L.addcmul(x, a, b, value=value), triple_case()),
    Op("addcdiv", lambda L, x, a, b, value: L.addcdiv(x, a, b, value=value), triple_case(),
       ("real", "real", "nonzero")),
    Op("addcmul_", lambda L, x, a, b, value: (x * 1.0).addcmul_(a, b, value=value), inplace_triple_case()),
    Op("addcdiv_", lambda L, x, a, b, value: (x * 1.0).addcdiv_(a, b, value=value), inplace_triple_case(),
       ("real", "real", "nonzero")),
    # reading parts: select, take, diagonal; contracting: tensordot
    Op("select", lambda L, x, dim, index: x.select(dim, index), select_case()),
    Op("fn_select", lambda L, x, dim, index: L.select(x, dim, index) * 2.0, select_case()),
    Op("take", lambda L, x, index: x.take(L.index(index)), take_case()),
    Op("diagonal", lambda L, x, offset, dim1, dim2: x.diagonal(offset, dim1, dim2), diagonal_case()),
    Op("fn_diagonal", lambda L, x, offset, dim1, dim2: L.diagonal(x, offset=offset, dim1=dim1, dim2=dim2),
       diagonal_case()),
    Op("tensordot", lambda L, a, b, dims: L.tensordot(a, b, dims=dims), tensordot_case()),
    # several tensors: broadcast, grids, stacks
    Op("broadcast_tensors", lambda L, a, b: L.broadcast_tensors(a, b), pair),
    Op("meshgrid", lambda L, *xs, indexing: L.meshgrid(*xs, indexing=indexing), meshgrid_case()),
    Op("hstack", lambda L, a, b: L.hstack([a, b]), stack_pair_case()),
    Op("vstack", lambda L, a, b: L.vstack((a, b)), same_shape_pair()),
    Op("dstack", lambda L, a, b: L.dstack([a, b]), same_shape_pair()),
    # index_fill and in-place indexed updates
    Op("index_fill", lambda L, x, dim, index: x.index_fill(dim, L.index(index), -1.5) * 1.0, index_fill_case()),
    Op("index_fill_", lambda L, x, dim, index: (x * 1.0).index_fill_(dim, L.index(index), 0.25), index_fill_case()),
    Op("index_add_", lambda L, x, src, dim, index, alpha: (x * 1.0).index_add_(dim, L.index(index), src, alpha=alpha),
       index_add_case()),
    Op("scatter_add_", lambda L, x, src, dim, index: (x * 1.0).scatter_add_(dim, L.index(index), src),
       scatter_add_inplace_case()),
    # elementwise functions in place (on a non-leaf; the gradient is the function's)
    Op("abs_", _in_place("abs_"), unary, "nonzero"),
    Op("exp_", _in_place("exp_"), unary),
    Op("log_", _in_place("log_"), unary, "positive"),
    Op("logit_", lambda L, x: (x.abs() * 0.4 + 0.05).logit_(), unary),
    Op("sqrt_", _in_place("sqrt_"), unary, "positive"),
    Op("sigmoid_", _in_place("sigmoid_"), unary),
    Op("tanh_", _in_place("tanh_"), unary),
    Op("neg_", _in_place("neg_"), unary),
    Op("clamp_min_", _in_place("clamp_min_", 0.05), unary, "distinct"),
    Op("clamp_max_", _in_place("clamp_max_", 0.05), unary, "distinct"),
]

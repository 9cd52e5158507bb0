"""Op-table rows for the rest of PyTorch's everyday tensor API.

More elementary functions, triangles, sorting, scans and products,
rearranging, ``einsum``, outer/diag/trace and the norms.  Same row format and
harness as ``op_table.py`` (which appends these rows to its ``OPS``).
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .helpers import Case, Op, broadcast_pair, dim_of, negate_some, one_input, shapes

unary = one_input()
pair = broadcast_pair()


@st.composite
def matrix_case(draw, min_dims: int = 2) -> Case:
    """A batch of matrices and a diagonal offset that may fall outside them."""
    shape = draw(shapes(min_dims=min_dims, max_dims=3))
    return Case((shape,), {"diagonal": draw(st.integers(-3, 3))})


@st.composite
def along_dim(draw, min_side: int = 0) -> Case:
    """A shape with at least one dim and one of its dims (some negative)."""
    shape = draw(shapes(min_dims=1, min_side=min_side))
    return Case((shape,), {"dim": draw(dim_of(len(shape)))})


@st.composite
def sort_case(draw) -> Case:
    case = draw(along_dim())
    return Case(case.shapes, {**case.kwargs, "descending": draw(st.booleans())})


@st.composite
def topk_case(draw) -> Case:
    shape = draw(shapes(min_dims=1))
    d = draw(st.integers(0, len(shape) - 1))
    k = draw(st.integers(0, shape[d]))
    return Case((shape,), {"k": k, "dim": negate_some(draw, [d], len(shape))[0], "largest": draw(st.booleans())})


@st.composite
def prod_case(draw) -> Case:
    """All elements, or one dim (torch.prod takes one), with keepdim."""
    shape = draw(shapes())
    dim = draw(st.none() | dim_of(len(shape))) if shape else None
    return Case((shape,), {"dim": dim, "keepdim": draw(st.booleans())})


@st.composite
def flip_case(draw) -> Case:
    shape = draw(shapes(min_dims=1))
    dims = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    return Case((shape,), {"dims": negate_some(draw, dims, len(shape))})


@st.composite
def roll_case(draw) -> Case:
    shape = draw(shapes(min_dims=1))
    if draw(st.booleans()):
        return Case((shape,), {"shifts": draw(st.integers(-5, 5)), "dims": None})
    dims = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    shifts = tuple(draw(st.integers(-4, 4)) for _ in dims)
    return Case((shape,), {"shifts": shifts, "dims": negate_some(draw, dims, len(shape))})


@st.composite
def repeat_case(draw) -> Case:
    shape = draw(shapes(max_dims=3))
    extra = draw(st.integers(0 if shape else 1, 2))  # torch needs at least one size
    sizes = tuple(draw(st.integers(0, 3)) for _ in range(len(shape) + extra))
    return Case((shape,), {"sizes": sizes})


@st.composite
def tile_case(draw) -> Case:
    shape = draw(shapes(max_dims=3))
    return Case((shape,), {"dims": tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=4)))})


@st.composite
def repeat_interleave_case(draw) -> Case:
    shape = draw(shapes(min_dims=1))
    d = draw(st.none() | st.integers(0, len(shape) - 1))
    n = int(np.prod(shape)) if d is None else shape[d]
    if draw(st.booleans()) and n:
        repeats = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int64)
    else:
        repeats = draw(st.integers(0, 3))
    return Case((shape,), {"repeats": repeats, "dim": d})


@st.composite
def narrow_case(draw) -> Case:
    shape = draw(shapes(min_dims=1))
    d = draw(st.integers(0, len(shape) - 1))
    start = draw(st.integers(0, shape[d]))
    length = draw(st.integers(0, shape[d] - start))
    return Case((shape,), {"dim": negate_some(draw, [d], len(shape))[0], "start": start, "length": length})


@st.composite
def movedim_case(draw) -> Case:
    shape = draw(shapes(min_dims=1))
    n = len(shape)
    k = draw(st.integers(1, n))
    source = draw(st.permutations(range(n)))[:k]
    destination = draw(st.permutations(range(n)))[:k]
    if k == 1 and draw(st.booleans()):
        return Case((shape,), {"source": source[0], "destination": destination[0]})
    return Case((shape,), {"source": negate_some(draw, source, n), "destination": tuple(destination)})


@st.composite
def reshape_as_case(draw) -> Case:
    shape = draw(shapes())
    size = int(np.prod(shape))
    target = (size,) if draw(st.booleans()) or not size else (1, size, 1)
    return Case((shape,), {"target": target})


#: (equation, operand shapes): matmul-like, diagonals, traces, sums, broadcasting ``...``, three operands
EINSUM_CASES = [
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("ij,jk", ((2, 0), (0, 3))),
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 2))),
    ("bhqd,bhkd->bhqk", ((1, 2, 3, 2), (1, 2, 4, 2))),
    ("ii->i", ((3, 3),)),
    ("ii", ((3, 3),)),
    ("iij->j", ((2, 2, 3),)),
    ("i,j", ((2, 3),)),
    ("i,i->", ((4,), (4,))),
    ("ij->", ((2, 3),)),
    ("ij->j", ((2, 3),)),
    ("ijk->kji", ((2, 3, 1),)),
    ("ij,kj", ((2, 3), (4, 3))),
    ("...ij,...jk->...ik", ((2, 1, 2, 3), (4, 3, 2))),
    ("...i,i->...", ((2, 3, 2), (2,))),
    ("ij,j...->i...", ((2, 3), (3, 2, 2))),
    ("ij,jk,kl->il", ((2, 3), (3, 2), (2, 4))),
    ("i,ij,j->", ((2,), (2, 3), (3,))),
    ("bi,bi->b", ((1, 3), (4, 3))),
]


@st.composite
def einsum_case(draw) -> Case:
    equation, operand_shapes = draw(st.sampled_from(EINSUM_CASES))
    if equation == "i,j":
        operand_shapes = ((2,), (3,))
    return Case(tuple(operand_shapes), {"equation": equation})


@st.composite
def vector_pair(draw) -> Case:
    return Case(((draw(st.integers(0, 4)),), (draw(st.integers(0, 4)),)))


@st.composite
def cross_case(draw) -> Case:
    """Two shapes with a dim of length 3 (the dim given), one operand broadcast along another dim."""
    shape = list(draw(shapes(min_dims=1, max_dims=3)))
    d = draw(st.integers(0, len(shape) - 1))
    shape[d] = 3
    other = list(shape)
    wide = [i for i in range(len(shape)) if i != d]
    if wide and draw(st.booleans()):
        other[draw(st.sampled_from(wide))] = 1
    return Case((tuple(shape), tuple(other)), {"dim": negate_some(draw, [d], len(shape))[0]})


@st.composite
def diag_case(draw) -> Case:
    shape = draw(shapes(min_dims=1, max_dims=2))
    return Case((shape,), {"diagonal": draw(st.integers(-2, 2))})


@st.composite
def norm_case(draw, orders=(2, 1, 3, 1.5, math.inf, -math.inf, 0), max_dims: int = 4) -> Case:
    """Non-empty shapes, an order, dims None / int / tuple (of at most ``max_dims``), keepdim."""
    shape = draw(shapes(min_dims=1, min_side=1))
    n = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        dim = None
    elif kind == "int":
        dim = draw(dim_of(n))
    else:
        dim = negate_some(draw, draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=min(n, max_dims),
                                                 unique=True)), n)
    return Case((shape,), {"ord": draw(st.sampled_from(orders)), "dim": dim, "keepdim": draw(st.booleans())})


@st.composite
def matrix_norm_case(draw) -> Case:
    shape = draw(shapes(min_dims=2, max_dims=3, min_side=1))
    return Case((shape,), {"ord": draw(st.sampled_from(["fro", 1, -1, math.inf, -math.inf])),
                           "keepdim": draw(st.booleans())})


@st.composite
def svd_case(draw) -> Case:
    """Square, tall and wide matrices (and batches of them), reduced or full bases."""
    shape = draw(shapes(min_dims=2, max_dims=3, min_side=1))
    return Case((shape,), {"full_matrices": draw(st.booleans())})


@st.composite
def spectral_norm_case(draw) -> Case:
    """``ord`` 2, -2 or 'nuc'; the matrix dims last or (for a batch) first and last."""
    shape = draw(shapes(min_dims=2, max_dims=3, min_side=1))
    return Case((shape,), {"ord": draw(st.sampled_from([2, -2, "nuc"])), "keepdim": draw(st.booleans()),
                           "batch_last": len(shape) == 3 and draw(st.booleans())})


def well_separated(L, x):
    """``x`` (in [-2, 2]) as a perturbation of at most 0.1 per element of the matrix with
    k + 0.5, ..., 1.5 on its diagonal: its singular values stay >= 1.2 and more than 0.4
    apart (|E|_2 <= |E|_F <= 0.3 for 3 x 3), where the SVD is smooth and well conditioned."""
    m, n = x.shape[-2:]
    base = np.eye(m, n) * (np.arange(max(m, n), 0, -1) + 0.5)[:n]
    return x * 0.05 + L.const(base).to(x.dtype)


def svd_invariants(L, x, full_matrices):
    """Functions of the SVD that do not depend on the signs of the singular vectors:
    S, u_ri u_0i, v_ir v_i0 (per column / row) and U Vh, over the k shared columns (the
    extra ones of ``full_matrices`` are any basis of the complement: no gradient, as torch)."""
    U, S, Vh = L.linalg.svd(well_separated(L, x), full_matrices=full_matrices)
    k = S.shape[-1]
    U, Vh = U[..., :, :k], Vh[..., :k, :]
    return S, U * U[..., :1, :], Vh * Vh[..., :, :1], U @ Vh


def spectral_norm(L, x, ord, keepdim, batch_last):
    """A matrix norm from the singular values; ``batch_last``: the matrices on dims (0, 1) of a batch."""
    a = well_separated(L, x)
    if batch_last:
        return L.linalg.matrix_norm(a.movedim(0, -1), ord, dim=(0, 1), keepdim=keepdim)
    return L.linalg.matrix_norm(a, ord, keepdim=keepdim)


def _torch_norm_dim(dim):
    return (dim,) if isinstance(dim, int) else dim


API_OPS = [
    # more elementary functions
    Op("log10", lambda L, x: x.log10(), unary, "positive"),
    Op("log2", lambda L, x: L.log2(x), unary, "positive"),
    Op("expm1", lambda L, x: x.expm1(), unary),
    Op("exp2", lambda L, x: L.exp2(x), unary),
    Op("atleast_1d", lambda L, x: L.atleast_1d(x), unary),
    Op("atleast_2d", lambda L, x: L.atleast_2d(x), unary),
    Op("atleast_3d", lambda L, x: L.atleast_3d(x), unary),
    Op("frac", lambda L, x: x.frac(), unary),
    Op("deg2rad", lambda L, x: L.deg2rad(x), unary),
    Op("rad2deg", lambda L, x: x.rad2deg(), unary),
    Op("rsqrt", lambda L, x: x.rsqrt(), unary, "positive"),
    Op("square", lambda L, x: L.square(x), unary),
    Op("tan", lambda L, x: x.tan(), unary, "unit"),
    Op("asin", lambda L, x: x.asin(), unary, "unit"),
    Op("acos", lambda L, x: L.acos(x), unary, "unit"),
    Op("atan", lambda L, x: x.atan(), unary),
    Op("sinh", lambda L, x: x.sinh(), unary),
    Op("asinh", lambda L, x: x.asinh(), unary),
    Op("fliplr", lambda L, x, diagonal: L.fliplr(x), matrix_case()),
    Op("flipud", lambda L, x, diagonal: x.flipud(), matrix_case()),
    Op("ravel", lambda L, x: L.ravel(x.transpose(0, -1)) if x.ndim else x.ravel(), unary),
    Op("var_mean", lambda L, x: L.stack(L.var_mean(x)) if x.numel() > 1 else x, unary),
    Op("std_mean", lambda L, x: L.stack(L.std_mean(x, correction=0)), unary),
    Op("arcsinh", lambda L, x: L.arcsinh(x), unary),
    Op("acosh", lambda L, x: L.acosh(x.abs() + 1.25), unary),
    Op("atanh", lambda L, x: x.atanh(), unary, "unit"),
    Op("logit", lambda L, x: L.logit(x.abs() * 0.4 + 0.05), unary),
    Op("logit_eps", lambda L, x: (x.abs() * 0.4 + 0.05).logit(eps=0.2), unary, "distinct"),
    Op("cosh", lambda L, x: L.cosh(x), unary),
    Op("atan2", lambda L, a, b: L.atan2(a, b), pair, ("nonzero", "nonzero")),
    Op("atan2_method", lambda L, a, b: a.atan2(b), pair, ("nonzero", "nonzero")),
    Op("clamp_min", lambda L, x: x.clamp_min(0.05), unary, "distinct"),
    Op("clamp_max", lambda L, x: L.clamp_max(x, -0.55), unary, "distinct"),
    # triangles
    Op("tril", lambda L, x, diagonal: x.tril(diagonal), matrix_case()),
    Op("triu", lambda L, x, diagonal: L.triu(x, diagonal=diagonal), matrix_case()),
    # sorting: the values (the indices are checked in value_table.py)
    Op("sort", lambda L, x, dim, descending: L.sort(x, dim=dim, descending=descending).values, sort_case(), "distinct"),
    Op("sort_method", lambda L, x, dim, descending: x.sort(dim, descending)[0], sort_case(), "distinct"),
    Op("topk", lambda L, x, k, dim, largest: x.topk(k, dim=dim, largest=largest).values, topk_case(), "distinct"),
    # scans and products (with exact zeros: the rules must not divide by them)
    Op("cumsum", lambda L, x, dim: x.cumsum(dim), along_dim()),
    Op("cumsum_fn", lambda L, x, dim: L.cumsum(x, dim=dim), along_dim()),
    Op("cumprod", lambda L, x, dim: x.cumprod(dim), along_dim()),
    Op("cumprod_zeros", lambda L, x, dim: L.cumprod(x, dim), along_dim(), "with_zeros"),
    Op("prod", lambda L, x, dim, keepdim: x.prod() if dim is None else x.prod(dim, keepdim=keepdim), prod_case()),
    Op("prod_zeros", lambda L, x, dim, keepdim: L.prod(x) if dim is None else L.prod(x, dim, keepdim),
       prod_case(), "with_zeros"),
    # rearranging
    Op("flip", lambda L, x, dims: x.flip(dims), flip_case()),
    Op("roll", lambda L, x, shifts, dims: x.roll(shifts, dims), roll_case()),
    Op("repeat", lambda L, x, sizes: x.repeat(*sizes), repeat_case()),
    Op("tile", lambda L, x, dims: L.tile(x, dims), tile_case()),
    Op("repeat_interleave", lambda L, x, repeats, dim: x.repeat_interleave(
        L.index(repeats) if isinstance(repeats, np.ndarray) else repeats, dim=dim), repeat_interleave_case()),
    Op("unbind", lambda L, x, dim: x.unbind(dim), along_dim(min_side=1)),  # (no pieces: nothing to check)
    Op("narrow", lambda L, x, dim, start, length: x.narrow(dim, start, length), narrow_case()),
    Op("movedim", lambda L, x, source, destination: x.movedim(source, destination), movedim_case()),
    Op("movedim_moveaxis", lambda L, x, source, destination: L.moveaxis(x, source, destination), movedim_case()),
    Op("swapdims", lambda L, x, dim: x.swapdims(dim, 0), along_dim()),
    Op("t", lambda L, x: x.t() * 1.0, one_input(max_dims=2)),
    Op("view_as", lambda L, x, target: x.view_as(L.const(np.zeros(target))), reshape_as_case()),
    Op("reshape_as", lambda L, x, target: x.reshape_as(L.const(np.zeros(target))), reshape_as_case()),
    Op("contiguous", lambda L, x: x.transpose(0, -1).contiguous() * 2.0, one_input(min_dims=1)),
    # einsum: any NumPy equation, broadcasting ``...``, repeated labels
    Op("einsum", lambda L, *xs, equation: L.einsum(equation, *xs), einsum_case()),
    Op("einsum_list", lambda L, *xs, equation: L.einsum(equation, list(xs)), einsum_case()),
    # vectors and matrices
    Op("outer", lambda L, a, b: L.outer(a, b), vector_pair()),
    Op("outer_method", lambda L, a, b: a.outer(b), vector_pair()),
    Op("cross", lambda L, a, b, dim: L.cross(a, b, dim=dim), cross_case()),
    Op("cross_method", lambda L, a, b, dim: a.cross(b, dim=dim), cross_case()),
    Op("linalg_cross", lambda L, a, b, dim: L.linalg.cross(a, b, dim=dim), cross_case()),
    Op("diag", lambda L, x, diagonal: L.diag(x, diagonal), diag_case()),
    Op("trace", lambda L, x: x.trace(), one_input(min_dims=2, max_dims=2)),
    Op("vector_norm", lambda L, x, ord, dim, keepdim: L.linalg.vector_norm(x, ord, dim, keepdim), norm_case(),
       "distinct"),
    Op("norm", lambda L, x, ord, dim, keepdim: x.norm(ord, _torch_norm_dim(dim), keepdim), norm_case((2, 1, 3)),
       "nonzero"),
    Op("norm_fro", lambda L, x, ord, dim, keepdim: L.norm(x) + x.norm(dim=dim).sum(),
       norm_case((2,), max_dims=2), "nonzero"),
    Op("matrix_norm", lambda L, x, ord, keepdim: L.linalg.matrix_norm(x, ord, keepdim=keepdim),
       matrix_norm_case(), "distinct"),
    Op("linalg_norm", lambda L, x, ord, dim, keepdim: L.linalg.norm(x, dim=dim, keepdim=keepdim),
       norm_case((2,), max_dims=2), "nonzero"),
    Op("linalg_svd", svd_invariants, svd_case()),
    Op("linalg_svdvals", lambda L, x: L.linalg.svdvals(well_separated(L, x)), one_input(min_dims=2, max_dims=3,
                                                                                        min_side=1)),
    Op("matrix_norm_spectral", spectral_norm, spectral_norm_case()),
    Op("linalg_norm_spectral", lambda L, x, ord: L.linalg.norm(well_separated(L, x), ord) + x.norm(ord),
       st.sampled_from([2, -2, "nuc"]).map(lambda o: Case(((3, 2),), {"ord": o}))),
]

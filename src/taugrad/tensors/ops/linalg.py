"""Vectors and matrices: ``outer``, ``diag``, ``trace``, ``vector_norm`` / ``norm``, the SVD.

(The public ``taugrad.linalg`` namespace, with ``matrix_norm`` and
``linalg.norm``, is :mod:`taugrad.linalg`, built on these.)
"""
from __future__ import annotations

import math
import operator
import warnings
from collections import namedtuple

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.args import normalize_dim, normalize_dims
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import Tensor, _dtype_of, array_module, constant, make, make_view, operand
from taugrad.tensors.core.rule import NEW, forward_of, register, rule, shown_as


# ---------------------------------------------------------------------------
# outer, diag, trace
# ---------------------------------------------------------------------------


@rule("outer", reads=(0, 1), gives=NEW)
def outer_backward(g, out, ins, node):
    """z_ij = a_i b_j:  grad_a = g b (sum over j),  grad_b = g^T a (sum over i)."""
    a, b = ins
    pa, pb = node._prev
    return (g @ b if pa.requires_grad else None, a @ g if pb.requires_grad else None)


@register("outer", methods=("outer", "ger"))
def outer(a: Tensor, b) -> Tensor:
    """The outer product of two vectors: ``z[i, j] = a[i] * b[j]``."""
    b = operand(b, a)
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise ValueError(f"outer: expects two 1-D tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return make(array_module(a._data).multiply.outer(a._data, b._data), (a, b), outer_backward)


def _diagonal_key(xp, n_rows: int, n_cols: int, k: int):
    """(rows, cols) of the ``k``-th diagonal of an ``n_rows x n_cols`` matrix, as arrays of module ``xp``."""
    length = max(0, min(n_rows - max(-k, 0), n_cols - max(k, 0)))
    idx = xp.arange(length)
    return idx + max(-k, 0), idx + max(k, 0)


@rule("diag")
def diag_embed_backward(g, out, ins, node):
    """z = matrix with a on diagonal k (zeros elsewhere):  grad_a = g's diagonal k."""
    return (g[node._ctx],)


@rule("diag")
def diag_extract_backward(g, out, ins, node):
    """z = diagonal k of a:  grad_a = zeros with g written on diagonal k."""
    return (A.scatter_add(g, node._ctx, ins[0].shape, True),)


@register("diag", methods=("diag",))
def diag(x: Tensor, diagonal: int = 0) -> Tensor:
    """A vector -> the square matrix with it on diagonal ``diagonal`` (0: main, >0: above);
    a matrix -> its diagonal ``diagonal`` as a vector (a copy)."""
    k = operator.index(diagonal)
    xp = array_module(x._data)
    if x._data.ndim == 1:
        n = x.shape[0] + abs(k)
        key = _diagonal_key(xp, n, n, k)
        data = xp.zeros((n, n), dtype=x._data.dtype)
        data[key] = x._data
        return make(data, (x,), diag_embed_backward, key)
    if x._data.ndim == 2:
        key = _diagonal_key(xp, *x.shape, k)
        return make(x._data[key], (x,), diag_extract_backward, key)
    raise ValueError(f"diag: expects a 1-D or 2-D tensor, got shape {tuple(x.shape)}")


@rule("diagonal")
def diagonal_backward(g, out, ins, node):
    """z = diagonal k of a over dims (d1, d2), as a new last dim:  grad_a = zeros with g written on that diagonal."""
    key, moved_shape, inverse = node._ctx
    return (A.permute(A.scatter_add(g, key, moved_shape, True), inverse),)


@register("diagonal", methods=("diagonal",))
def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal ``offset`` of the matrices spanned by ``dim1`` and ``dim2``, as a new last dim.

    ``out[..., i] = x[..., i + max(-offset, 0), ..., i + max(offset, 0), ...]``
    (those two dims removed).  A view, as in PyTorch: writing into it writes
    into ``x``.  The gradient writes ``g`` on that diagonal of zeros.
    """
    k = operator.index(offset)
    ndim = x._data.ndim
    if ndim < 2:
        raise ValueError(f"diagonal: needs at least 2 dims, got shape {tuple(x.shape)}")
    d1, d2 = normalize_dim(dim1, ndim, "diagonal"), normalize_dim(dim2, ndim, "diagonal")
    if d1 == d2:
        raise ValueError(f"diagonal: dim1 and dim2 must differ, both are {dim1}")
    data = x._data
    xp = array_module(data)
    out = xp.diagonal(data, k, d1, d2)
    if type(out) is np.ndarray and not out.flags.writeable and data.flags.writeable:  # CuPy has no such flag
        out.flags.writeable = True  # NumPy hands out its diagonal read-only; PyTorch's is a view to write through
    perm = [d for d in range(ndim) if d not in (d1, d2)] + [d1, d2]
    rows, cols = _diagonal_key(xp, x.shape[d1], x.shape[d2], k)
    ctx = ((Ellipsis, rows, cols), tuple(x.shape[d] for d in perm), tuple(sorted(range(ndim), key=perm.__getitem__)))
    return make_view(out, x, (x,), diagonal_backward, ctx)


@rule("trace")
def trace_backward(g, out, ins, node):
    """z = sum_i a_ii:  dz/da = I (ones on the main diagonal)."""
    n, m = ins[0].shape
    like = g._data if isinstance(g, Tensor) else g
    return (g * array_module(like).eye(n, m, dtype=like.dtype),)


@register("trace", methods=("trace",))
def trace(x: Tensor) -> Tensor:
    """Sum of the main diagonal of a matrix."""
    if x._data.ndim != 2:
        raise ValueError(f"trace: expects a 2-D tensor, got shape {tuple(x.shape)}")
    return make(x._data.trace(), (x,), trace_backward)  # make() turns a NumPy scalar to 0-d


# ---------------------------------------------------------------------------
# vector norms
# ---------------------------------------------------------------------------


def _kept(v, shape: tuple, dims, keepdim: bool):
    """A reduction's result (or its gradient) with the reduced dims back as size 1."""
    if keepdim or dims is None:
        return v
    return v.reshape(tuple(1 if i in dims else n for i, n in enumerate(shape)))


@rule("vector_norm", reads=(0, "out"), shows=shown_as("LinalgVectorNormBackward0"))
def vector_norm_backward(g, out, ins, node):
    """z = (sum_i |a_i|^p)^(1/p) over the reduced dims (PyTorch's rules, 0 where z = 0):

    p = 2:        dz/da = a / z
    p = inf/-inf: dz/da = sign(a) at the elements with |a| = z, split evenly among them
    p = 0:        z counts nonzeros: no gradient
    other p:      dz/da = sign(a) |a|^(p-1) / z^(p-1)   (0 at a = 0 when p < 1)
    """
    (a,) = ins
    p, dims, keepdim = node._ctx
    shape = a.shape
    g = _kept(g, shape, dims, keepdim)
    z = _kept(out, shape, dims, keepdim)
    z_data = z._data if isinstance(z, Tensor) else z
    a_data = a._data if isinstance(a, Tensor) else a
    if p == 0:
        return (g * A.zeros(shape, a),)
    if math.isinf(p):
        hit = (abs(a_data) == z_data) | (a_data != a_data)
        count = hit.sum(axis=dims, keepdims=True)
        return (A.sign(a) * (g * hit / count),)
    z_is_zero = z_data == 0
    if p == 2:  # dividing by inf where z = 0 gives the 0 without a 0/0
        return (g * a / A.where(z_is_zero, float("inf"), z),)
    scaled = A.sign(a) * abs(a) ** (p - 1)
    if p < 1:
        scaled = A.where(a_data == 0, 0.0, scaled)
    return (scaled * (g / A.where(z_is_zero, float("inf"), z ** (p - 1))),)


def _norm_order(ord, op: str) -> float:
    if isinstance(ord, bool) or not isinstance(ord, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: ord must be a number (inf and -inf included), got {ord!r}")
    return float(ord)


def _vector_norm_array(data, p: float, dims, keepdim: bool):
    xp = array_module(data)
    mag = xp.abs(data)
    if p == math.inf:
        return mag.max(axis=dims, keepdims=keepdim)
    if p == -math.inf:
        return mag.min(axis=dims, keepdims=keepdim)
    if p == 0:
        return (mag != 0).sum(axis=dims, keepdims=keepdim).astype(data.dtype)
    if p == 1:
        return mag.sum(axis=dims, keepdims=keepdim)
    if p == 2:
        return xp.sqrt((mag * mag).sum(axis=dims, keepdims=keepdim))
    return (mag ** p).sum(axis=dims, keepdims=keepdim) ** (1.0 / p)


@register("vector_norm")
def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``(sum |x_i|^ord)^(1/ord)`` over ``dim`` (all elements by default).

    ``ord``: 2 (Euclidean), 1, any real, ``inf`` (max ``|x_i|``), ``-inf`` (min),
    0 (the number of nonzeros).  Integer tensors are refused, as in PyTorch.
    """
    p = _norm_order(ord, "vector_norm")
    if dtype is not None:
        x = x.to(_dtype_of(dtype))
    if x._data.dtype.kind not in "fc":
        raise TypeError(f"vector_norm: needs a floating tensor, got dtype {x._data.dtype}")
    dims = normalize_dims(dim, x._data.ndim, "vector_norm")
    if dims == ():  # PyTorch: dim=() means every dim
        dims = None
    keepdim = bool(keepdim)
    if math.isinf(p) and x._data.size == 0:
        raise ValueError(f"vector_norm: ord={ord} of an empty tensor (no maximum)")
    with quiet():
        data = _vector_norm_array(x._data, p, dims, keepdim)
    return make(data, (x,), vector_norm_backward, (p, dims, keepdim))


def _nuclear_norm(x: Tensor, dim, keepdim: bool, dtype) -> Tensor:
    """``torch.norm(x, 'nuc', dim)``: the sum of the singular values over two dims."""
    if dim is None and x._data.ndim != 2:
        raise ValueError(f"norm: p='nuc' with dim=None needs a 2-D tensor, got shape {tuple(x.shape)}")
    dims = normalize_dims((-2, -1) if dim is None else dim, x._data.ndim, "norm")
    if dims is None or len(dims) != 2:
        raise ValueError(f"norm: p='nuc' needs two dims, got dim={dim!r}")
    if dtype is not None:
        x = x.to(_dtype_of(dtype))
    result = svdvals(x.movedim(dims, (-2, -1))).sum(-1)
    return result.unsqueeze(min(dims)).unsqueeze(max(dims)) if keepdim else result


@register("norm", methods=("norm",))
def norm(x: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """``torch.norm``: the vector ``p``-norm over ``dim`` (all elements by default).

    ``p='fro'`` (the default) is the 2-norm of the elements; ``inf``, ``-inf``,
    0 and any real ``p`` are :func:`vector_norm`'s; ``p='nuc'`` is the nuclear norm
    ``sum_i s_i`` (singular values) of a matrix, or of the matrices over the two dims ``dim``.
    """
    if isinstance(p, str):
        if p == "nuc":
            return _nuclear_norm(x, dim, bool(keepdim), dtype)
        if p != "fro":
            raise ValueError(f"norm: p={p!r} is not supported (use 'fro', 'nuc' or a number)")
        p = 2
    if p is None:
        p = 2
    if dim is not None and not isinstance(dim, (list, tuple)):
        dim = (dim,)
    return vector_norm(x, p, dim, keepdim, dtype=dtype)


# ---------------------------------------------------------------------------
# singular value decomposition
# ---------------------------------------------------------------------------

#: what ``linalg.svd`` returns, like ``torch.return_types.linalg_svd``
SVDResult = namedtuple("SVDResult", "U S Vh")


def _eye_like(x, k: int):
    """The ``k x k`` identity as an array of ``x``'s dtype (a constant in a rule)."""
    like = x._data if isinstance(x, Tensor) else x
    return array_module(like).eye(k, dtype=like.dtype)


def _mT(x):
    """The last two dims swapped, for an array or a Tensor (``.mT``, which CuPy arrays lack)."""
    return x.swapaxes(-1, -2)


@rule("linalg_svd", reads=("out",), gives=NEW)
def svd_backward(g, out, ins, node):
    """A = U diag(s) V^T (reduced: U is m x k, V is n x k, k = min(m, n)); the op's output
    packs [U; s; V] along the rows, so ``g`` packs (gU, gs, gV).  With
    F_ij = 1 / (s_j^2 - s_i^2) for i != j (0 on the diagonal) and skew(X) = X - X^T:

        grad_A = U [ (F o skew(U^T gU)) diag(s) + diag(s) (F o skew(V^T gV)) + diag(gs) ] V^T
                 + (I_m - U U^T) gU diag(1/s) V^T       (only when m > n)
                 + U diag(1/s) gV^T (I_n - V V^T)       (only when n > m)

    (the real case of the standard result, e.g. J. Townsend, "Differentiating the singular
    value decomposition", 2016).  Repeated singular values make F infinite, as in PyTorch.
    """
    m, n, k = node._ctx
    U, s, V = out[..., :m, :], out[..., m, :], out[..., m + 1:, :]
    gU, gs, gV = g[..., :m, :], g[..., m, :], g[..., m + 1:, :]
    eye = _eye_like(out, k)
    s2 = s * s
    gap = s2[..., None, :] - s2[..., :, None] + eye  # s_j^2 - s_i^2, 1 on the diagonal (skew's is 0)
    UtgU = _mT(U) @ gU
    VtgV = _mT(V) @ gV
    inner = ((UtgU - _mT(UtgU)) / gap) * s[..., None, :] + s[..., :, None] * ((VtgV - _mT(VtgV)) / gap) \
        + gs[..., :, None] * eye
    grad = U @ inner @ _mT(V)
    if m > n:
        grad = grad + ((gU - U @ UtgU) / s[..., None, :]) @ _mT(V)
    if n > m:
        grad = grad + (U / s[..., None, :]) @ (_mT(gV) - _mT(VtgV) @ _mT(V))
    return (grad,)


def _svd_input(x: Tensor, op: str):
    if x._data.ndim < 2:
        raise ValueError(f"{op}: expects a matrix or a batch of matrices, got shape {tuple(x.shape)}")
    if x._data.dtype.kind != "f":
        raise TypeError(f"{op}: needs a real floating tensor, got dtype {x._data.dtype}")
    if x._data.size and not array_module(x._data).isfinite(x._data).all():
        raise ValueError(f"{op}: the input contains inf or NaN")


@register("linalg_svd")
def svd(x: Tensor, full_matrices: bool = True) -> SVDResult:
    """``A = U diag(S) Vh`` for a real matrix (or a batch), ``S`` descending and >= 0.

    ``full_matrices=False``: U is m x k, Vh is k x n with k = min(m, n).  ``True``
    (the default, as torch): U is m x m, Vh is n x n; as in PyTorch, gradients reaching
    the extra columns of U (rows of Vh) are ignored, those being any basis of the
    complement.  The singular vectors are defined up to sign (up to a rotation where
    singular values repeat, where the gradient is infinite, as PyTorch's).
    """
    _svd_input(x, "linalg.svd")
    m, n = x.shape[-2:]
    k = min(m, n)
    xp = array_module(x._data)
    if x._data.size:
        u, s, vh = xp.linalg.svd(x._data, full_matrices=bool(full_matrices))
    else:  # LAPACK refuses empty matrices: an empty product has the identity as its bases
        batch = x.shape[:-2]
        s = xp.zeros(batch + (0,), dtype=x._data.dtype)
        mu, nv = (m, n) if full_matrices else (k, k)
        u = xp.broadcast_to(xp.eye(m, mu, dtype=s.dtype), batch + (m, mu)).copy()
        vh = xp.broadcast_to(xp.eye(nv, n, dtype=s.dtype), batch + (nv, n)).copy()
    v = _mT(vh[..., :k, :])
    packed = xp.concatenate([u[..., :, :k], s[..., None, :], v], axis=-2)
    out = make(packed, (x,), svd_backward, (m, n, k))
    U, S, Vh = out[..., :m, :], out[..., m, :], out[..., m + 1:, :].mT
    if full_matrices and m > k:
        U = forward_of("cat")([U, constant(u[..., :, k:])], -1)
    if full_matrices and n > k:
        Vh = forward_of("cat")([Vh, constant(vh[..., k:, :])], -2)
    return SVDResult(U, S, Vh)


@rule("linalg_svdvals", reads=(0,), gives=NEW)
def svdvals_backward(g, out, ins, node):
    """s = the singular values of A = U diag(s) V^T:  grad_A = U diag(g) V^T.

    On Tensors (``create_graph``) U and V come from the differentiable SVD of A,
    so the result can be differentiated again.
    """
    (a,) = ins
    if isinstance(a, Tensor):
        U, _, Vh = svd(a, full_matrices=False)
    else:
        U, Vh = node._ctx
    return ((U * g[..., None, :]) @ Vh,)


@register("linalg_svdvals")
def svdvals(x: Tensor) -> Tensor:
    """The singular values of a matrix (or a batch), descending: ``linalg.svd(x).S``."""
    _svd_input(x, "linalg.svdvals")
    if x._data.size == 0:
        return svd(x, full_matrices=False).S
    u, s, vh = array_module(x._data).linalg.svd(x._data, full_matrices=False)
    return make(s, (x,), svdvals_backward, (u, vh))


# ---------------------------------------------------------------------------
# cross product
# ---------------------------------------------------------------------------


@rule("linalg_cross", reads=(0, 1), gives=NEW)
def cross_backward(g, out, ins, node):
    """z = a x b along a dim of length 3 (a, b broadcast):
    grad_a = b x g,  grad_b = g x a, each summed back to its operand's shape."""
    a, b = ins
    pa, pb = node._prev
    axis = node._ctx
    if isinstance(g, Tensor):  # create_graph: the product of Tensors, itself differentiable
        cross_of = forward_of("linalg_cross")
        ga = A.sum_to(cross_of(b, g, dim=axis), a.shape) if pa.requires_grad else None
        gb = A.sum_to(cross_of(g, a, dim=axis), b.shape) if pb.requires_grad else None
        return ga, gb
    xp = array_module(g)
    ga = A.sum_to(xp.cross(xp.broadcast_to(b, g.shape), g, axis=axis), a.shape) if pa.requires_grad else None
    gb = A.sum_to(xp.cross(g, xp.broadcast_to(a, g.shape), axis=axis), b.shape) if pb.requires_grad else None
    return ga, gb


def _cross(a: Tensor, b, dim: int, op: str) -> Tensor:
    b = operand(b, a)
    ad, bd = a._data, b._data
    if ad.ndim != bd.ndim:
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions.")
    axis = normalize_dim(dim, ad.ndim, op)
    if ad.shape[axis] != 3 or bd.shape[axis] != 3:
        raise RuntimeError(f"{op}: inputs dimension {dim} must have length 3. "
                           f"Got {ad.shape[axis]} and {bd.shape[axis]}")
    try:
        shape = array_module(ad).broadcast_shapes(ad.shape, bd.shape)
    except ValueError:
        raise RuntimeError(f"{op}: shapes {tuple(ad.shape)} and {tuple(bd.shape)} cannot be broadcast") from None
    xp = array_module(ad)
    data = xp.cross(xp.broadcast_to(ad, shape), xp.broadcast_to(bd, shape), axis=axis)
    return make(data, (a, b), cross_backward, axis)


@register("linalg_cross")
def linalg_cross(a: Tensor, b, *, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: the cross product of 3-vectors along ``dim`` (default the last), broadcasting:
    ``z = (a_1 b_2 - a_2 b_1, a_2 b_0 - a_0 b_2, a_0 b_1 - a_1 b_0)``."""
    return _cross(a, b, dim, "linalg.cross")


@register("cross", methods=("cross",))
def cross(a: Tensor, b, dim=None) -> Tensor:
    """``torch.cross``: :func:`linalg_cross` along ``dim``; without ``dim``, the first dim of length 3 (deprecated
    in torch, with its warning)."""
    if dim is None:
        b = operand(b, a)
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = array_module(a._data).broadcast_shapes(a._data.shape, b._data.shape)
        dim = next((i for i, n in enumerate(shape) if n == 3), -1)
    return _cross(a, b, dim, "linalg.cross")

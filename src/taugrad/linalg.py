"""``taugrad.linalg``: the singular value decomposition and norms, as ``torch.linalg``.

* :func:`cross` -- the cross product of 3-vectors along a dim;
* :func:`svd` -- ``A = U diag(S) Vh`` (reduced or full), :func:`svdvals` -- ``S`` alone;
* :func:`vector_norm` -- ``(sum |x_i|^ord)^(1/ord)`` over any dims;
* :func:`matrix_norm` -- Frobenius, max column sum (``ord=1``), max row sum
  (``ord=inf``) and their minimum versions (``-1``, ``-inf``) over two dims, and from
  the singular values the spectral norm (``ord=2``: the largest), the smallest
  singular value (``ord=-2``) and the nuclear norm (``'nuc'``: their sum);
* :func:`norm` -- either of them, chosen from ``ord`` and ``dim`` as ``torch.linalg.norm`` does.

The gradients are those of the ops they are built of (:func:`vector_norm`,
``amax``/``amin``, :func:`svdvals`), which are PyTorch's, ties split evenly.  Like
PyTorch's, the SVD's gradient is infinite where singular values repeat (and the
spectral norm's is not unique where the largest one does).
"""
from __future__ import annotations

import math

from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.ops.linalg import linalg_cross as cross, svd, svdvals, vector_norm
from taugrad.tensors.ops.reduce import amax, amin

__all__ = ["cross", "matrix_norm", "norm", "svd", "svdvals", "vector_norm"]


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None):
    """The matrix norm of ``A`` over the two dims ``dim`` (the last two by default).

    ``'fro'``: ``sqrt(sum a_ij^2)``; ``1``/``-1``: the largest/smallest column sum
    of ``|a_ij|``; ``inf``/``-inf``: the largest/smallest row sum; with ``s`` the singular
    values (:func:`svdvals`): ``2``: ``max s_i`` (the spectral norm, ``max |A x| / |x|``),
    ``-2``: ``min s_i``, ``'nuc'``: ``sum s_i`` (the nuclear norm).
    """
    if len(dim) != 2:
        raise ValueError(f"matrix_norm: dim must name two dims, got {dim!r}")
    if A.ndim < 2:
        raise ValueError(f"matrix_norm: needs a tensor of at least 2 dimensions, got shape {tuple(A.shape)}")
    rows, cols = (normalize_dim(d, A.ndim, "matrix_norm") for d in dim)
    if rows == cols:
        raise ValueError(f"matrix_norm: dim {tuple(dim)} names the same dimension twice")
    if ord == "fro":
        return vector_norm(A, 2, (rows, cols), keepdim, dtype=dtype)
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(A, ord, rows, cols, keepdim, dtype)
    if ord not in (1, -1, math.inf, -math.inf):
        raise ValueError(f"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")
    summed, kept = (rows, cols) if abs(ord) == 1 else (cols, rows)  # 1: sum each column over the rows
    sums = vector_norm(A, 1, summed, True, dtype=dtype)
    extreme = amax if ord > 0 else amin
    result = extreme(sums, dim=kept, keepdim=True)
    return result if keepdim else result.squeeze((rows, cols))


def _singular_value_norm(A, ord, rows: int, cols: int, keepdim: bool, dtype):
    """max (2), min (-2) or sum ('nuc') of the singular values of the matrices over dims (rows, cols)."""
    if dtype is not None:
        A = A.to(dtype)
    s = svdvals(A.movedim((rows, cols), (-2, -1)))
    if s.shape[-1] == 0 and ord == -2:
        raise ValueError(f"matrix_norm: ord=-2 of an empty matrix (no smallest singular value), "
                         f"shape {tuple(A.shape)}")
    # an empty matrix has no singular values: the nuclear and spectral norms are 0, as torch's
    result = s.sum(-1) if ord == "nuc" or s.shape[-1] == 0 else amax(s, dim=-1) if ord == 2 else amin(s, dim=-1)
    return result.unsqueeze(min(rows, cols)).unsqueeze(max(rows, cols)) if keepdim else result


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):
    """``torch.linalg.norm``: a matrix norm when ``dim`` names two dims (or when ``dim`` is None,
    ``ord`` is given and ``A`` is 2-D); otherwise the vector norm (2 by default)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise ValueError(f"norm: dim must name 1 or 2 dims, got {tuple(dim)}")
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim,
                           dtype=dtype)
    if isinstance(ord, str):
        raise ValueError(f"norm: ord={ord!r} is a matrix norm; give two dims (or a 2-D tensor)")
    if dim is None and ord is not None and A.ndim != 1:
        raise ValueError(f"norm: ord={ord!r} with dim=None needs a 1-D or 2-D tensor, got shape {tuple(A.shape)}")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)

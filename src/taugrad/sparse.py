r"""Sparse COO tensors, enough for graph networks: ``taugrad.sparse_coo_tensor``, ``x.to_sparse()``, ``sparse.mm``.

A sparse tensor of shape ``(d_0, ..., d_{k-1})`` (all sparse dimensions) holds
``indices``, a ``(k, nnz)`` integer array on the values' array module, and
``values``, a Tensor of ``nnz`` entries: the dense tensor is

.. math:: A[i_0, \dots, i_{k-1}] = \sum_{n:\ \mathrm{indices}[:, n] = (i_0, \dots)} \mathrm{values}[n]

(duplicates add up; :meth:`SparseTensor.coalesce` sums them and sorts the
indices).  The values are an ordinary taugrad Tensor, so products built from
them are differentiated by the engine: ``mm(A, D)`` gives ``D`` the gradient
``A^T G`` and ``A``'s values ``(G D^T)[i, j]`` at their own positions, which is
the sparse gradient PyTorch gives ``A``.  A sparse tensor is its own class,
beside ``Tensor``, so dense ops pay nothing for it; what it does not implement
raises one line naming the operation.

The layouts of results are torch's: ``sparse @ dense``, ``dense @ sparse`` and
``dense + sparse`` are dense; ``sparse @ sparse`` (``sparse.mm``, ``mm``,
``spmm``) is sparse and coalesced; ``sum`` over some dimensions is sparse, over
all of them a dense 0-d tensor.  The dense ops ``add``, ``mm``, ``matmul`` and
``sum`` hand a sparse operand to the functions here (they recognise it by its
``is_sparse`` class flag, since the tensor core cannot import this module).
"""
from __future__ import annotations

import sys
from typing import Any, Optional, Tuple

import numpy as np

from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.dtypes import DtypeMismatchError
from taugrad.tensors.core.node import Tensor, to_array
from taugrad.tensors.ops.creation import zeros
from taugrad.tensors.ops.gather import index_add, index_select

__all__ = ["SparseTensor", "sparse_coo_tensor", "mm", "spmm", "sum", "to_sparse"]


def _unsupported(name: str) -> NotImplementedError:
    return NotImplementedError(f"{name}: not supported on a sparse COO tensor (supported: to_dense, coalesce, "
                               "indices, values, sum, t, mul by a scalar, sparse.mm/spmm/mm/@ with a dense or sparse "
                               "matrix, dense + sparse)")


#: the helpers through which a dense op turns an operand into an array (skipped when naming the op)
_CONVERTERS = {"to_array", "operand", "_as_operand", "constant", "asarray", "array"}


class SparseTensor:
    """A sparse COO tensor: ``indices`` ``(ndim, nnz)`` and ``values`` ``(nnz,)`` (see the module docstring)."""

    is_sparse = True
    layout = "sparse_coo"

    def __init__(self, indices: Any, values: Tensor, shape: Tuple[int, ...], coalesced: bool = False) -> None:
        self._indices = indices
        self._values = values
        self.shape = tuple(int(s) for s in shape)
        self._coalesced = coalesced

    # -- what it is ------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return self.ndim

    def size(self, dim: Optional[int] = None):
        return self.shape if dim is None else self.shape[dim]

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def device(self):
        return self._values.device

    @property
    def requires_grad(self) -> bool:
        return self._values.requires_grad

    def requires_grad_(self, flag: bool = True) -> "SparseTensor":
        self._values.requires_grad_(flag)
        return self

    @property
    def grad(self) -> Optional["SparseTensor"]:
        """The gradient of the values, at the same indices (PyTorch's sparse gradient)."""
        g = self._values.grad
        if g is None or self._coalesced:
            return None if g is None else SparseTensor(self._indices, g, self.shape, True)
        # duplicates of one position share its gradient: it is given once, at the coalesced indices, as PyTorch does
        xp = array_module(self._indices)
        keys, first = xp.unique(self._linear_index(), return_index=True)
        indices = xp.stack(xp.unravel_index(keys, self.shape)).astype(np.int64)
        return SparseTensor(indices, Tensor(g._data[first]), self.shape, True)

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _nnz(self) -> int:
        return int(self._indices.shape[1])

    def indices(self) -> Tensor:
        """The ``(ndim, nnz)`` int64 indices (PyTorch asks for a coalesced tensor first, and so does this)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return Tensor(self._indices)

    def values(self) -> Tensor:
        """The ``(nnz,)`` values, a Tensor in the graph (PyTorch asks for a coalesced tensor first)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values

    def _linear_index(self):
        xp = array_module(self._indices)
        flat = xp.zeros(self._indices.shape[1], dtype=np.int64)
        for d, size in enumerate(self.shape):
            flat = flat * size + self._indices[d]
        return flat

    def coalesce(self) -> "SparseTensor":
        """Duplicates summed, indices sorted in row-major order (differentiable in the values)."""
        if self._coalesced:
            return self
        xp = array_module(self._indices)
        keys, inverse = xp.unique(self._linear_index(), return_inverse=True)
        inverse = inverse.reshape(-1)
        values = index_add(zeros(len(keys), dtype=self._values.dtype, device=self._values.device), 0,
                           Tensor(inverse), self._values)
        indices = xp.stack(xp.unravel_index(keys, self.shape)).astype(np.int64) if len(keys) else \
            xp.zeros((self.ndim, 0), dtype=np.int64)
        return SparseTensor(indices, values, self.shape, coalesced=True)

    def to_dense(self) -> Tensor:
        """The dense tensor (differentiable in the values): zeros with each value added at its index."""
        flat = index_add(zeros(int(np.prod(self.shape)), dtype=self._values.dtype, device=self._values.device), 0,
                         Tensor(self._linear_index()), self._values)
        return flat.reshape(self.shape)

    # -- arithmetic --------------------------------------------------------------
    def sum(self, dim: Any = None, keepdim: bool = False, dtype: Any = None):
        r"""Sum of all values (a dense 0-d Tensor); over ``dim``, a coalesced sparse tensor, as torch gives.

        :math:`S[i_{kept}] = \sum_{n:\ \mathrm{indices}[kept, n] = i_{kept}} \mathrm{values}[n]`: each
        entry keeps the indices of the dimensions not summed (``keepdim``: index 0 in a size-1 dimension),
        and coalescing adds the entries that then share a position.  Summing every dimension without
        ``keepdim`` gives the dense 0-d sum.  Gradients reach the values (torch refuses them here).
        """
        values = self._values if dtype is None else self._values.to(dtype)
        if dim is None:
            return values.sum()
        dims = _dims(dim, self.ndim)
        if len(dims) == self.ndim and not keepdim:
            return values.sum()
        kept = [d for d in range(self.ndim) if d not in dims]
        if keepdim:
            indices = self._indices.copy()
            indices[list(dims)] = 0
            shape = tuple(1 if d in dims else n for d, n in enumerate(self.shape))
            summed = SparseTensor(indices, values, shape).coalesce()
            # torch sums the entries but does not mark this result coalesced (so indices() asks for coalesce())
            return SparseTensor(summed._indices, summed._values, shape, coalesced=False)
        return SparseTensor(self._indices[kept], values, tuple(self.shape[d] for d in kept)).coalesce()

    def mul(self, other: Any) -> "SparseTensor":
        """Elementwise product by a Python or 0-d scalar: the values are scaled, the indices kept."""
        if isinstance(other, SparseTensor) or (isinstance(other, Tensor) and other.ndim != 0):
            raise _unsupported("mul by a tensor")
        return SparseTensor(self._indices, self._values * other, self.shape, self._coalesced)

    __mul__ = __rmul__ = mul

    def __truediv__(self, other: Any) -> "SparseTensor":
        return self.mul(1.0 / other)

    def __neg__(self) -> "SparseTensor":
        return self.mul(-1)

    def __matmul__(self, other: Any) -> Any:
        """``self @ other``: a dense result for a dense matrix or vector, a sparse one for a sparse matrix."""
        if isinstance(other, Tensor) and other.ndim == 1 and self.ndim == 2:
            return mm(self, other.unsqueeze(1)).squeeze(1)
        return mm(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return mm(other, self)

    def mm(self, other: Any) -> Any:
        return mm(self, other)

    matmul = __matmul__

    def t(self) -> "SparseTensor":
        """The transpose of a matrix: the two rows of indices swapped (not coalesced any more, as torch's)."""
        if self.ndim != 2:
            raise _unsupported(f"t of a {self.ndim}-D tensor")
        return SparseTensor(self._indices[::-1].copy(), self._values, self.shape[::-1])

    @property
    def _data(self):
        # a dense op reached for the array: name that op (the caller) in the one-line error
        raise _unsupported(sys._getframe(1).f_code.co_name)

    def __array__(self, *args: Any, **kwargs: Any):
        # a dense op converting its other operand: name that op, the first caller that is not a converter
        frame = sys._getframe(1)
        while frame is not None and (frame.f_code.co_name in _CONVERTERS or frame.f_code.co_name[0] == "<"):
            frame = frame.f_back
        raise _unsupported(frame.f_code.co_name if frame is not None else "conversion to an array")

    def to(self, *args, **kwargs) -> "SparseTensor":
        values = self._values.to(*args, **kwargs)
        xp = array_module(values._data)
        return SparseTensor(xp.asarray(self._indices), values, self.shape, self._coalesced)

    def detach(self) -> "SparseTensor":
        return SparseTensor(self._indices, self._values.detach(), self.shape, self._coalesced)

    def __repr__(self) -> str:
        return (f"tensor(indices={self._indices.tolist() if self._nnz() <= 20 else '...'},\n"
                f"       values={self._values.detach()},\n       size={self.shape}, nnz={self._nnz()}, "
                f"layout=taugrad.sparse_coo)")

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _unsupported(name)

    def __add__(self, other: Any):
        raise _unsupported("add")

    __radd__ = __sub__ = __rsub__ = __add__

    def __getitem__(self, key: Any):
        raise _unsupported("indexing")


def sparse_coo_tensor(indices: Any, values: Any, size: Optional[Tuple[int, ...]] = None, *, dtype: Any = None,
                      device: Any = None, requires_grad: bool = False, check_invariants: Optional[bool] = None,
                      is_coalesced: Optional[bool] = None) -> SparseTensor:
    """A sparse COO tensor from ``indices`` ``(ndim, nnz)`` and ``values`` ``(nnz,)``, as ``torch.sparse_coo_tensor``.

    ``size`` defaults to one more than the largest index in each dimension.  Only
    sparse dimensions are supported (``values`` must be 1-D).
    """
    index = to_array(indices._data if isinstance(indices, Tensor) else indices)
    if index.ndim != 2 or index.dtype.kind not in "iu":
        raise ValueError(f"sparse_coo_tensor: indices must be a 2-D integer array (ndim, nnz), got shape "
                         f"{tuple(index.shape)} and dtype {index.dtype}")
    vals = values if isinstance(values, Tensor) else Tensor(to_array(values))
    if dtype is not None or device is not None:
        vals = vals.to(device=device, dtype=dtype)
    if vals.ndim != 1 or vals.shape[0] != index.shape[1]:
        raise ValueError(f"sparse_coo_tensor: values must be 1-D with {index.shape[1]} entries (one per index "
                         f"column), got shape {tuple(vals.shape)}")
    xp = array_module(vals._data)
    index = xp.asarray(index).astype(np.int64)
    if size is None:
        size = tuple(int(m) + 1 for m in index.max(axis=1)) if index.shape[1] else (0,) * index.shape[0]
    size = tuple(int(s) for s in size)
    if len(size) != index.shape[0]:
        raise ValueError(f"sparse_coo_tensor: size {size} has {len(size)} dimensions but indices have "
                         f"{index.shape[0]} rows (dense dimensions are not supported)")
    if index.shape[1] and (int(index.min()) < 0 or any(int(index[d].max()) >= s for d, s in enumerate(size))):
        raise ValueError(f"sparse_coo_tensor: an index is out of bounds for size {size}")
    if requires_grad:
        vals = vals.detach().requires_grad_(True)
    return SparseTensor(index, vals, size, coalesced=bool(is_coalesced))


def to_sparse(x: Tensor, sparse_dim: Optional[int] = None) -> SparseTensor:
    """The nonzero entries of a dense tensor as a coalesced sparse COO tensor (values stay in the graph)."""
    if isinstance(x, SparseTensor):
        return x
    if sparse_dim is not None and sparse_dim != x.ndim:
        raise _unsupported("to_sparse with dense dimensions")
    xp = array_module(x._data)
    index = xp.stack(xp.nonzero(x._data)).astype(np.int64) if x.ndim else xp.zeros((0, 1), dtype=np.int64)
    values = x[tuple(Tensor(i) for i in index)] if x.ndim else x.reshape(1)
    return SparseTensor(index, values, tuple(x.shape), coalesced=True)


def _dims(dim: Any, ndim: int) -> Tuple[int, ...]:
    """``dim`` (an int or a sequence of them, negatives from the end) as distinct dimensions in range."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"sum: dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                             f"but got {d})")
        out.append(d % ndim)
    if len(set(out)) != len(out):
        raise RuntimeError(f"sum: dim {dims} names a dimension twice")
    return tuple(out)


def _check_pair(a: Any, b: Any) -> None:
    """Both matrices, inner sizes equal, one dtype (torch converts neither operand of a sparse product)."""
    if not all(isinstance(x, (SparseTensor, Tensor)) for x in (a, b)) or a.ndim != 2 or b.ndim != 2 \
            or a.shape[1] != b.shape[0]:
        shapes = [tuple(x.shape) if isinstance(x, (SparseTensor, Tensor)) else type(x).__name__ for x in (a, b)]
        raise RuntimeError(f"sparse.mm: shapes {shapes[0]} and {shapes[1]} cannot be multiplied")
    if a.dtype != b.dtype:
        raise DtypeMismatchError(f"sparse.mm: expected both operands to have the same dtype, but got {a.dtype} "
                                 f"and {b.dtype} (convert one, e.g. b.to(a.dtype))")


def mm(mat1: Any, mat2: Any) -> Any:
    r"""The matrix product of two matrices of which at least one is sparse, as ``torch.sparse.mm``/``mm``/``spmm``.

    * sparse ``A`` ``(n, k)`` @ dense ``D`` ``(k, m)``: dense, ``out[i] = sum_j A[i, j] D[j]``, computed as
      the rows ``D[j]`` of each stored entry, scaled by its value and added into row ``i``; gradients
      ``dD = A^T G`` and ``dA_{ij} = (G D^T)_{ij}`` at the stored entries only.
    * dense ``D`` @ sparse ``A``: dense, :math:`(A^T D^T)^T`.
    * sparse ``A`` @ sparse ``B``: sparse and coalesced, one product :math:`a_{ik} b_{kj}` for each pair of
      stored entries that meet at ``k``, summed at ``(i, j)``; each value's gradient is
      :math:`\sum_j G_{ij} b_{kj}` (for ``a_{ik}``) and :math:`\sum_i G_{ij} a_{ik}` (for ``b_{kj}``).
    """
    if not isinstance(mat1, SparseTensor) and not isinstance(mat2, SparseTensor):
        raise TypeError(f"sparse.mm: one operand must be a sparse tensor, got {type(mat1).__name__} and "
                        f"{type(mat2).__name__}")
    if isinstance(mat1, SparseTensor) and isinstance(mat2, SparseTensor):
        _check_pair(mat1, mat2)
        return _sparse_sparse(mat1, mat2)
    if isinstance(mat2, SparseTensor):
        _check_pair(mat1, mat2)
        return mm(mat2.t(), mat1.t()).t()
    _check_pair(mat1, mat2)
    rows, cols = Tensor(mat1._indices[0]), Tensor(mat1._indices[1])
    picked = index_select(mat2, 0, cols) * mat1._values.unsqueeze(1)
    out = zeros(mat1.shape[0], mat2.shape[1], dtype=picked.dtype, device=mat2.device)
    return index_add(out, 0, rows, picked)


def _sparse_sparse(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """``a @ b`` of two sparse matrices: every pair of entries ``a[i, k]``, ``b[k, j]``, summed by coalescing."""
    xp = array_module(a._indices)
    b_rows = b._indices[0]
    # b's entries grouped by row, in stored order within a row (unique keys: the same order on every backend)
    order = xp.argsort(b_rows * max(b._nnz(), 1) + xp.arange(b._nnz()))
    counts = xp.bincount(b_rows, minlength=b.shape[0])
    starts = xp.cumsum(counts) - counts
    per_a = counts[a._indices[1]]  # how many entries of b each entry of a meets
    ends = xp.cumsum(per_a)
    pair = xp.arange(int(ends[-1]) if len(ends) else 0)
    a_pick = xp.searchsorted(ends, pair, side="right")  # the entry of a each pair belongs to
    b_pick = order[starts[a._indices[1]][a_pick] + pair - (ends - per_a)[a_pick]]
    values = index_select(a._values, 0, Tensor(a_pick)) * index_select(b._values, 0, Tensor(b_pick))
    indices = xp.stack([a._indices[0][a_pick], b._indices[1][b_pick]]).astype(np.int64)
    return SparseTensor(indices, values, (a.shape[0], b.shape[1])).coalesce()


spmm = mm


def sum(input: SparseTensor, dim: Any = None, dtype: Any = None):  # noqa: A001 - torch.sparse.sum's name
    """``torch.sparse.sum``: the sum of all values (dense 0-d), or the sparse sum over ``dim``."""
    return input.sum(dim, dtype=dtype)


Tensor.to_sparse = to_sparse

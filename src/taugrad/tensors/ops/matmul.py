"""Matrix product ``a @ b`` (NumPy's ``matmul`` semantics) and its rule.

For matrices, ``Z = A B`` gives ``dL/dA = G B^T`` and ``dL/dB = A^T G``.
Everything else reduces to that case:

* a 1-D left operand is a row vector ``(1, k)``, a 1-D right operand a column
  ``(k, 1)``; the inserted axis is absent from ``G`` and is put back first;
* batch dimensions broadcast like elementwise ops, so each operand's gradient
  is summed back to its own batch shape.
"""
from __future__ import annotations

import math

import numpy as np

from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.dtypes import DtypeMismatchError
from taugrad.tensors.core.node import check_same_device, device_mismatch, is_sparse_operand, make, operand
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.core.rule import G_OR_NEW, NEW, Rule, forward_of, register, rule

ndarray = np.ndarray


def _matmul_picture(node):
    """PyTorch's nodes for ``a @ b``: ``dot``, ``mv`` or ``mm`` by the operands' ranks, a vector on the
    left made a row by ``unsqueeze`` and squeezed back, a batch of rows on the left flattened by ``view``;
    batched products keep the name ``MatmulBackward0``."""
    prev = node._prev
    if not prev:  # freed by backward: the output's rank tells the matrix and dot cases
        rank = node._data.ndim
        return ("DotBackward0", ()) if rank == 0 else ("MmBackward0", ()) if rank == 2 else None
    ra, rb = prev[0]._data.ndim, prev[1]._data.ndim
    if rb == 2 and ra == 2:
        return "MmBackward0", (0, 1)
    if rb == 1:
        return ("DotBackward0", (0, 1)) if ra == 1 else ("MvBackward0", (0, 1)) if ra == 2 else None
    if rb == 2 and ra == 1:
        return "SqueezeBackward4", (("MmBackward0", (("UnsqueezeBackward0", (0,)), 1)),)
    if rb == 2:
        return "UnsafeViewBackward0", (("MmBackward0", (("ViewBackward0", (0,)), 1)),)
    return None


@rule("matmul", reads=(0, 1), gives=NEW, shows=_matmul_picture)
def matmul_backward(g, out, ins, node):
    """Z = A B:  dL/dA = G B^T,  dL/dB = A^T G  (with 1-D and batch cases)."""
    a, b = ins
    pa, pb = node._prev
    if a.ndim == 2 and b.ndim == 2:  # the common case, no reshaping
        return (g @ b.T if pa.requires_grad else None, a.T @ g if pb.requires_grad else None)
    if a.ndim == 1 and b.ndim == 1:  # dot product: g is 0-d
        return (g * b if pa.requires_grad else None, g * a if pb.requires_grad else None)
    # Put back the axis that 1-D operands lost, so G is a (batch of) matrices.
    a2 = a.reshape((1, a.shape[0])) if a.ndim == 1 else a
    b2 = b.reshape((b.shape[0], 1)) if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = g2.reshape(g2.shape[:-1] + (1,) + g2.shape[-1:])
    if b.ndim == 1:
        g2 = g2.reshape(g2.shape + (1,))
    grad_a = grad_b = None
    if pa.requires_grad:
        grad_a = A.sum_to(g2 @ b2.swapaxes(-1, -2), a2.shape).reshape(a.shape)
    if pb.requires_grad:
        grad_b = A.sum_to(a2.swapaxes(-1, -2) @ g2, b2.shape).reshape(b.shape)
    return grad_a, grad_b


def _shape_error(a: Tensor, b: Tensor) -> ValueError:
    sa, sb = tuple(a.shape), tuple(b.shape)
    if not sa or not sb:
        return ValueError(f"matmul: both operands need at least 1 dimension, got {sa} @ {sb}")
    return ValueError(f"matmul: {sa} @ {sb} (inner dimensions or batch shapes do not match)")


@register("matmul", methods=("matmul", "__matmul__"))
def matmul(a: Tensor, b) -> Tensor:
    """Matrix product ``a @ b``: 1-D operands are vectors, leading dimensions are batches."""
    if not isinstance(a, Tensor) and is_sparse_operand(a):  # torch.matmul(sparse, x): taugrad.sparse's product
        return a @ b
    if not isinstance(b, Tensor):
        if is_sparse_operand(b):
            return b.__rmatmul__(a)
        b = operand(b, a)
    if a._data.dtype is not b._data.dtype and a._data.dtype != b._data.dtype:
        raise DtypeMismatchError(f"matmul: expected both operands to have the same dtype, but got {a.dtype} @ "
                                 f"{b.dtype} (convert one, e.g. b.to(a.dtype))")
    return _product(a, b, matmul_backward)


def _product(a: Tensor, b: Tensor, rule_fn: Rule) -> Tensor:
    """``a @ b`` recorded with ``rule_fn`` (the operands' dtypes already agree)."""
    try:
        data = a._data @ b._data
    except ValueError:
        raise _shape_error(a, b) from None
    except TypeError:  # arrays of two devices
        mixed = device_mismatch("matmul", a, b)
        if mixed is None:
            raise
        raise mixed from None
    return make(data, (a, b), rule_fn)


@register("rmatmul", methods=("__rmatmul__",))
def rmatmul(a: Tensor, b) -> Tensor:
    """``b @ a`` for a non-Tensor ``b``."""
    return matmul(operand(b, a), a)


def _linear_picture(node):
    """PyTorch's nodes for ``linear``: ``addmm(b, x, W.t())`` (``mm(x, W.t())`` without a bias), with an
    input that is not a matrix flattened to rows by ``view`` and the result viewed back (a vector
    without a bias: ``unsqueeze`` and ``squeeze``).  A node freed by backward has only its rule, which
    tells whether there was a bias, and its output, whose rank is the input's."""
    prev = node._prev
    rank = prev[0]._data.ndim if prev else node._data.ndim
    bias = len(prev) == 3 if prev else node._ctx is not _LINEAR_NO_BIAS
    weight_t = ("TBackward0", (1,))
    if rank == 2:
        return ("AddmmBackward0", (2, 0, weight_t)) if bias else ("MmBackward0", (0, weight_t))
    if bias:
        return "ViewBackward0", (("AddmmBackward0", (2, ("ViewBackward0", (0,)), weight_t)),)
    if rank == 1:
        return "SqueezeBackward4", (("MmBackward0", (("UnsqueezeBackward0", (0,)), weight_t)),)
    return "UnsafeViewBackward0", (("MmBackward0", (("ViewBackward0", (0,)), weight_t)),)


@rule("linear", reads=(0, 1), gives=G_OR_NEW, shows=_linear_picture)
def linear_backward(g, out, ins, node):
    """Z = X W^T + b:  dL/dX = G W,  dL/dW = G^T X (batch axes flattened),  dL/db = G summed to b's shape."""
    x, w = ins[0], ins[1]
    prev = node._prev
    # batch axes flattened: one GEMM over all rows, not NumPy's loop of one
    # small GEMM per leading index (~25% slower for a (16, 32, 64) batch)
    g2 = g if g.ndim == 2 else g.reshape((-1, g.shape[-1]))
    grad_x = None
    if prev[0].requires_grad:
        grad_x = g @ w if g.ndim <= 2 else (g2 @ w).reshape(x.shape)
    grad_w = None
    if prev[1].requires_grad:
        x2 = x if x.ndim == 2 else x.reshape((-1, x.shape[-1]))
        # G^T X = (X^T G)^T: pick the one laid out like the weight, so the
        # optimizer's update runs over contiguous memory whichever layout the caller
        # chose (the test is inline: this rule runs for every layer, every step)
        if not isinstance(w, Tensor) and w.strides[0] < w.strides[1]:  # an array of any backend
            grad_w = (x2.T @ g2).T
        else:
            grad_w = g2.T @ x2
    if len(prev) == 2:
        return grad_x, grad_w
    return grad_x, grad_w, (A.sum_to(g, ins[2].shape) if prev[2].requires_grad else None)


@register("linear")
def linear(x: Tensor, weight: Tensor, bias=None) -> Tensor:
    """``x @ weight.T + bias`` as one op; ``weight`` has shape (out_features, in_features).

    One node instead of two, and the bias is added in place into the fresh
    product (the speed of a hand-written NumPy layer).  ``weight.T`` is a view:
    BLAS reads the row-major weight as a transposed operand, with no copy.
    """
    data, parents = _linear_data(x, weight, bias, "linear")
    return make(data, parents, linear_backward if len(parents) == 3 else _LINEAR_NO_BIAS)


#: linear's rule for a call without a bias: the same maths, a rule of its own so that a node freed by
#: backward still shows PyTorch's ``MmBackward0`` rather than ``AddmmBackward0``
_LINEAR_NO_BIAS = Rule("linear", linear_backward.backward, reads=(0, 1), gives=G_OR_NEW, shows=_linear_picture)


def _linear_data(x: Tensor, weight, bias, op: str):
    """The array ``x @ weight.T + bias`` (fresh, so later steps may write into it) and the op's parents."""
    if not isinstance(weight, Tensor):
        weight = operand(weight, x)
    xd, wd = x._data, weight._data
    if type(xd) is not type(wd):  # arrays of two backends: maybe two devices
        check_same_device(op, x, weight)
    if xd.dtype is not wd.dtype and xd.dtype != wd.dtype:  # as torch: no silent float64 training of a float32 layer
        raise DtypeMismatchError(f"{op}: mat1 and mat2 must have the same dtype, but got {x.dtype} (input) and "
                                 f"{weight.dtype} (weight); convert the input, e.g. x.to({weight.dtype})")
    if wd.ndim != 2 or xd.ndim == 0 or xd.shape[-1] != wd.shape[1]:
        raise ValueError(f"{op}: input {tuple(x.shape)} does not fit weight {tuple(weight.shape)} "
                         f"(the input's last dimension must equal weight.shape[1])")
    if xd.ndim > 2:  # batch axes flattened: one GEMM, not a batched product (CuPy's costs ~100 us of host time)
        data = (xd.reshape((-1, xd.shape[-1])) @ wd.T).reshape(xd.shape[:-1] + (wd.shape[0],))
    else:
        data = xd @ wd.T
    if bias is None:
        return data, (x, weight)
    if not isinstance(bias, Tensor):
        bias = operand(bias, x)
    bd = bias._data
    if type(bd) is not type(wd):
        check_same_device(op, weight, bias)
    if bd.dtype is not wd.dtype and bd.dtype != wd.dtype:
        raise DtypeMismatchError(f"{op}: bias has dtype {bias.dtype} but weight has {weight.dtype}; they must be "
                                 f"the same")
    if bd.shape != (wd.shape[0],) and bd.shape != ():
        raise ValueError(f"{op}: bias {tuple(bias.shape)} does not fit weight {tuple(weight.shape)} "
                         f"(expected ({wd.shape[0]},))")
    if data.dtype == bd.dtype:
        data += bd  # ``data`` is a fresh array nobody else sees
    else:
        data = data + bd
    return data, (x, weight, bias)


# ---------------------------------------------------------------------------
# torch's fixed-rank products: mm, bmm, mv, dot, addmm
# ---------------------------------------------------------------------------
# Each is ``matmul`` (one node, its rule) after the rank check torch makes:
# ``a.mm(b)`` of a vector is an error there, not a silent matrix-vector product.


def _as_operand(b, a: Tensor, op: str) -> Tensor:
    if isinstance(b, Tensor):
        return b
    if isinstance(b, (int, float, bool)):
        raise TypeError(f"{op}: expected a Tensor, got {type(b).__name__}")
    return operand(b, a)


def _same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    if a._data.dtype is not b._data.dtype and a._data.dtype != b._data.dtype:
        raise DtypeMismatchError(f"{op}: expected both operands to have the same dtype, but got {a.dtype} and "
                                 f"{b.dtype} (convert one, e.g. b.to(a.dtype))")


def _dims(shape) -> str:
    return "x".join(str(n) for n in shape)


@register("mm", methods=("mm",))
def mm(a: Tensor, b) -> Tensor:
    """Matrix product of two matrices (``matmul`` restricted to 2-D, as ``torch.mm``)."""
    if is_sparse_operand(a) or is_sparse_operand(b):  # one operand sparse: taugrad.sparse's product
        return a.mm(b) if is_sparse_operand(a) else b.__rmatmul__(a)
    b = _as_operand(b, a, "mm")
    if a.ndim != 2 or b.ndim != 2:
        which = "self" if a.ndim != 2 else "mat2"
        raise ValueError(f"mm: {which} must be a matrix, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"mm: mat1 and mat2 shapes cannot be multiplied ({_dims(a.shape)} and {_dims(b.shape)})")
    _same_dtype("mm", a, b)
    return matmul(a, b)


#: ``matmul``'s rule under PyTorch's node name for a batched product
_BMM = Rule("bmm", matmul_backward.backward, reads=(0, 1), gives=NEW)


@register("bmm", methods=("bmm",))
def bmm(a: Tensor, b) -> Tensor:
    """Batch of matrix products, (b, n, m) @ (b, m, p) -> (b, n, p); no broadcasting (as ``torch.bmm``)."""
    b = _as_operand(b, a, "bmm")
    if a.ndim != 3 or b.ndim != 3:
        which = "batch1" if a.ndim != 3 else "batch2"
        raise ValueError(f"bmm: {which} must be a 3D tensor, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(f"bmm: expected batch2 of shape [{a.shape[0]}, {a.shape[2]}, *] for batch1 "
                         f"{tuple(a.shape)}, got {tuple(b.shape)}")
    _same_dtype("bmm", a, b)
    return _product(a, b, _BMM)


@register("mv", methods=("mv",))
def mv(a: Tensor, v) -> Tensor:
    """Matrix-vector product, (n, m) @ (m,) -> (n,) (as ``torch.mv``)."""
    v = _as_operand(v, a, "mv")
    if a.ndim != 2 or v.ndim != 1:
        raise ValueError(f"mv: expected a matrix and a vector, got shapes {tuple(a.shape)} and {tuple(v.shape)}")
    if a.shape[1] != v.shape[0]:
        raise ValueError(f"mv: size mismatch, mat ({_dims(a.shape)}), vec ({v.shape[0]})")
    _same_dtype("mv", a, v)
    return matmul(a, v)


@register("dot", methods=("dot",))
def dot(a: Tensor, b) -> Tensor:
    """Inner product of two vectors of the same length, a 0-d tensor (as ``torch.dot``)."""
    b = _as_operand(b, a, "dot")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"dot: 1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"dot: inconsistent tensor size, got {a.shape[0]} and {b.shape[0]} elements")
    _same_dtype("dot", a, b)
    return matmul(a, b)


@register("addmm", methods=("addmm",))
def addmm(input: Tensor, mat1, mat2, *, beta=1, alpha=1) -> Tensor:  # noqa: A002 - torch's name
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product (as ``torch.addmm``).

    With ``beta == 0`` the input is not read (nan and inf in it do not reach
    the result, as torch), so it gets no gradient.
    """
    times, plus = forward_of("mul"), forward_of("add")
    product = mm(_as_operand(mat1, input, "addmm"), mat2)
    if not isinstance(input, Tensor):
        input = operand(input, product)
    try:
        fits = np.broadcast_shapes(tuple(input.shape), tuple(product.shape)) == tuple(product.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"addmm: input {tuple(input.shape)} does not broadcast to the product "
                         f"{tuple(product.shape)}")
    scaled = product if alpha == 1 else times(product, alpha)
    if beta == 0:
        return scaled
    return plus(scaled, input if beta == 1 else times(input, beta))


@register("tensordot")
def tensordot(a: Tensor, b, dims=2) -> Tensor:
    """Sum of products over pairs of dims: ``dims`` an int n (a's last n with b's first n) or
    two lists ``(dims_a, dims_b)`` paired in order.

    The contracted dims are moved to the end of ``a`` and the front of ``b``,
    both are flattened to matrices (kept dims x contracted), multiplied with
    ``mm`` and reshaped to a's kept dims + b's kept dims, so the gradient is
    that of the permutes, reshapes and the matrix product.
    """
    b = operand(b, a)
    na, nb = a._data.ndim, b._data.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (list, tuple)):
        if len(dims) != 2:
            raise ValueError(f"tensordot: dims must be an int or two lists of dims, got {dims!r}")
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    else:
        n = int(dims)
        if n < 0 or n > min(na, nb):
            raise ValueError(f"tensordot: cannot contract {n} dims of tensors with {na} and {nb} dims")
        da, db = list(range(na - n, na)), list(range(n))
    if len(da) != len(db):
        raise ValueError(f"tensordot: dims lists of different lengths {da} and {db}")
    da = [normalize_dim(d, na, "tensordot") for d in da]
    db = [normalize_dim(d, nb, "tensordot") for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: dim {i} of a (size {a.shape[i]}) and dim {j} of b (size {b.shape[j]}) "
                             f"differ")
    keep_a = [d for d in range(na) if d not in da]
    keep_b = [d for d in range(nb) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    reshape, permute = forward_of("reshape"), forward_of("permute")
    left = reshape(permute(a, keep_a + da), (math.prod(a.shape[d] for d in keep_a), k))
    right = reshape(permute(b, db + keep_b), (k, math.prod(b.shape[d] for d in keep_b)))
    return reshape(mm(left, right), tuple(a.shape[d] for d in keep_a) + tuple(b.shape[d] for d in keep_b))

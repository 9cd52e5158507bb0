"""Matrix product ``a @ b`` (NumPy's ``matmul`` semantics) and its rule.

For matrices, ``Z = A B`` gives ``dL/dA = G B^T`` and ``dL/dB = A^T G``.
Everything else reduces to that case:

* a 1-D left operand is a row vector ``(1, k)``, a 1-D right operand a column
  ``(k, 1)``; the inserted axis is absent from ``G`` and is put back first;
* batch dimensions broadcast like elementwise ops, so each operand's gradient
  is summed back to its own batch shape.
"""
from __future__ import annotations

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.dtypes import DtypeMismatchError
from taugrad.tensors.node import array_module, check_same_device, device_mismatch, make, operand
from taugrad.tensors.node import Tensor
from taugrad.tensors.rule import G_OR_NEW, NEW, overwriting, register, rule

ndarray = np.ndarray


@rule("matmul", reads=(0, 1), gives=NEW)
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
    if not isinstance(b, Tensor):
        b = operand(b, a)
    if a._data.dtype is not b._data.dtype and a._data.dtype != b._data.dtype:
        raise DtypeMismatchError(f"matmul: expected both operands to have the same dtype, but got {a.dtype} @ "
                                 f"{b.dtype} (convert one, e.g. b.to(a.dtype))")
    try:
        data = a._data @ b._data
    except ValueError:
        raise _shape_error(a, b) from None
    except TypeError:  # arrays of two devices
        mixed = device_mismatch("matmul", a, b)
        if mixed is None:
            raise
        raise mixed from None
    return make(data, (a, b), matmul_backward)


@register("rmatmul", methods=("__rmatmul__",))
def rmatmul(a: Tensor, b) -> Tensor:
    """``b @ a`` for a non-Tensor ``b``."""
    return matmul(operand(b, a), a)


@rule("linear", reads=(0, 1), gives=G_OR_NEW)
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
        # optimizer's update runs over contiguous memory.  nn.Linear's weight is
        # column-major (the test is inline: this rule runs for every layer, every step)
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
    product (the speed of a hand-written NumPy layer).  ``nn.Linear`` stores
    its weight column by column, so ``weight.T`` is row-major and the product
    runs on the layout BLAS is fastest with.
    """
    data, parents = _linear_data(x, weight, bias, "linear")
    return make(data, parents, linear_backward)


@rule("linear_relu", reads=(0, 1, "out"), gives=NEW)
def linear_relu_backward(g, out, ins, node):
    """Z = relu(X W^T + b):  the ReLU's rule (G where Z != 0, else 0), then the linear one."""
    return linear_backward.backward(g * (out != 0), out, ins, node)


@overwriting(linear_relu_backward)
def linear_relu_backward_in_place(g, out, ins, node):
    """The same rule for a ``g`` the backward pass owns: mask it in place first."""
    g *= out != 0
    return linear_backward.backward(g, out, ins, node)


@register("linear_relu")
def linear_relu(x: Tensor, weight: Tensor, bias=None) -> Tensor:
    """``relu(x @ weight.T + bias)`` as one op (``nn.Sequential`` runs ``Linear, ReLU`` through it).

    The ReLU works in place on the fresh product, as a hand-written layer's
    ``np.maximum(h, 0, out=h)``: no second array, no second node.  The
    gradient is the two rules in turn, the ReLU's mask read from the output.
    """
    data, parents = _linear_data(x, weight, bias, "linear_relu")
    if data.dtype.kind not in "fiu":
        raise TypeError(f"linear_relu: not supported for dtype {data.dtype}")
    array_module(data).maximum(data, 0, out=data)  # nan stays nan, as relu()
    return make(data, parents, linear_relu_backward)


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

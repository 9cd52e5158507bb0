"""softmax and log_softmax: one fused node each, with the max-shift that keeps them finite.

Subtracting the maximum first means ``exp`` never overflows, so logits of +-1e4
give exact probabilities and no warning; a row of -inf gives zeros (log: -inf)
and a row holding inf or nan gives nan, as PyTorch.  The rules use the output
only: ``grad = p * (g - sum(g * p))`` and ``g - softmax * sum(g)``.
"""
from __future__ import annotations

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import Tensor, array_module, make
from taugrad.tensors.core.rule import NEW, forward_of, register, rule


@rule("softmax", reads=("out",), gives=NEW)
def softmax_backward(g, out, ins, node):
    """p = softmax(a):  grad_a = p * (g - sum(g * p))   (sum along the softmax dim)."""
    d = node._ctx
    return (out * (g - (g * out).sum(axis=d, keepdims=True)),)


def _softmax_input(x, dtype, op: str) -> Tensor:
    """The input as a Tensor, cast to ``dtype`` first when one is given (torch's ``dtype=``:
    the cast is part of the graph, so a float16 input can be normalised in float32)."""
    x = A.input_tensor(x, op)
    if dtype is not None:
        x = forward_of("astype")(x, dtype)
    if x._data.dtype.kind != "f":  # PyTorch: not implemented for integer and bool tensors
        raise TypeError(f"{op}: needs a floating tensor (or a floating dtype=), got dtype {x.dtype}")
    return x


@register("softmax", methods=("softmax",))
def softmax(x: Tensor, dim: int = -1, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x), dim)``, computed after subtracting the maximum.

    ``F.softmax(x, dim)`` and ``x.softmax(dim)``; ``dtype`` casts the input first.
    """
    x = _softmax_input(x, dtype, "softmax")
    d = normalize_dim(dim, x._data.ndim, "softmax") if x._data.ndim else None
    with quiet():  # rows with inf or nan give nan silently, as PyTorch
        e = array_module(x._data).exp(A.shift_by_max(x._data, d))
        data = e / e.sum(axis=d, keepdims=True)
    return make(data, (x,), softmax_backward, d)


@rule("log_softmax", reads=("out",), gives=NEW)
def log_softmax_backward(g, out, ins, node):
    """z = a - logsumexp(a):  grad_a = g - softmax(a) * sum(g)  with softmax(a) = exp(z)."""
    d = node._ctx
    return (g - A.exp(out) * g.sum(axis=d, keepdims=True),)


@register("log_softmax", methods=("log_softmax",))
def log_softmax(x: Tensor, dim: int = -1, dtype=None) -> Tensor:
    """``x - logsumexp(x, dim)``: log-probabilities, stable for any logits.

    ``F.log_softmax(x, dim)`` and ``x.log_softmax(dim)``; ``dtype`` casts the input first.
    """
    x = _softmax_input(x, dtype, "log_softmax")
    d = normalize_dim(dim, x._data.ndim, "log_softmax") if x._data.ndim else None
    with quiet():  # a row of -inf: log(0) = -inf; a row with inf or nan: nan (as PyTorch, silently)
        shifted = A.shift_by_max(x._data, d)  # subtract the max first: x - (max + log s) would round in float32
        xp = array_module(shifted)
        data = shifted - xp.log(xp.exp(shifted).sum(axis=d, keepdims=True))
    return make(data, (x,), log_softmax_backward, d)

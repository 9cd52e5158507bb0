"""Scaled dot-product attention (``torch.nn.functional.scaled_dot_product_attention``)."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.node import Tensor, as_array, constant
from taugrad.tensors.ops.dropout import dropout
from taugrad.tensors.ops.elementwise import where
from taugrad.tensors.ops.softmax import softmax

__all__ = ["scaled_dot_product_attention"]


def _tensor(x: Any, name: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    try:
        return Tensor(x)
    except TypeError as error:
        raise TypeError(f"scaled_dot_product_attention: {name} must be a Tensor, got {type(x).__name__} ({error})") from None


def attention_bias(L: int, S: int, attn_mask: Any, is_causal: bool, like: Any) -> Optional[Any]:
    """The additive bias: 0 where a query may attend a key, -inf where not (None: no mask at all).

    An array of the dtype and module (device) of the query's array ``like``, or a float mask Tensor as given.

    A boolean ``attn_mask`` says where attending is *allowed* (True), as in
    PyTorch's scaled_dot_product_attention; a floating one is added as it is.
    """
    bias = None
    dtype, xp = like.dtype, array_module(like)
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: give attn_mask or is_causal=True, not both")
        bias = xp.where(xp.tril(xp.ones((L, S), dtype=bool)), 0.0, -np.inf).astype(dtype)
    if attn_mask is not None:
        mask = attn_mask._data if isinstance(attn_mask, Tensor) else as_array(attn_mask)
        if mask.dtype == np.bool_:
            bias = array_module(mask).where(mask, 0.0, -np.inf).astype(dtype)
        else:
            return attn_mask if isinstance(attn_mask, Tensor) else mask.astype(dtype, copy=False)
    return bias


def _shared_heads(q: Tensor, t: Tensor, name: str) -> Tensor:
    """``t`` (key or value) with each of its heads repeated for its group of query heads (dim -3)."""
    if q.ndim < 3 or t.ndim < 3:
        raise ValueError(f"scaled_dot_product_attention: enable_gqa needs a heads dimension (-3) in query and "
                         f"{name}, got shapes {tuple(q.shape)} and {tuple(t.shape)}")
    heads, shared = q.shape[-3], t.shape[-3]
    if shared == 0 or heads % shared:
        raise ValueError(f"scaled_dot_product_attention: the {shared} heads of {name} must divide the query's "
                         f"{heads} heads (enable_gqa)")
    return t if shared == heads else t.repeat_interleave(heads // shared, dim=-3)


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False) -> Tensor:
    r"""``softmax(q k^T * scale + bias) v`` over the last two dimensions, batch dims broadcast.

    ``q`` is (..., L, E), ``k`` (..., S, E), ``v`` (..., S, Ev); ``scale``
    defaults to ``1 / sqrt(E)``.  ``is_causal=True`` lets query ``i`` see keys
    ``j <= i`` (the top-left aligned lower triangle, as PyTorch).  ``attn_mask``:
    boolean (True = may attend) or floating (added to the scores), broadcast
    to (..., L, S).  A query that may attend no key (all its scores -inf) gets
    output 0 and sends no gradient, as PyTorch's safe softmax.  ``dropout_p`` drops attention weights (always applied
    when > 0, as in PyTorch: pass 0.0 in evaluation).  ``enable_gqa``: key
    and value may have fewer heads (dim -3) than the query, each shared by a
    group of ``Hq / Hk`` consecutive query heads (grouped-query attention).
    """
    q, k, v = _tensor(query, "query"), _tensor(key, "key"), _tensor(value, "value")
    if enable_gqa:
        k, v = _shared_heads(q, k, "key"), _shared_heads(q, v, "value")
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(f"scaled_dot_product_attention: query, key and value need at least 2 dimensions, got "
                         f"shapes {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"scaled_dot_product_attention: query (..., L, E), key (..., S, E) and value (..., S, Ev) "
                         f"do not fit: {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    L, S = q.shape[-2], k.shape[-2]
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * factor
    bias = attention_bias(L, S, attn_mask, is_causal, q._data)
    dead = None
    if bias is not None:
        scores = scores + (bias if isinstance(bias, Tensor) else constant(bias))
        rows = array_module(scores._data).all(scores._data == -np.inf, axis=-1, keepdims=True)
        if type(rows) is not np.ndarray or rows.any():  # on a device, asking would wait for it: always mask
            # a query that may attend no key: PyTorch's safe softmax gives it zero weights (output 0) and
            # zero gradients; its scores are replaced before the softmax, whose nan would reach k and v
            dead = constant(rows)
            scores = where(dead, 0.0, scores)
    weights = softmax(scores, -1)
    if dead is not None:
        weights = where(dead, 0.0, weights)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights @ v

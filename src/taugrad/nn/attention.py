"""Multi-head attention (Vaswani et al., 2017) with ``torch.nn.MultiheadAttention``'s parameters and API.

The parameter names are PyTorch's (``in_proj_weight``, ``in_proj_bias``,
``out_proj.weight``, ``out_proj.bias``; ``q_proj_weight``... when ``kdim`` or
``vdim`` differ from ``embed_dim``), so a PyTorch state dict loads unchanged.
``device=`` and ``dtype=`` are PyTorch's factory arguments
(:func:`taugrad.nn.layers.factory_kwargs`): initialised on the CPU, then moved.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

import numpy as np

from taugrad.nn import init
from taugrad.nn.layers import Linear, factory_kwargs, place
from taugrad.nn.module import Module, Parameter
from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.node import Tensor, as_array, constant
from taugrad.tensors.ops.dropout import dropout
from taugrad.tensors.ops.softmax import softmax

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """A plain :class:`Linear` under the class name PyTorch gives ``MultiheadAttention.out_proj`` (so reprs match)."""


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _additive(mask: Any, dtype: Any, name: str) -> Optional[Tensor]:
    """A boolean mask (True = *not* allowed, PyTorch's convention here) as -inf/0, or a float mask as it is."""
    if mask is None:
        return None
    array = mask._data if isinstance(mask, Tensor) else as_array(mask)
    if array.dtype == np.bool_:
        return constant(array_module(array).where(array, -np.inf, 0.0).astype(dtype))
    if array.dtype.kind != "f":
        raise TypeError(f"MultiheadAttention: {name} must be bool or floating, got dtype {array.dtype}")
    return mask if isinstance(mask, Tensor) else constant(array.astype(dtype))


class MultiheadAttention(Module):
    r"""``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O + b_O``, ``head_i = Attention(Q W_Q^i, K W_K^i, V W_V^i)``.

    Inputs are (L, N, E) -- or (N, L, E) with ``batch_first=True``, or unbatched
    (L, E).  ``forward`` returns ``(output, weights)``: the weights averaged over
    heads (N, L, S) unless ``average_attn_weights=False`` ((N, heads, L, S)),
    or None with ``need_weights=False``.  ``key_padding_mask`` (N, S) and
    ``attn_mask`` ((L, S) or (N * heads, L, S)) are boolean (True = may *not*
    attend) or floating (added to the scores).  Initialisation as PyTorch:
    Xavier-uniform projections, zero biases.  ``add_bias_kv`` and
    ``add_zero_attn`` are not supported.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Optional[int] = None,
                 vdim: Optional[int] = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        dev, floating = factory_kwargs(type(self).__name__, device, dtype)
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported")
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be a positive multiple of "
                             f"num_heads ({num_heads})")
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(np.zeros((3 * embed_dim, embed_dim), floating))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(np.zeros((embed_dim, embed_dim), floating))
            self.k_proj_weight = Parameter(np.zeros((embed_dim, self.kdim), floating))
            self.v_proj_weight = Parameter(np.zeros((embed_dim, self.vdim), floating))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, floating))
        else:
            self.register_parameter("in_proj_bias", None)
        # made on the CPU with the others, and moved with them below
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=floating)
        self._reset_parameters()
        place(self, dev)

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _project(self, x: Tensor, which: int) -> Tensor:
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            weight = self.in_proj_weight[which * E:(which + 1) * E]
        else:
            weight = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[which]
        out = x @ weight.transpose(0, 1)
        if self.in_proj_bias is not None:
            out = out + self.in_proj_bias[which * E:(which + 1) * E]
        return out

    def forward(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None, need_weights: bool = True,
                attn_mask: Any = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
        q, k, v = _tensor(query), _tensor(key), _tensor(value)
        unbatched = q.ndim == 2
        if unbatched:
            q, k, v = q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = as_array(getattr(key_padding_mask, "_data", key_padding_mask))[None]
        elif self.batch_first:
            q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        if q.ndim != 3 or q.shape[-1] != self.embed_dim:
            raise ValueError(f"MultiheadAttention: query must be (L, N, {self.embed_dim}) (or batch first), "
                             f"got {tuple(_tensor(query).shape)}")
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention: is_causal=True is a hint that needs attn_mask too (as in PyTorch)")
        L, N, E = q.shape
        S = k.shape[0]
        H, D = self.num_heads, self.head_dim
        dtype = q._data.dtype
        # (L, N, E) -> (N, H, L, D)
        qh = self._project(q, 0).reshape(L, N, H, D).permute(1, 2, 0, 3)
        kh = self._project(k, 1).reshape(S, N, H, D).permute(1, 2, 0, 3)
        vh = self._project(v, 2).reshape(S, N, H, D).permute(1, 2, 0, 3)
        scores = (qh @ kh.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        mask = _additive(attn_mask, dtype, "attn_mask")
        if mask is not None:
            if mask.ndim == 3:
                if tuple(mask.shape) != (N * H, L, S):
                    raise ValueError(f"MultiheadAttention: a 3-d attn_mask must be ({N * H}, {L}, {S}), "
                                     f"got {tuple(mask.shape)}")
                mask = mask.reshape(N, H, L, S)
            scores = scores + mask
        padding = _additive(key_padding_mask, dtype, "key_padding_mask")
        if padding is not None:
            if tuple(padding.shape) != (N, S):
                raise ValueError(f"MultiheadAttention: key_padding_mask must be ({N}, {S}), got {tuple(padding.shape)}")
            scores = scores + padding.reshape(N, 1, 1, S)
        weights = softmax(scores, -1)
        dropped = dropout(weights, self.dropout, training=self.training) if self.dropout > 0 else weights
        out = (dropped @ vh).permute(2, 0, 1, 3).reshape(L, N, E)  # (N, H, L, D) -> (L, N, E)
        out = self.out_proj(out)
        if unbatched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        returned = dropped.mean(dim=1) if average_attn_weights else dropped  # after dropout, as PyTorch returns them
        if unbatched:
            returned = returned.squeeze(0)
        return out, returned

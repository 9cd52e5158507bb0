"""Inverted dropout: one mask drawn from the generator of the input's device, applied as a product."""
from __future__ import annotations

import numpy as np

from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.core.backend import array_module, device_of, move_like
from taugrad.tensors.core.generator import get_generator
from taugrad.tensors.core.node import Tensor, constant
from taugrad.tensors.core.rule import forward_of, register


@register("dropout")
def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator=None) -> Tensor:
    """Inverted dropout: zero each element with probability ``p``, scale the rest by 1/(1-p).

    The expected value is unchanged, so evaluation (``training=False``) is the identity.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    x = A.input_tensor(x, "dropout")
    if x._data.dtype.kind not in "fc":  # the 1/(1-p) scale would be truncated: a wrong expected value
        raise TypeError(f"dropout: needs a floating tensor, got dtype {x._data.dtype}")
    if not training or p == 0.0:
        return x
    dtype = x._data.dtype if x._data.dtype in (np.float32, np.float64) else np.float32
    if p == 1.0:
        return forward_of("mul")(x, constant(array_module(x._data).zeros(x.shape, dtype=x._data.dtype)))
    # drawn on the host from the generator of the input's device, then moved there
    keep = get_generator(generator, device_of(x._data)).random(x.shape, dtype=dtype) >= p
    scale = move_like((keep * (1.0 / (1.0 - p))).astype(x._data.dtype, copy=False), x._data)
    return forward_of("mul")(x, constant(scale))

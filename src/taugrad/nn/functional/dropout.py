"""Dropout functions with PyTorch's signatures (``inplace=`` included).

The masks come from the ops :func:`taugrad.tensors.ops.dropout.dropout` and
:func:`taugrad.tensors.ops.norm.dropout2d`; ``inplace=True`` writes the result
into the input (recorded as PyTorch records it: ``MulBackward0``).
"""
from __future__ import annotations

from typing import Any

from taugrad.nn.functional._helpers import input_tensor as _tensor
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.dropout import dropout as _dropout
from taugrad.tensors.ops.inplace import apply_inplace
from taugrad.tensors.ops.norm import dropout2d as _dropout2d

__all__ = ["dropout", "dropout2d"]


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False, *,
            generator: Any = None) -> Tensor:
    r"""Inverted dropout: :math:`y = x \cdot m / (1 - p)` with :math:`m_i \sim \mathrm{Bernoulli}(1 - p)`.

    The expected value is unchanged, so evaluation (``training=False``) is the
    identity (the input itself).  ``inplace=True`` writes ``y`` into ``input``.
    ``generator`` (keyword only, beyond PyTorch's signature) draws the mask from that stream.
    """
    _check_p(p)
    if inplace and training and p > 0.0:
        return apply_inplace(input, "dropout_", lambda t: _dropout(t, p, True, generator), "MulBackward0")
    return _dropout(input, p, training, generator)


def dropout2d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False, *,
              generator: Any = None) -> Tensor:
    r"""Channel dropout of (N, C, H, W): whole channels zeroed with probability ``p``, the rest scaled by
    :math:`1 / (1 - p)`; a 3-D input is (N, C, L), as PyTorch 2 reads it.  ``inplace=True`` writes the result
    into ``input``."""
    _check_p(p)
    if inplace and training and p > 0.0:
        return apply_inplace(_tensor(input, "dropout2d"), "dropout2d_", lambda t: _dropout2d(t, p, True, generator),
                             "MulBackward0")
    return _dropout2d(input, p, training, generator)

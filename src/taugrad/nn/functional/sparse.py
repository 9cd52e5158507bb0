"""Lookups of ``torch.nn.functional`` that PyTorch files under sparse functions: ``embedding`` and ``one_hot``."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from taugrad.tensors.core.backend import array_module, move_like, scatter_add
from taugrad.tensors.core.device_checks import as_unsigned, outside_on_device
from taugrad.tensors.core.node import Tensor, as_array, bump_version, check_same_device, constant
from taugrad.tensors.ops.elementwise import where
from taugrad.tensors.ops.index import rows_at

__all__ = ["embedding", "one_hot"]


def embedding(input: Any, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    r"""Rows of ``weight`` at the integer indices ``input`` (any shape; the output appends the row).

    ``padding_idx``: that row gets no gradient.  ``max_norm``: each row the
    input refers to whose ``norm_type``-norm exceeds it is first scaled in
    place to ``max_norm`` (by ``max_norm / (norm + 1e-7)``, as PyTorch; not
    recorded in the graph).  ``scale_grad_by_freq``: row ``i``'s gradient is
    divided by the number of times ``i`` occurs in ``input``.  ``sparse``
    gradients are not supported (taugrad has no sparse tensors).
    """
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported (taugrad has no sparse tensors)")
    index = input._data if isinstance(input, Tensor) else as_array(input)
    if index.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {index.dtype}")
    rows = weight.shape[0]
    xp = array_module(weight._data)
    if not isinstance(index, np.ndarray) and type(index) is not type(weight._data):
        check_same_device("embedding", input, weight)  # indices on a device, the table on the CPU
    if isinstance(index, np.ndarray):
        if index.size and as_unsigned(index).max() >= rows:  # one pass for both bounds
            raise IndexError(f"embedding: index out of range for {rows} rows: min {index.min()}, max {index.max()}")
        index = move_like(index, weight._data)  # host indices for a table on a device: moved, as getitem does
    else:  # the check stays on the device; index 0 stands in until it raises at the next read
        outside = outside_on_device(index, rows, ("embedding", rows), IndexError,
                                    f"embedding: an index is out of range for {rows} rows")
        index = xp.where(outside, 0, index)
    if max_norm is not None:
        _renorm_rows(weight, index, max_norm, norm_type)
    out = rows_at(weight, index)  # checked above: not again by getitem
    if padding_idx is not None:
        keep = (index != padding_idx % rows)[..., None].astype(weight._data.dtype)
        out = where(constant(keep > 0), out, out.detach())  # same values, no gradient into the padding row
    if scale_grad_by_freq:
        counts = xp.zeros(rows, dtype=weight._data.dtype)
        flat = index.reshape(-1)
        scatter_add(counts, flat, xp.ones(flat.shape, dtype=counts.dtype))
        scale = constant((1.0 / counts[index])[..., None])
        fixed = out.detach()
        out = fixed + (out - fixed) * scale  # the same values (x + 0); the gradient divided by the count
    return out


def _renorm_rows(weight: Tensor, index, max_norm: float, norm_type: float) -> None:
    """Scale, in place and outside the graph, the rows at ``index`` whose norm exceeds ``max_norm``."""
    data = weight._data
    xp = array_module(data)
    if isinstance(data, np.ndarray):
        used = xp.unique(index)  # the rows referred to (few, for a large table)
        picked = data[used]
        data[used] = picked * _renorm_scale(xp, picked, max_norm, norm_type, True)
    else:  # on a device: every row, masked, so that no size depends on the values (no read-back)
        used = xp.zeros(data.shape[0], dtype=bool)
        used[index.reshape(-1)] = True
        data *= _renorm_scale(xp, data, max_norm, norm_type, used)
    bump_version(weight)


def _renorm_scale(xp, rows, max_norm: float, norm_type: float, used):
    """A column of factors: ``max_norm / (norm + 1e-7)`` for the ``used`` rows longer than ``max_norm``, else 1."""
    if norm_type == float("inf"):
        norms = xp.abs(rows).max(axis=1)
    else:
        norms = (xp.abs(rows) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    return xp.where((norms > max_norm) & used, max_norm / (norms + 1e-7), 1.0).astype(rows.dtype)[:, None]


def one_hot(input, num_classes: int = -1) -> Tensor:
    """int64 tensor with a 1 at each class index of ``input`` along a new last dimension.

    The parameter is named ``input`` as torch's, so ``F.one_hot(input=t)`` works.
    """
    t = input._data if isinstance(input, Tensor) else as_array(input)
    if t.dtype.kind not in "iu":
        raise TypeError(f"one_hot: targets must be integers, got dtype {t.dtype}")
    if num_classes < 0:
        num_classes = int(t.max()) + 1 if t.size else 0
    if t.size and bool(((t < 0) | (t >= num_classes)).any()):  # one read-back from a device
        bad = int(t.min()) if t.min() < 0 else int(t.max())
        raise ValueError(f"one_hot: class {bad} is out of range for {num_classes} classes")
    return constant((t[..., None] == array_module(t).arange(num_classes)).astype(np.int64))

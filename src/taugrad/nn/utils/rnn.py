"""Variable-length batches for the recurrent layers, as ``torch.nn.utils.rnn``.

A batch of sequences of lengths ``L_0 >= L_1 >= ...`` is *packed* by time
step: ``data`` holds, for ``t = 0, 1, ...``, the ``t``-th element of every
sequence still running (``batch_sizes[t]`` of them), one row each::

    sequences  a0 a1 a2        data        = [a0 b0 c0 a1 b1 a2]
               b0 b1           batch_sizes = [3, 2, 1]
               c0

so a recurrent layer runs step ``t`` on the first ``batch_sizes[t]`` rows of
its state and never sees padding.  ``sorted_indices`` (``enforce_sorted=False``)
records the permutation that sorted the batch by decreasing length, and
``unsorted_indices`` its inverse, which puts results back in the caller's order.
"""
from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.shape import cat, stack

__all__ = [
    "PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
    "unpad_sequence", "unpack_sequence", "invert_permutation",
]


def _int_tensor(values: Any) -> Tensor:
    return Tensor(np.asarray(values, dtype=np.int64))


def _host_ints(values: Any, name: str) -> np.ndarray:
    """``values`` (a list, array or CPU Tensor) as a 1-D int64 NumPy array."""
    if isinstance(values, Tensor):
        if values.device.type != "cpu":
            raise ValueError(f"{name}: lengths must be a 1-D CPU int64 tensor or a list, got a tensor on "
                             f"{values.device}")
        values = values.detach().numpy()
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name}: lengths must be 1-D, got shape {tuple(array.shape)}")
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"{name}: lengths must be integers, got dtype {array.dtype}")
    return array.astype(np.int64)


def invert_permutation(permutation: Optional[Tensor]) -> Optional[Tensor]:
    """The inverse ``q`` of a permutation ``p`` (``q[p[i]] = i``), or None for None."""
    if permutation is None:
        return None
    p = _host_ints(permutation, "invert_permutation")
    inverse = np.empty_like(p)
    inverse[p] = np.arange(p.size, dtype=np.int64)
    return _int_tensor(inverse)


class PackedSequence(NamedTuple):
    """A packed batch: ``data`` (sum of lengths, *), ``batch_sizes`` (int64, one per time step, on the CPU),
    and the optional ``sorted_indices`` / ``unsorted_indices`` permutations (int64)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor] = None
    unsorted_indices: Optional[Tensor] = None

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        """The same packing with ``data.to(*args, **kwargs)``; ``batch_sizes`` stays on the CPU, as PyTorch."""
        return self._replace(data=self.data.to(*args, **kwargs))

    def double(self) -> "PackedSequence":
        return self._replace(data=self.data.double())

    def float(self) -> "PackedSequence":
        return self._replace(data=self.data.float())

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"

    def is_pinned(self) -> bool:
        return False


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shapes ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with ``batch_first``),
    filling with ``padding_value`` after each sequence (before it with ``padding_side='left'``)."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got {padding_side!r}")
    seqs = [_as_tensor(s) for s in sequences]
    if not seqs:
        raise ValueError("pad_sequence: received an empty list of sequences")
    trailing = tuple(seqs[0].shape[1:])
    for s in seqs:
        if s.ndim < 1 or tuple(s.shape[1:]) != trailing:
            raise ValueError(f"pad_sequence: sequences must share their trailing dimensions {trailing}, "
                             f"got shape {tuple(s.shape)}")
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        missing = longest - s.shape[0]
        if missing:
            fill = s.new_full((missing,) + trailing, padding_value)
            s = cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> List[Tensor]:
    """The inverse of :func:`pad_sequence`: the list of the first ``lengths[i]`` steps of each sequence."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(_host_ints(lengths, "unpad_sequence"))]


def pack_padded_sequence(input: Any, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences of ``lengths``.

    With ``enforce_sorted=True`` the lengths must already decrease; otherwise
    the batch is sorted by decreasing length first (a stable sort) and the
    permutation kept in ``sorted_indices``.  Gradients flow from ``data`` back
    to the padded input (zero at the padding).
    """
    x = _as_tensor(input)
    n = _host_ints(lengths, "pack_padded_sequence")
    if x.ndim < 2:
        raise ValueError(f"pack_padded_sequence: input must be at least 2-d, got shape {tuple(x.shape)}")
    if batch_first:
        x = x.transpose(0, 1)
    if n.size != x.shape[1]:
        raise ValueError(f"pack_padded_sequence: expected {x.shape[1]} lengths (the batch size), got {n.size}")
    if n.size and n.min() <= 0:
        raise RuntimeError("pack_padded_sequence: length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if n.size and n.max() > x.shape[0]:
        raise RuntimeError(f"pack_padded_sequence: a length ({n.max()}) exceeds the padded length {x.shape[0]}")
    sorted_indices = None
    if enforce_sorted:
        if np.any(n[1:] > n[:-1]):
            raise RuntimeError("pack_padded_sequence: `lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                               "pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do "
                               "not need ONNX exportability.")
    else:
        order = np.argsort(-n, kind="stable")
        n = n[order]
        sorted_indices = _int_tensor(order)
        x = x.index_select(1, sorted_indices)
    steps = int(n[0]) if n.size else 0
    batch_sizes = np.array([(n > t).sum() for t in range(steps)], dtype=np.int64)
    data = cat([x[t, :int(b)] for t, b in enumerate(batch_sizes)])
    return PackedSequence(data, _int_tensor(batch_sizes), sorted_indices, invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """Undo :func:`pack_padded_sequence`: ``(padded, lengths)``, in the caller's batch order.

    ``padded`` is ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) with
    ``T = total_length`` if given (at least the longest length), else the
    longest length; ``lengths`` is an int64 CPU tensor.
    """
    data, sizes = sequence.data, _host_ints(sequence.batch_sizes, "pad_packed_sequence")
    steps, batch = sizes.size, int(sizes[0]) if sizes.size else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"pad_packed_sequence: expected total_length to be at least the length of the "
                             f"longest sequence ({steps}), got {total_length}")
    else:
        total_length = steps
    trailing = tuple(data.shape[1:])
    rows, offset = [], 0
    for b in sizes:
        b = int(b)
        step = data[offset:offset + b]
        if b < batch:
            step = cat([step, data.new_full((batch - b,) + trailing, padding_value)])
        rows.append(step)
        offset += b
    for _ in range(total_length - steps):
        rows.append(data.new_full((batch,) + trailing, padding_value))
    padded = stack(rows) if rows else data.new_full((0, batch) + trailing, padding_value)
    lengths = np.array([(sizes > i).sum() for i in range(batch)], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        unsorted = _host_ints(sequence.unsorted_indices, "pad_packed_sequence")
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[unsorted]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _int_tensor(lengths)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors ``(L_i, *)``: ``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    seqs = [_as_tensor(s) for s in sequences]
    lengths = [s.shape[0] for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> List[Tensor]:
    """The inverse of :func:`pack_sequence`: the list of sequences, in the caller's order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

"""The layers that take torch's factory arguments (``device=``, ``dtype=``), each with a small case.

name -> (positional args, keyword args, input maker ``rng -> numpy input``):
float64 draws, or integer indices for ``Embedding``.  ``TORCH_LAYERS`` are
torch's own layers (compared with ``torch.nn``); ``LAYERS`` adds taugrad's ``MLP``.
"""
from __future__ import annotations

TORCH_LAYERS = {
    "Linear": ((3, 4), {}, lambda rng: rng.standard_normal((5, 3))),
    "Embedding": ((7, 3), {}, lambda rng: rng.integers(0, 7, size=(2, 5))),
    "LayerNorm": ((4,), {}, lambda rng: rng.standard_normal((2, 3, 4))),
    "Conv1d": ((2, 3, 3), {"padding": 1}, lambda rng: rng.standard_normal((2, 2, 6))),
    "Conv2d": ((2, 3, 3), {"padding": 1}, lambda rng: rng.standard_normal((2, 2, 5, 5))),
    "ConvTranspose2d": ((2, 3, 3), {"stride": 2}, lambda rng: rng.standard_normal((2, 2, 4, 4))),
    "BatchNorm1d": ((3,), {}, lambda rng: rng.standard_normal((6, 3))),
    "BatchNorm2d": ((3,), {}, lambda rng: rng.standard_normal((4, 3, 2, 2))),
    "GroupNorm": ((2, 4), {}, lambda rng: rng.standard_normal((3, 4, 5))),
    "InstanceNorm2d": ((3,), {"affine": True}, lambda rng: rng.standard_normal((2, 3, 4, 4))),
    "MultiheadAttention": ((4, 2), {}, lambda rng: rng.standard_normal((5, 2, 4))),
}

LAYERS = dict(TORCH_LAYERS, MLP=((3, [5], 2), {}, lambda rng: rng.standard_normal((4, 3))))

"""``torch.nn.modules.normalization``: the normalisation layers torch keeps in this module."""
from taugrad.nn.layers import LayerNorm
from taugrad.nn.normalization import GroupNorm, RMSNorm

__all__ = ["GroupNorm", "LayerNorm", "RMSNorm"]

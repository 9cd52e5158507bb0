"""``taugrad.utils``: helpers under PyTorch's module names (``taugrad.utils.data``)."""
from taugrad.utils import data

__all__ = ["data"]

"""``taugrad.backends``: the flags PyTorch scripts set or query (``backends.mps.is_available()``,
``backends.cudnn.benchmark = True``); none of these backends exists in taugrad."""
from taugrad.backends import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]

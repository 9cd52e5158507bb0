"""``taugrad.nn.functional``: the tensor engine's losses and activations under PyTorch's module name.

Everything public in :mod:`taugrad.functional` (``cross_entropy``, ``mse_loss``,
``softmax``, ``log_softmax``, ``gelu``...) is available here, the very same
functions, so ``import taugrad.nn.functional as F`` reads like PyTorch code.
"""
import taugrad.functional as _functional
from taugrad.functional import *  # noqa: F401,F403  (the re-export is the point of this module)

__all__ = list(getattr(_functional, "__all__", [name for name in vars(_functional) if not name.startswith("_")]))
globals().update({name: getattr(_functional, name) for name in __all__})

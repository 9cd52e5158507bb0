"""``taugrad.functional``: another name for :mod:`taugrad.nn.functional`.

``import taugrad.functional as F`` and ``import taugrad.nn.functional as F``
give the same functions (the very same objects); the package lives in
``nn/functional/``, where PyTorch keeps it.
"""
from taugrad.nn import functional as _functional
from taugrad.nn.functional import *  # noqa: F401,F403  (the re-export is the point of this module)

__all__ = list(_functional.__all__)
globals().update({name: value for name, value in vars(_functional).items() if not name.startswith("_")})

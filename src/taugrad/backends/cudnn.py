"""``taugrad.backends.cudnn``: the flags scripts set (``benchmark``, ``deterministic``) are kept and
have no effect, since there is no cuDNN; ``is_available()`` is False."""
from __future__ import annotations

#: settable flags, as in PyTorch; nothing reads them
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: no cuDNN."""
    return False

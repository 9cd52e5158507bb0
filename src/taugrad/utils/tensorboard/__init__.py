"""``taugrad.utils.tensorboard``: ``SummaryWriter``, writing real TensorBoard event files.

It needs the ``tensorboard`` package (``pip install -e ".[tensorboard]"``), as
``torch.utils.tensorboard`` does; without it the import fails with torch's
message.  Only this package imports it: ``import taugrad`` never does.
"""
try:
    import tensorboard  # noqa: F401 - the optional extra this package is for
except ImportError:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above") from None

from taugrad.utils.tensorboard.writer import SummaryWriter

__all__ = ["SummaryWriter"]

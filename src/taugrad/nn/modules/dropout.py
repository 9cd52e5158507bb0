"""``torch.nn.modules.dropout``: the dropout layers."""
from taugrad.nn.layers import Dropout
from taugrad.nn.normalization import Dropout2d

__all__ = ["Dropout", "Dropout2d"]

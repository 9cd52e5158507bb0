"""``torch.nn.modules`` paths: each submodule names the classes torch defines there, taugrad's own classes.

Programs name classes by these paths, e.g. ``torch.serialization.safe_globals([torch.nn.modules.rnn.LSTM])``;
``torch.nn.modules.rnn.LSTM is torch.nn.LSTM`` holds as in torch.
"""
from taugrad.nn.modules import activation, container, dropout, linear, module, normalization, rnn, sparse, transformer
from taugrad.nn.modules.module import Module

__all__ = ["activation", "container", "dropout", "linear", "module", "normalization", "rnn", "sparse", "transformer",
           "Module"]

"""``torch.nn.modules.module``: the base class."""
from taugrad.nn.module import Module, Parameter

__all__ = ["Module", "Parameter"]

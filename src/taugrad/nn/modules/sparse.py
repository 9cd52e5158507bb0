"""``torch.nn.modules.sparse``: the embedding layer (torch files it under "sparse")."""
from taugrad.nn.layers import Embedding

__all__ = ["Embedding"]

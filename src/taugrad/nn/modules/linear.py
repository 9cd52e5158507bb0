"""``torch.nn.modules.linear``: the linear layers (attention's output projection is a Linear under another name)."""
from taugrad.nn.attention import NonDynamicallyQuantizableLinear
from taugrad.nn.layers import Identity, Linear

__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear"]

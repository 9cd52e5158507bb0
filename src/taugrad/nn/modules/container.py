"""``torch.nn.modules.container``: the containers."""
from taugrad.nn.container import ModuleDict, ParameterDict, ParameterList
from taugrad.nn.layers import ModuleList, Sequential

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]

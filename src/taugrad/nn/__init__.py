"""``taugrad.nn``: modules, layers and initialisation, shaped like ``torch.nn``.

>>> model = taugrad.nn.MLP(64, [128], 10)
>>> logits = model(x)                       # x: (batch, 64) Tensor or array
>>> model.state_dict().keys()               # 0.weight, 0.bias, 2.weight, 2.bias
"""
from taugrad.nn import functional, init
from taugrad.nn.layers import (
    GELU,
    MLP,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    Linear,
    ModuleList,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
)
from taugrad.nn.module import Module, Parameter, StateDictError

__all__ = [
    "Module",
    "Parameter",
    "StateDictError",
    "Linear",
    "Sequential",
    "ModuleList",
    "Identity",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "GELU",
    "Dropout",
    "Flatten",
    "Embedding",
    "LayerNorm",
    "MLP",
    "functional",
    "init",
]

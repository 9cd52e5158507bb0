"""``torch.nn.modules.activation``: the activation layers and attention, as torch groups them."""
from taugrad.nn.activation import (
    CELU, ELU, GLU, PReLU, RReLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax,
    Mish, ReLU6, SiLU, Softmax, Softmin, Softplus, Softshrink, Softsign, Tanhshrink, Threshold,
)
from taugrad.nn.attention import MultiheadAttention
from taugrad.nn.layers import GELU, ReLU, Sigmoid, Tanh

__all__ = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU",
           "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention", "PReLU", "RReLU", "ReLU", "ReLU6", "SELU", "SiLU",
           "Sigmoid", "Softmax", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold"]

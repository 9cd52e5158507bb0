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
from taugrad.nn import utils
from taugrad.nn import parallel
from taugrad.nn.parallel import DataParallel
from taugrad.nn.activation import ELU, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, ReLU6, SiLU, Softmax, Softplus, Softsign
from taugrad.nn.activation import (
    CELU, GLU, RReLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Mish, Softmin, Softshrink, Tanhshrink, Threshold,
)
from taugrad.nn.activation import PReLU
from taugrad.nn.normalization import RMSNorm
from taugrad.nn.pixelshuffle import PixelShuffle, PixelUnshuffle
from taugrad.nn.distance import CosineSimilarity, PairwiseDistance
from taugrad.nn.attention import MultiheadAttention
from taugrad.nn.rnn import GRU, LSTM, RNN, RNNBase, GRUCell, LSTMCell, RNNCell, RNNCellBase
from taugrad.nn.transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
from taugrad.nn.container import ModuleDict, ParameterDict, ParameterList
from taugrad.nn.layers import Unflatten
from taugrad.nn.loss import (
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss,
    CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, MarginRankingLoss, MultiLabelSoftMarginLoss,
    MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss,
)
from taugrad.nn.conv import Conv1d, Conv2d, ConvTranspose2d
from taugrad.nn.normalization import BatchNorm1d, BatchNorm2d, Dropout2d, GroupNorm, InstanceNorm1d, InstanceNorm2d, Upsample
from taugrad.nn.pooling import AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool2d, MaxPool1d, MaxPool2d
from taugrad.nn import modules  # torch.nn.modules.<family>.<Class> paths, after the classes exist

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
    "Conv1d", "Conv2d", "ConvTranspose2d",
    "MaxPool1d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d",
    "BatchNorm1d", "BatchNorm2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "Dropout2d", "Upsample",
    "Unflatten",
    "ModuleDict", "ParameterList", "ParameterDict",
    "Softmax", "LogSoftmax", "SiLU", "LeakyReLU", "ELU", "Softplus", "Hardtanh", "ReLU6", "Softsign", "LogSigmoid",
    "SELU", "CELU", "Mish", "Hardswish", "Hardsigmoid", "GLU", "Softmin", "Threshold", "Softshrink", "Hardshrink",
    "Tanhshrink", "RReLU",
    "CosineSimilarity", "PairwiseDistance",
    "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
    "KLDivLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss", "PoissonNLLLoss", "GaussianNLLLoss", "TripletMarginLoss", "MultiMarginLoss",
    "MultiheadAttention",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer",
    "functional",
    "init",
    "utils",
    "PReLU", "RMSNorm", "PixelShuffle", "PixelUnshuffle",
    "parallel", "DataParallel",
]

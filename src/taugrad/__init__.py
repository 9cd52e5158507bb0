"""taugrad: a small, readable and real automatic-differentiation engine.

* ``Value``: the scalar engine of "Build a Tiny Autograd Engine" (micrograd-compatible).
* ``Tensor``: the same engine over NumPy arrays, with a PyTorch-shaped API.

Both share one traversal (:mod:`taugrad.graph`): iterative topological order
plus reverse accumulation of local derivative rules.  The package map is
``docs/architecture.md``.
"""
from taugrad.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from taugrad.scalar import Value

# the tensor engine: importing the method table binds the ops to Tensor
from taugrad.tensors.methods import Tensor
from taugrad.tensors.engine import GraphReleasedError
from taugrad.tensors.ops.creation import (
    arange, empty, eye, float32, float64, from_numpy, full, full_like, linspace, ones, ones_like,
    rand, randint, randn, randperm, tensor, zeros, zeros_like,
)
from taugrad.tensors.generator import default_generator, manual_seed
from taugrad.tensors.ops.elementwise import (
    abs, clip, clip as clamp, cos, erf, exp, gelu, log, log1p, maximum, minimum, relu, sigmoid, sin,
    sqrt, tanh, where,
)
from taugrad.tensors.ops.reduce import amax, amin, argmax, argmin, logsumexp, max, mean, min, std, sum, var
from taugrad.tensors.ops.matmul import matmul
from taugrad.tensors.ops.shape import (
    cat, chunk, concatenate, expand, flatten, pad, permute, reshape, split, squeeze, stack, transpose, unsqueeze,
)
from taugrad.tensors.ops.losses import log_softmax, softmax
from taugrad.tensors.custom_function import Function, FunctionCtx

# libraries on top of the engines
from taugrad import autograd, data, func, functional, nn, optim
from taugrad.autograd import grad  # one grad() for Tensors and Values
from taugrad.gradcheck import GradcheckError, gradcheck, gradgradcheck
from taugrad.serialization import CheckpointError, load, save

# learner and debugging tools
from taugrad.learn.check import check
from taugrad.learn.expr import ExpressionError
from taugrad.learn.draw import draw_dot
from taugrad.debug import anomaly
from taugrad.debug.anomaly import AnomalyError, detect_anomaly

__version__ = "0.1.0"

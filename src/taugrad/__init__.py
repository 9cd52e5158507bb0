"""taugrad: a small, readable and real automatic-differentiation engine.

* ``Value``: the scalar engine of "Build a Tiny Autograd Engine" (micrograd-compatible).
* ``Tensor``: the same engine over NumPy arrays, with a PyTorch-shaped API.

Both share one traversal (:mod:`taugrad.autograd`): iterative topological order
plus reverse accumulation of local derivative rules.
"""
from taugrad.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from taugrad.gradcheck import GradcheckError, gradcheck
from taugrad.scalar import Value

# --- tensor engine (issue 3) ---
from taugrad._tensor import Tensor
from taugrad.tensor_engine import GraphReleasedError, grad
from taugrad.ops.creation import (
    arange, empty, eye, float32, float64, from_numpy, full, full_like, linspace, ones, ones_like,
    rand, randint, randn, randperm, tensor, zeros, zeros_like,
)
from taugrad.ops.random import default_generator, manual_seed
from taugrad.ops.elementwise import (
    abs, clip, clip as clamp, cos, erf, exp, gelu, log, log1p, maximum, minimum, relu, sigmoid, sin,
    sqrt, tanh, where,
)
from taugrad.ops.reduce import amax, amin, argmax, argmin, logsumexp, max, mean, min, std, sum, var
from taugrad.ops.matmul import matmul
from taugrad.ops.shape import cat, chunk, concatenate, expand, flatten, pad, permute, reshape, split, squeeze, stack, transpose, unsqueeze
from taugrad.ops.nn import log_softmax, softmax
from taugrad.function import Function, FunctionCtx
from taugrad import functional
# --- nn / optim / data / checkpoints (issue 4) ---
from taugrad import data, nn, optim
from taugrad.serialization import CheckpointError, load, save
# --- learner tools (issue 5) ---
from taugrad.expr import ExpressionError
from taugrad.viz import draw_dot
# --- higher-order (issue 6) ---
from taugrad.gradients import grad  # one grad() for Tensors and Values (replaces the Tensor-only one above)
from taugrad.gradcheck import gradgradcheck
from taugrad import func
# --- debugging (issue 7) ---
from taugrad import anomaly
from taugrad.anomaly import AnomalyError, detect_anomaly

__version__ = "0.1.0"

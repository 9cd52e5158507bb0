"""taugrad: a small, readable and real automatic-differentiation engine.

* ``Value``: the scalar engine of "Build a Tiny Autograd Engine" (micrograd-compatible).
* ``Tensor``: the same engine over NumPy arrays, with a PyTorch-shaped API.

Both share one traversal (:mod:`taugrad.graph`): iterative topological order
plus reverse accumulation of local derivative rules.  The package map is
``docs/architecture.md``.
"""
from taugrad.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from taugrad.scalar import Value

# the tensor engine: importing the method table binds the ops to Tensor
from taugrad.tensors.methods import Tensor
from taugrad.tensors.engine import GraphReleasedError
from taugrad.tensors.core.dtypes import (  # torch's dtype names (taugrad.float is float32, taugrad.long int64)
    bfloat16, bool_ as bool, complex64, complex64 as cfloat, complex128, complex128 as cdouble, dtype,
    float16, float16 as half, float32, float32 as float, float64, float64 as double, get_default_dtype, int8,
    int16, int16 as short, int32, int32 as int, int64, int64 as long, promote_types, set_default_dtype, uint8,
    uint16, uint32, uint64,
)
from taugrad.tensors.ops.creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, logspace, numel, ones, ones_like,
    rand, rand_like, randint, randint_like, randn, randn_like, randperm, tensor, zeros, zeros_like,
)
from taugrad.tensors.core.generator import (
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)
from taugrad.tensors.core.device import device, get_default_device, set_default_device
from taugrad.tensors.ops.conversion import from_dlpack  # zero-copy exchange with torch, CuPy, JAX, NumPy
from taugrad.tensors.ops.random import bernoulli, multinomial, normal, poisson
from taugrad.tensors.ops.elementwise import (
    abs, clip, clip as clamp, erf, gelu, maximum, minimum, relu, sigmoid, sqrt, where,
)
from taugrad.tensors.ops.trig import cos, sin, tanh
from taugrad.tensors.ops.explog import exp, log, log1p
from taugrad.tensors.ops.reduce import amax, amin, argmax, argmin, logsumexp, max, mean, min, std, sum, var
from taugrad.tensors.ops.matmul import matmul
from taugrad.tensors.ops.shape import (
    cat, chunk, concatenate, expand, flatten, pad, permute, reshape, split, squeeze, stack, transpose, unsqueeze,
)
from taugrad.tensors.ops.softmax import log_softmax, softmax
from taugrad.tensors.ops.reduce import all, any
from taugrad.tensors.ops.elementwise import bitwise_not, logical_and, logical_not, logical_or, logical_xor
from taugrad.tensors.ops.trig import (
    acos, acos as arccos, asin, asin as arcsin, atan, atan as arctan, atan2, atan2 as arctan2, cosh, sinh, tan,
)
from taugrad.tensors.ops.explog import exp2, expm1, log2, log10
from taugrad.tensors.ops.elementary import clamp_max, clamp_min, rsqrt, square
from taugrad.tensors.ops.masking import tril, triu
from taugrad.tensors.ops.gather import (
    gather, index_add, index_select, masked_fill, masked_select, scatter, scatter_add, take_along_dim,
)
from taugrad.tensors.ops.sorting import argsort, sort, topk, unique
from taugrad.tensors.ops.hist import bincount, histc, histogram
from taugrad.tensors.ops.scan import cumprod, cumsum, prod
from taugrad.tensors.ops.rearrange import (
    contiguous, flip, movedim, moveaxis, narrow, repeat_interleave, roll, swapdims, swapdims as swapaxes, t,
    tile, unbind,
)
from taugrad.tensors.ops.einsum import einsum
from taugrad.tensors.ops.linalg import cross, diag, norm, outer, outer as ger, trace
from taugrad.tensors.ops.compare import allclose, equal, isclose, isfinite, isinf, isnan, isneginf, isposinf
from taugrad.tensors.ops.matmul import addmm, bmm, dot, mm, mv
from taugrad.tensors.ops.elementwise import floor_divide, fmod, reciprocal, remainder
from taugrad.tensors.ops.elementary import hypot, lerp, logaddexp, nan_to_num, xlogy
from taugrad.tensors.ops.reduce import count_nonzero, nanmean, nansum
from taugrad.tensors.ops.masking import nonzero
from taugrad.tensors.ops.rearrange import diff
from taugrad.tensors.ops.shape import unflatten
from taugrad.tensors.ops.elementwise import ceil, floor, neg, neg as negative, round, sign, trunc, trunc as fix
from taugrad.tensors.core.node import is_tensor
from taugrad.tensors.core.size import Size
from taugrad.tensors.core.dtypes import finfo, iinfo
from taugrad.tensors.legacy_types import (  # noqa: F401  (torch's legacy types: FloatTensor([1, 2]), isinstance)
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor,
)
from taugrad.tensors.core.memory_format import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from taugrad.tensors.core.printing import set_printoptions
from taugrad.tensors.ops.elementwise import (  # comparisons as functions, with torch's long names
    addcdiv, addcmul, eq, ge, ge as greater_equal, gt, gt as greater, le, le as less_equal, lt, lt as less, ne,
    ne as not_equal,
)
from taugrad.tensors.ops.shape import broadcast_tensors, dstack, hstack, meshgrid, vstack
from taugrad.tensors.ops.index import select, take
from taugrad.tensors.ops.linalg import diagonal
from taugrad.tensors.ops.matmul import tensordot
from taugrad.tensors.ops.gather import index_fill
from taugrad.tensors.ops.trig import deg2rad, rad2deg
from taugrad.tensors.ops.elementary import frac
from taugrad.tensors.ops.compare import signbit
from taugrad.tensors.ops.elementwise import bitwise_and, bitwise_or, bitwise_xor
from taugrad.tensors.ops.elementwise import clone
from taugrad.tensors.ops.masking import argwhere
from taugrad.tensors.ops.compare import isin
from taugrad.tensors.ops.sorting import bucketize, searchsorted
from taugrad.tensors.ops.shape import atleast_1d, atleast_2d, atleast_3d
from taugrad.tensors.ops.creation import scalar_tensor, tril_indices, triu_indices
from taugrad.tensors.custom_function import Function, FunctionCtx
from taugrad.tensors.out_param import add, div, matmul, mul, pow, sub  # torch.add(a, b, out=c) and friends
from taugrad.tensors.out_param import div as divide, div as true_divide
from taugrad.tensors.out_param import (  # the factory functions with torch's out=
    arange, empty, eye, full, linspace, logspace, ones, rand, randint, randn, randperm, zeros,
)

# registered ops that torch also offers as top-level functions (torch.conv2d, torch.relu_, ...)
from taugrad.tensors.ops.conv import conv1d, conv2d, conv_transpose2d
from taugrad.tensors.ops.pool import avg_pool1d, max_pool1d, max_pool2d
from taugrad.tensors.ops.norm import group_norm, layer_norm
from taugrad.tensors.ops.dropout import dropout
from taugrad.tensors.ops.elementwise import positive, rsub
from taugrad.tensors.ops.conversion import get_device, is_nonzero, is_same_size, is_signed
from taugrad.tensors.core.rule import forward_of as _forward_of
from taugrad.tensors.out_param import mul as multiply, sub as subtract
from taugrad.tensors.ops.elementwise import abs as absolute, sgn
from taugrad.tensors.ops.shape import cat as concat, expand as broadcast_to
from taugrad.tensors.ops.trig import acosh, acosh as arccosh, asinh, asinh as arcsinh, atanh, atanh as arctanh
from taugrad.tensors.ops.explog import logit
from taugrad.tensors.ops.rearrange import fliplr, flipud, ravel
from taugrad.tensors.ops.reduce import std_mean, var_mean
from taugrad.settings import (
    are_deterministic_algorithms_enabled, get_float32_matmul_precision, get_num_interop_threads, get_num_threads,
    is_deterministic_algorithms_warn_only_enabled, set_float32_matmul_precision, set_num_interop_threads,
    set_num_threads, use_deterministic_algorithms,
)

#: torch's functions that are methods here: ``torch.detach(x)`` is ``x.detach()``
detach, is_complex, is_floating_point = Tensor.detach, Tensor.is_complex, Tensor.is_floating_point

#: torch's in-place functions: ``taugrad.relu_(x)`` is ``x.relu_()``, the registered in-place op itself
_INPLACE_FUNCTIONS = (
    "abs_", "acos_", "asin_", "atan_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "cos_", "cosh_", "deg2rad_",
    "erf_", "exp2_", "exp_", "expm1_", "fill_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_",
    "nan_to_num_", "neg_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_",
    "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_", "asinh_", "acosh_", "atanh_", "arcsinh_",
    "arccosh_", "arctanh_", "logit_", "arccos_", "arcsin_", "arctan_", "fix_", "negative_", "clip_",
)
from taugrad.tensors.core.rule import OPS as _OPS
# an alias (``arcsinh_``) is a method name of the op it renames, not an op of its own
globals().update({_name: _forward_of(_name) if _name in _OPS else getattr(Tensor, _name) for _name in _INPLACE_FUNCTIONS})

# libraries on top of the engines
from taugrad import autograd, data, datasets, func, functional, nn, optim, utils
from taugrad import linalg  # torch.linalg's norms
from taugrad import distributions  # probability distributions, as torch.distributions
from taugrad import sparse  # sparse COO tensors, as torch.sparse
from taugrad.sparse import sparse_coo_tensor, spmm
from taugrad import accelerator, backends, cuda, random  # devices and seeding, as torch's
from taugrad import settings  # threads, deterministic algorithms, matmul precision
from taugrad import multiprocessing  # torch.multiprocessing: tensors in shared memory
from taugrad import amp, distributed  # mixed precision and process groups, as torch answers without them
from taugrad.amp import autocast
import taugrad.cuda.amp  # noqa: F401 - torch.cuda.amp is an attribute of torch.cuda
from taugrad.autograd import grad  # one grad() for Tensors and Values
from taugrad.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from taugrad.serialization import CheckpointError, load, save
from taugrad.compile import compile  # noqa: A001 - capture a step once, replay its kernels (torch.compile's name)

# learner and debugging tools
from taugrad.learn.check import check
from taugrad.learn.expr import ExpressionError
from taugrad.learn.draw import draw_dot
from taugrad.debug import anomaly
from taugrad.debug.anomaly import AnomalyError, detect_anomaly
from taugrad.autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from taugrad.nn.functional import (  # nn.functional's that torch also has at its top level
    celu, cosine_similarity, hardshrink, pairwise_distance, pixel_shuffle, pixel_unshuffle, prelu, selu, threshold,
)

__version__ = "0.1.0"

# what ``from taugrad import *`` gives: every public function, class, dtype and library module
# (tests/architecture/test_exports.py checks that no registered torch function or module is missing)
__all__ = [
    "Size",
    "AnomalyError", "BoolTensor", "ByteTensor", "CharTensor", "CheckpointError", "DoubleTensor", "ExpressionError",
    "FloatTensor", "Function", "FunctionCtx", "Generator", "GradcheckError", "GraphReleasedError", "HalfTensor",
    "IntTensor", "LongTensor", "ShortTensor", "Tensor", "Value", "abs", "abs_", "accelerator", "acos", "acos_",
    "add", "addcdiv", "addcmul", "addmm", "all", "allclose", "amax", "amin", "amp", "anomaly", "any", "arange",
    "arccos", "arcsin", "arctan", "arctan2", "argmax", "argmin", "argsort", "argwhere", "as_tensor", "asin",
    "asin_", "atan", "atan2", "atan_", "atleast_1d", "atleast_2d", "atleast_3d", "autocast", "autograd",
    "avg_pool1d", "backends", "bernoulli", "bfloat16", "bincount", "bitwise_and", "bitwise_not", "bitwise_or",
    "bitwise_xor", "bmm", "bool", "broadcast_tensors", "bucketize", "cat", "cdouble", "ceil", "ceil_", "cfloat",
    "channels_last", "channels_last_3d", "check", "chunk", "clamp", "clamp_", "clamp_max", "clamp_max_",
    "clamp_min", "clamp_min_", "clip", "clone", "compile", "complex128", "complex64", "concatenate", "contiguous",
    "contiguous_format", "conv1d", "conv2d", "conv_transpose2d", "cos", "cos_", "cosh", "cosh_", "count_nonzero",
    "cross", "cuda", "cumprod", "cumsum", "data", "datasets", "debug", "default_generator", "deg2rad", "deg2rad_",
    "detect_anomaly", "device", "diag", "diagonal", "diff", "distributed", "distributions", "div", "divide", "dot",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_anomaly_enabled",
    "double", "draw_dot", "dropout", "dstack", "dtype", "einsum", "empty", "empty_like", "enable_grad", "eq",
    "equal", "erf", "erf_", "exp", "exp2", "exp2_", "exp_", "expand", "expm1", "expm1_", "eye", "fill_", "finfo",
    "fix", "flatten", "flip", "float", "float16", "float32", "float64", "floor", "floor_", "floor_divide", "fmod",
    "frac", "frac_", "from_dlpack", "from_numpy", "full", "full_like", "func", "functional", "gather", "ge", "gelu",
    "ger", "get_default_device", "get_default_dtype", "get_device", "get_rng_state", "grad", "gradcheck",
    "gradgradcheck", "greater", "greater_equal", "group_norm", "gt", "half", "histc", "histogram", "hstack",
    "hypot", "iinfo", "index_add", "index_fill", "index_select", "inference_mode", "initial_seed", "int", "int16",
    "int32", "int64", "int8", "is_grad_enabled", "is_inference_mode_enabled", "is_nonzero", "is_same_size",
    "is_signed", "is_tensor", "isclose", "isfinite", "isin", "isinf", "isnan", "isneginf", "isposinf", "layer_norm",
    "le", "learn", "lerp", "less", "less_equal", "linalg", "linspace", "load", "log", "log10", "log10_", "log1p",
    "log1p_", "log2", "log2_", "log_", "log_softmax", "logaddexp", "logical_and", "logical_not", "logical_or",
    "logical_xor", "logspace", "logsumexp", "long", "lt", "manual_seed", "masked_fill", "masked_select", "matmul",
    "max", "max_pool1d", "max_pool2d", "maximum", "mean", "memory_format", "meshgrid", "min", "minimum", "mm",
    "moveaxis", "movedim", "mul", "multinomial", "multiprocessing", "mv", "nan_to_num", "nan_to_num_", "nanmean",
    "nansum", "narrow", "ne", "neg", "neg_", "negative", "nn", "no_grad", "nonzero", "norm", "normal", "not_equal",
    "numel", "ones", "ones_like", "optim", "outer", "pad", "permute", "poisson", "positive", "pow",
    "preserve_format", "prod", "promote_types", "rad2deg", "rad2deg_", "rand", "rand_like", "randint",
    "randint_like", "randn", "randn_like", "random", "randperm", "reciprocal", "reciprocal_", "relu", "relu_",
    "remainder", "repeat_interleave", "reshape", "roll", "round", "round_", "rsqrt", "rsqrt_", "rsub", "save",
    "scalar", "scalar_tensor", "scatter", "scatter_add", "searchsorted", "seed", "select", "serialization",
    "set_default_device", "set_default_dtype", "set_grad_enabled", "set_printoptions", "set_rng_state", "short",
    "sigmoid", "sigmoid_", "sign", "signbit", "sin", "sin_", "sinh", "sinh_", "softmax", "sort", "split", "sqrt",
    "sparse", "sparse_coo_tensor", "spmm",
    "sqrt_", "square", "square_", "squeeze", "stack", "std", "sub", "sum", "swapaxes", "swapdims", "t", "take",
    "take_along_dim", "tan", "tan_", "tanh", "tanh_", "tensor", "tensordot", "tile", "topk", "trace", "transpose",
    "tril", "tril_indices", "triu", "triu_indices", "true_divide", "trunc", "trunc_", "uint16", "uint32", "uint64",
    "uint8", "unbind", "unflatten", "unique", "unsqueeze", "utils", "var", "vstack", "where", "xlogy", "xlogy_",
    "zero_", "zeros", "zeros_like",
    "multiply", "subtract", "absolute", "sgn", "concat", "broadcast_to", "acosh", "arccosh", "asinh", "arcsinh",
    "atanh", "arctanh", "logit", "fliplr", "flipud", "ravel", "std_mean", "var_mean",
    "are_deterministic_algorithms_enabled", "get_float32_matmul_precision", "get_num_interop_threads",
    "get_num_threads", "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
    "set_num_interop_threads", "set_num_threads", "use_deterministic_algorithms", "detach", "is_complex",
    "is_floating_point", "celu", "cosine_similarity", "hardshrink", "pairwise_distance", "pixel_shuffle",
    "pixel_unshuffle", "prelu", "selu", "threshold", "settings",
    "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asinh_", "atanh_", "clip_", "fix_",
    "logit_", "negative_",
]

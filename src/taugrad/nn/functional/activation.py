"""Activations of ``torch.nn.functional`` composed from registered Tensor ops.

Each is a short composition, so its gradient (and higher derivatives) comes
from the ops' own rules.  Where a composition would differ from PyTorch at a
point (a kink, a branch whose other side overflows), the formula is arranged
to give PyTorch's value and gradient there; the comments say how.
"""
from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.core.backend import array_module, device_of, move_like
from taugrad.tensors.core.generator import get_generator
from taugrad.tensors.core.node import Tensor, constant
from taugrad.tensors.ops.elementwise import relu as _relu, sigmoid as _sigmoid, where
from taugrad.tensors.ops.trig import tanh as _tanh
from taugrad.tensors.ops.inplace import apply_inplace, relu_ as _relu_inplace
from taugrad.nn.functional._helpers import floating as _floating, input_tensor as _tensor
from taugrad.tensors.ops.losses import binary_cross_entropy_with_logits
from taugrad.tensors.ops.softmax import log_softmax as _log_softmax, softmax as _softmax

__all__ = [
    "sigmoid",
    "tanh",
    "prelu",
    "softmax",
    "log_softmax",
    "relu",
    "relu_",
    "leaky_relu_",
    "elu_",
    "hardtanh_",
    "selu_",
    "celu_",
    "threshold_",
    "rrelu_",
    "silu",
    "leaky_relu",
    "elu",
    "softplus",
    "hardtanh",
    "relu6",
    "softsign",
    "logsigmoid",
    "selu",
    "celu",
    "mish",
    "hardswish",
    "hardsigmoid",
    "glu",
    "softmin",
    "threshold",
    "softshrink",
    "hardshrink",
    "tanhshrink",
    "rrelu",
]

#: SELU's constants (Klambauer et al., 2017), as PyTorch writes them
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
#: PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, whatever the dtype
_ONE_SIXTH_FLOAT32 = float(np.float32(1.0 / 6.0))


def silu(input: Any, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (the swish of Ramachandran et al., 2017)."""
    if inplace:
        return apply_inplace(input, "silu_", lambda t: silu(t), "SiluBackward0")
    x = _floating(_tensor(input, "silu"), "silu")
    return x * x.sigmoid()


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``negative_slope * x`` (slope ``negative_slope`` at 0, as PyTorch)."""
    if inplace:
        return apply_inplace(input, "leaky_relu_", lambda t: leaky_relu(t, negative_slope), "LeakyReluBackward1")
    x = _floating(_tensor(input, "leaky_relu"), "leaky_relu")
    return where(x > 0, x, x * negative_slope)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)`` (Clevert et al., 2016).

    The exponential is taken of ``min(x, 0)``: on the positive side its branch
    is discarded, and ``exp`` of a large ``x`` would overflow to inf and turn the
    discarded branch's zero gradient into nan.
    """
    if inplace:
        return apply_inplace(input, "elu_", lambda t: elu(t, alpha), "EluBackward1")
    x = _floating(_tensor(input, "elu"), "elu")
    negative = x.clip(None, 0.0)
    return where(x > 0, x, (negative.exp() - 1.0) * alpha)


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold`` (as PyTorch).

    ``log(1 + exp(z))`` is the binary cross-entropy with logits of ``z`` against
    target 0, whose fused op is stable for any ``z`` and has the exact gradient
    ``sigmoid(z)`` (also at 0), so it is computed that way.
    """
    x = _floating(_tensor(input, "softplus"), "softplus")
    z = x * beta if beta != 1 else x
    zeros = constant(array_module(x._data).zeros(x.shape, dtype=x._data.dtype))
    smooth = binary_cross_entropy_with_logits(z, zeros, reduction="none")
    if beta != 1:
        smooth = smooth * (1.0 / beta)
    return where(z > threshold, x, smooth)


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)``, with gradient 1 strictly inside and 0 at the bounds and outside (as PyTorch)."""
    if inplace:
        return apply_inplace(input, "hardtanh_", lambda t: hardtanh(t, min_val, max_val), "HardtanhBackward0")
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
    x = _floating(_tensor(input, "hardtanh"), "hardtanh")
    inside = (x > min_val) & (x < max_val)
    return where(inside, x, constant(array_module(x._data).clip(x._data, min_val, max_val)))


def relu6(input: Any, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)`` (``hardtanh(x, 0, 6)``)."""
    if inplace:
        return apply_inplace(input, "relu6_", lambda t: relu6(t), "HardtanhBackward0")
    return hardtanh(input, 0.0, 6.0, inplace)


def softsign(input: Any) -> Tensor:
    """``x / (1 + |x|)``."""
    x = _floating(_tensor(input, "softsign"), "softsign")
    return x / (x.abs() + 1.0)


def logsigmoid(input: Any) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, stable for any ``x``."""
    x = _floating(_tensor(input, "logsigmoid"), "logsigmoid")
    return -softplus(-x, threshold=float("inf"))


def selu(input: Any, inplace: bool = False) -> Tensor:
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with PyTorch's ``alpha`` and ``scale``.

    As ``elu``: the exponential is taken of ``min(x, 0)`` so a large ``x`` does
    not overflow, and at ``x = 0`` the gradient is the negative side's
    ``scale * alpha`` (PyTorch's convention).
    """
    if inplace:
        return apply_inplace(input, "selu_", lambda t: selu(t), "EluBackward1")
    x = _floating(_tensor(input, "selu"), "selu")
    negative = x.clip(None, 0.0)
    return where(x > 0, x * SELU_SCALE, (negative.exp() - 1.0) * (SELU_ALPHA * SELU_SCALE))


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (Barron, 2017); ``alpha = 0`` is an error.

    The exponential is taken of ``min(x, 0) / alpha`` (no overflow on the
    discarded positive side); at ``x = 0`` the gradient is the negative side's,
    as PyTorch's.  PyTorch's backward divides by ``alpha`` rounded to float32
    (``1.0 / alpha.toFloat()``) while its forward uses ``alpha`` itself, so for
    an ``alpha`` float32 cannot hold (0.6) the negative side's gradient is
    ``alpha * c * exp(x * c)`` with ``c = 1 / float32(alpha)``: the value is
    the exact one, detached, plus ``t - t.detach()`` (zero) for that curve ``t``
    (where ``t`` is finite).
    """
    if inplace:
        return apply_inplace(input, "celu_", lambda t: celu(t, alpha), "CeluBackward1")
    if alpha == 0:
        raise ZeroDivisionError("celu: alpha cannot be 0")
    x = _floating(_tensor(input, "celu"), "celu")
    negative = x.clip(None, 0.0)
    smooth = ((negative * (1.0 / alpha)).exp() - 1.0) * alpha
    scale = 1.0 / float(np.float32(alpha))
    if scale != 1.0 / alpha:
        tangent = (negative * scale).exp() * alpha
        finite = constant(array_module(x._data).isfinite(tangent._data))
        smooth = where(finite, smooth.detach() + (tangent - tangent.detach()), smooth)
    return where(x > 0, x, smooth)


def mish(input: Any, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (Misra, 2019).

    The stable ``softplus`` keeps ``exp(x)`` from overflowing at any ``x``.
    PyTorch's softplus here has no threshold, but above softplus's default 20
    ``tanh`` is 1 in float64 either way (and its derivative 0), so the
    threshold changes no value or derivative and makes ``mish(inf) = inf``.
    """
    if inplace:
        return apply_inplace(input, "mish_", lambda t: mish(t), "MishBackward0")
    x = _floating(_tensor(input, "mish"), "mish")
    return x * softplus(x).tanh()


def hardsigmoid(input: Any, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``: 0 up to -3, 1 from 3, linear between.

    The gradient is PyTorch's: 0 at and outside ``x = +-3``, and inside
    ``1/6`` rounded to float32 (0.16666667163...) even for float64, since
    PyTorch's backward uses that constant.  The value stays the exact
    ``(x + 3) / 6``: the slope rides on ``t - t.detach()`` (zero), with ``t``
    the input strictly inside and 0 elsewhere (so no ``inf - inf``).
    """
    if inplace:
        return apply_inplace(input, "hardsigmoid_", lambda t: hardsigmoid(t), "HardsigmoidBackward0")
    x = _floating(_tensor(input, "hardsigmoid"), "hardsigmoid")
    exact = constant(array_module(x._data).clip(x._data + 3.0, 0.0, 6.0) / 6.0)
    inside = where((x > -3.0) & (x < 3.0), x, 0.0)
    return exact + (inside - inside.detach()) * _ONE_SIXTH_FLOAT32


def hardswish(input: Any, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (Howard et al., 2019).

    ``relu6`` has gradient 0 at its bounds, so the product rule gives
    PyTorch's gradients at the kinks: 0 at ``x = -3`` and 1 at ``x = 3``
    (``x / 3 + 1/2`` strictly between).
    """
    if inplace:
        return apply_inplace(input, "hardswish_", lambda t: hardswish(t), "HardswishBackward0")
    x = _floating(_tensor(input, "hardswish"), "hardswish")
    return x * relu6(x + 3.0) / 6.0


def glu(input: Any, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)``, where ``a`` and ``b`` are the first and second halves of the input along ``dim``."""
    x = _floating(_tensor(input, "glu"), "glu")
    if x.ndim == 0:
        raise ValueError("glu: a 0-d tensor has no dimension to halve")
    d = normalize_dim(dim, x.ndim, "glu")
    size = x.shape[d]
    if size % 2:
        raise ValueError(f"glu: the halved dimension must have an even size, but dimension {dim} has size {size}")
    half = size // 2
    return x.narrow(d, 0, half) * x.narrow(d, half, half).sigmoid()


def implicit_dim(op: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's legacy choice of dim when none is given: 0 for 0-, 1- and 3-d inputs, else 1 (with its warning)."""
    warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call to include dim=X as "
                  "an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Any, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    r"""``exp(x) / sum(exp(x), dim)``: :math:`\mathrm{softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}` along ``dim``.

    Without ``dim``, PyTorch's legacy choice (with its warning): 0 for 0-, 1-
    and 3-d inputs, else 1 -- not the last dim.  ``dtype`` casts the input first.
    """
    x = _tensor(input, "softmax")
    if dim is None:
        dim = implicit_dim("softmax", x.ndim, _stacklevel)
    return _softmax(x, dim, dtype=dtype)


def log_softmax(input: Any, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    r"""``x - logsumexp(x, dim)``: :math:`\log \mathrm{softmax}(x)` along ``dim``, stable for any logits.

    Without ``dim``, PyTorch's legacy choice, as :func:`softmax`.
    """
    x = _tensor(input, "log_softmax")
    if dim is None:
        dim = implicit_dim("log_softmax", x.ndim, _stacklevel)
    return _log_softmax(x, dim, dtype=dtype)


def softmin(input: Any, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``softmax(-x, dim)``; ``dtype`` casts the input first, as softmax's.

    Without ``dim``, PyTorch's legacy choice (with its warning), as :func:`softmax`.
    """
    x = _floating(_tensor(input, "softmin"), "softmin") if dtype is None else _tensor(input, "softmin")
    if dim is None:
        dim = implicit_dim("softmin", x.ndim, _stacklevel)
    return _softmax(-x, dim, dtype=dtype)


def threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value`` (gradient 0 at ``x = threshold``, as PyTorch).

    Written as ``value if x <= threshold else x``, PyTorch's test, so a nan input stays nan.
    """
    if inplace:
        return apply_inplace(input, "threshold_", lambda t, limit=threshold: _threshold(t, limit, value),
                             "ThresholdBackward1")
    return _threshold(input, threshold, value)


def _threshold(input: Any, limit: float, value: float) -> Tensor:
    x = _floating(_tensor(input, "threshold"), "threshold")
    return where(x <= limit, value, x)


def softshrink(input: Any, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    At ``x = +-lambd`` the value and gradient are 0 (PyTorch's): the middle
    branch is ``x * 0`` (``-0.0`` for negative ``x``, as PyTorch; ``x`` clipped
    first, so no ``inf * 0``), chosen by ``|x| <= lambd``, so a nan input keeps
    gradient 1 as in PyTorch.
    """
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be non-negative, got {lambd}")
    x = _floating(_tensor(input, "softshrink"), "softshrink")
    return where(x.abs() <= lambd, x.clip(-lambd, lambd) * 0.0, where(x > 0, x - lambd, x + lambd))


def hardshrink(input: Any, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0 (value and gradient 0 at ``x = +-lambd``, as PyTorch)."""
    x = _floating(_tensor(input, "hardshrink"), "hardshrink")
    return where((x >= -lambd) & (x <= lambd), 0.0, x)


def tanhshrink(input: Any) -> Tensor:
    """``x - tanh(x)``."""
    x = _floating(_tensor(input, "tanhshrink"), "tanhshrink")
    return x - x.tanh()


def rrelu(input: Any, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: ``x`` where ``x > 0``, else ``a x``.

    Training: ``a ~ U(lower, upper)`` drawn per element (from the generator of
    the input's device), and the gradient there is the same ``a``, as
    PyTorch's (its random numbers are not PyTorch's).  Evaluation: the fixed
    slope ``(lower + upper) / 2``, i.e. ``leaky_relu``.
    """
    if inplace:
        return apply_inplace(input, "rrelu_", lambda t: rrelu(t, lower, upper, training), "RreluWithNoiseBackward1")
    x = _floating(_tensor(input, "rrelu"), "rrelu")
    if not training:
        return leaky_relu(x, (lower + upper) / 2.0)
    data = x._data
    # drawn on the host from the generator of the input's device, then moved there (as every random op)
    draw = get_generator(None, device_of(data)).random(x.shape)
    slope = move_like((lower + (upper - lower) * draw).astype(data.dtype, copy=False), data)
    return where(constant(data > 0), x, x * constant(slope))


def relu(input: Any, inplace: bool = False) -> Tensor:
    """``max(x, 0)`` elementwise; ``inplace=True`` writes it into ``input`` (``relu_``) and returns it."""
    return _relu_inplace(input) if inplace else _relu(input)


def relu_(input: Tensor) -> Tensor:
    """:func:`relu` written into ``input``; returns it."""
    return _relu_inplace(input)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """:func:`leaky_relu` written into ``input``; returns it."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """:func:`elu` written into ``input``; returns it."""
    return elu(input, alpha, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """:func:`hardtanh` written into ``input``; returns it."""
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """:func:`selu` written into ``input``; returns it."""
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """:func:`celu` written into ``input``; returns it."""
    return celu(input, alpha, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """:func:`threshold` written into ``input``; returns it."""
    return apply_inplace(input, "threshold_", lambda t, limit=threshold: _threshold(t, limit, value),
                         "ThresholdBackward1")


def rrelu_(input: Tensor, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0, training: bool = False) -> Tensor:
    """:func:`rrelu` written into ``input``; returns it."""
    return rrelu(input, lower, upper, training, inplace=True)


def prelu(input: Any, weight: Any) -> Tensor:
    r"""Parametric ReLU (He et al., 2015): :math:`y = x` for :math:`x > 0`, else :math:`a_c x`, with one slope
    ``weight`` (numel 1) or one per channel (dim 1; dim 0 of a 1-D input)."""
    x = _floating(_tensor(input, "prelu"), "prelu")
    w = weight if isinstance(weight, Tensor) else Tensor(weight)
    n = w._data.size
    if w.ndim > 1:
        raise ValueError(f"prelu: weight must be a scalar or a 1-D tensor, got shape {tuple(w.shape)}")
    if n != 1:
        channels = x.shape[0] if x.ndim == 1 else (x.shape[1] if x.ndim else 1)
        if n != channels:
            raise ValueError(f"prelu: Mismatch of parameter numbers and input channel size. Found parameter "
                             f"numbers = {n} and channel size = {channels}.")
        w = w.reshape((n,) + (1,) * (x.ndim - 2)) if x.ndim >= 2 else w
    else:
        w = w.reshape(())
    return where(x > 0, x, x * w)


def sigmoid(input: Any) -> Tensor:
    r""":math:`1 / (1 + e^{-x})` elementwise (the op ``sigmoid``, under PyTorch's argument name)."""
    return _sigmoid(input)


def tanh(input: Any) -> Tensor:
    r""":math:`\tanh x` elementwise (the op ``tanh``, under PyTorch's argument name)."""
    return _tanh(input)

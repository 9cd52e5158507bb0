"""Activations and normalisations of ``torch.nn.functional`` composed from registered Tensor ops.

Each is a short composition, so its gradient (and higher derivatives) comes
from the ops' own rules.  Where a composition would differ from PyTorch at a
point (a kink, a branch whose other side overflows), the formula is arranged
to give PyTorch's value and gradient there; the comments say how.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.core.backend import array_module, device_of, move_like, scatter_add
from taugrad.tensors.core.device_checks import as_unsigned, outside_on_device
from taugrad.tensors.core.generator import get_generator
from taugrad.tensors.core.node import Tensor, as_array, bump_version, check_same_device, constant
from taugrad.tensors.ops.elementwise import where
from taugrad.tensors.ops.index import rows_at
from taugrad.tensors.ops.losses import _input_tensor as _tensor  # the losses' input rule, one place
from taugrad.tensors.ops.losses import binary_cross_entropy_with_logits, softmax
from taugrad.tensors.ops.norm import layer_norm  # noqa: F401 - one node with its own rule, listed in __all__

__all__ = [
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
    "normalize",
    "layer_norm",
    "embedding",
]

#: SELU's constants (Klambauer et al., 2017), as PyTorch writes them
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
#: PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, whatever the dtype
_ONE_SIXTH_FLOAT32 = float(np.float32(1.0 / 6.0))


def _floating(x: Tensor, op: str) -> Tensor:
    if x._data.dtype.kind not in "fc":
        raise TypeError(f"{op}: needs a floating tensor, got dtype {x._data.dtype}")
    return x


def silu(input: Any, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (the swish of Ramachandran et al., 2017)."""
    x = _floating(_tensor(input, "silu"), "silu")
    return x * x.sigmoid()


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``negative_slope * x`` (slope ``negative_slope`` at 0, as PyTorch)."""
    x = _floating(_tensor(input, "leaky_relu"), "leaky_relu")
    return where(x > 0, x, x * negative_slope)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)`` (Clevert et al., 2016).

    The exponential is taken of ``min(x, 0)``: on the positive side its branch
    is discarded, and ``exp`` of a large ``x`` would overflow to inf and turn the
    discarded branch's zero gradient into nan.
    """
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
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
    x = _floating(_tensor(input, "hardtanh"), "hardtanh")
    inside = (x > min_val) & (x < max_val)
    return where(inside, x, constant(array_module(x._data).clip(x._data, min_val, max_val)))


def relu6(input: Any, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)`` (``hardtanh(x, 0, 6)``)."""
    return hardtanh(input, 0.0, 6.0)


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


def softmin(input: Any, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``softmax(-x, dim)``; ``dtype`` casts the input first, as softmax's.

    Without ``dim``, PyTorch's legacy choice: 0 for 0-, 1- and 3-d inputs, else 1.
    """
    x = _floating(_tensor(input, "softmin"), "softmin") if dtype is None else _tensor(input, "softmin")
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return softmax(-x, dim, dtype=dtype)


def threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value`` (gradient 0 at ``x = threshold``, as PyTorch).

    Written as ``value if x <= threshold else x``, PyTorch's test, so a nan input stays nan.
    """
    x = _floating(_tensor(input, "threshold"), "threshold")
    return where(x <= threshold, value, x)


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
    x = _floating(_tensor(input, "rrelu"), "rrelu")
    if not training:
        return leaky_relu(x, (lower + upper) / 2.0)
    data = x._data
    # drawn on the host from the generator of the input's device, then moved there (as every random op)
    draw = get_generator(None, device_of(data)).random(x.shape)
    slope = move_like((lower + (upper - lower) * draw).astype(data.dtype, copy=False), data)
    return where(constant(data > 0), x, x * constant(slope))


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None) -> Tensor:
    r"""``x / max(||x||_p, eps)`` along ``dim`` (``torch.nn.functional.normalize``)."""
    if out is not None:
        raise TypeError("normalize: out= is not supported")
    x = _floating(_tensor(input, "normalize"), "normalize")
    if p == 2:
        norm = (x * x).sum(dim=dim, keepdim=True).sqrt()
    elif p == 1:
        norm = x.abs().sum(dim=dim, keepdim=True)
    elif p == float("inf"):
        norm = x.abs().amax(dim=dim, keepdim=True)
    else:
        norm = (x.abs() ** p).sum(dim=dim, keepdim=True) ** (1.0 / p)
    return x / norm.clip(eps, None)


def embedding(input: Any, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    r"""Rows of ``weight`` at the integer indices ``input`` (any shape; the output appends the row).

    ``padding_idx``: that row gets no gradient.  ``max_norm``: each row the
    input refers to whose ``norm_type``-norm exceeds it is first scaled in
    place to ``max_norm`` (by ``max_norm / (norm + 1e-7)``, as PyTorch; not
    recorded in the graph).  ``scale_grad_by_freq``: row ``i``'s gradient is
    divided by the number of times ``i`` occurs in ``input``.  ``sparse``
    gradients are not supported (taugrad has no sparse tensors).
    """
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported (taugrad has no sparse tensors)")
    index = input._data if isinstance(input, Tensor) else as_array(input)
    if index.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {index.dtype}")
    rows = weight.shape[0]
    xp = array_module(weight._data)
    if not isinstance(index, np.ndarray) and type(index) is not type(weight._data):
        check_same_device("embedding", input, weight)  # indices on a device, the table on the CPU
    if isinstance(index, np.ndarray):
        if index.size and as_unsigned(index).max() >= rows:  # one pass for both bounds
            raise IndexError(f"embedding: index out of range for {rows} rows: min {index.min()}, max {index.max()}")
        index = move_like(index, weight._data)  # host indices for a table on a device: moved, as getitem does
    else:  # the check stays on the device; index 0 stands in until it raises at the next read
        outside = outside_on_device(index, rows, ("embedding", rows), IndexError,
                                    f"embedding: an index is out of range for {rows} rows")
        index = xp.where(outside, 0, index)
    if max_norm is not None:
        _renorm_rows(weight, index, max_norm, norm_type)
    out = rows_at(weight, index)  # checked above: not again by getitem
    if padding_idx is not None:
        keep = (index != padding_idx % rows)[..., None].astype(weight._data.dtype)
        out = where(constant(keep > 0), out, out.detach())  # same values, no gradient into the padding row
    if scale_grad_by_freq:
        counts = xp.zeros(rows, dtype=weight._data.dtype)
        flat = index.reshape(-1)
        scatter_add(counts, flat, xp.ones(flat.shape, dtype=counts.dtype))
        scale = constant((1.0 / counts[index])[..., None])
        fixed = out.detach()
        out = fixed + (out - fixed) * scale  # the same values (x + 0); the gradient divided by the count
    return out


def _renorm_rows(weight: Tensor, index, max_norm: float, norm_type: float) -> None:
    """Scale, in place and outside the graph, the rows at ``index`` whose norm exceeds ``max_norm``."""
    data = weight._data
    xp = array_module(data)
    if isinstance(data, np.ndarray):
        used = xp.unique(index)  # the rows referred to (few, for a large table)
        picked = data[used]
        data[used] = picked * _renorm_scale(xp, picked, max_norm, norm_type, True)
    else:  # on a device: every row, masked, so that no size depends on the values (no read-back)
        used = xp.zeros(data.shape[0], dtype=bool)
        used[index.reshape(-1)] = True
        data *= _renorm_scale(xp, data, max_norm, norm_type, used)
    bump_version(weight)


def _renorm_scale(xp, rows, max_norm: float, norm_type: float, used):
    """A column of factors: ``max_norm / (norm + 1e-7)`` for the ``used`` rows longer than ``max_norm``, else 1."""
    if norm_type == float("inf"):
        norms = xp.abs(rows).max(axis=1)
    else:
        norms = (xp.abs(rows) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    return xp.where((norms > max_norm) & used, max_norm / (norms + 1e-7), 1.0).astype(rows.dtype)[:, None]

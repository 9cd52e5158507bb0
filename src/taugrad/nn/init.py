"""Weight initialisation, as ``torch.nn.init``, drawing from a seedable NumPy generator.

Every function fills the tensor's values in place and returns the tensor.  Random
numbers come from ``generator`` when given, else from taugrad's default
generator, which ``taugrad.manual_seed(seed)`` (also available here as
:func:`manual_seed`) resets, so seeding then building a model always gives the
same weights.  :class:`~taugrad.nn.Dropout` draws from the same generator.

Fans (``fan_in``, ``fan_out``) follow PyTorch: for a weight of shape
``(out, in, *kernel)`` they are ``in * prod(kernel)`` and ``out * prod(kernel)``.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

import numpy as np

from taugrad.tensors.core.backend import device_of, move_like
from taugrad.tensors.ops.inplace import bump_version
from taugrad.tensors.core.generator import default_generator, get_generator, manual_seed
from taugrad.tensors.core.node import Tensor

__all__ = [
    "manual_seed",
    "default_generator",
    "calculate_gain",
    "calculate_fan_in_and_fan_out",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "zeros_",
    "ones_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "xavier_uniform_",
    "xavier_normal_",
    "eye_",
    "dirac_",
    "orthogonal_",
    "sparse_",
]


def _rng(generator: Optional[np.random.Generator], tensor: Any) -> np.random.Generator:
    """``generator``'s stream, or the default one of ``tensor``'s device (draws are made on the host)."""
    return get_generator(generator, device_of(tensor._data))


def _fill(tensor: Any, values: Any) -> Any:
    target = tensor._data
    if type(values) is np.ndarray:  # drawn on the host: sent to the tensor's device
        values = move_like(values, target)
    target[...] = values  # cast to the tensor's dtype; the array object is kept
    if isinstance(tensor, Tensor):
        bump_version(tensor)  # a graph recorded before this change can no longer be backpropagated
    return tensor


def calculate_gain(nonlinearity: str, param: Optional[float] = None) -> float:
    """The gain that keeps activations' variance stable through ``nonlinearity`` (PyTorch's table)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
              "sigmoid", "identity")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1.0 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4.0
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def calculate_fan_in_and_fan_out(tensor: Any) -> Tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of shape ``(out, in, *kernel)``; needs 2 or more dims."""
    shape = tensor.shape
    if len(shape) < 2:
        raise ValueError(f"fan in and fan out need a tensor of at least 2 dimensions, got shape {tuple(shape)}")
    receptive_field = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive_field, shape[0] * receptive_field


def _fan(tensor: Any, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Any, a: float = 0.0, b: float = 1.0, generator: Optional[np.random.Generator] = None) -> Any:
    """Fill with samples of U(a, b)."""
    return _fill(tensor, _rng(generator, tensor).uniform(a, b, size=tensor.shape))


def normal_(tensor: Any, mean: float = 0.0, std: float = 1.0, generator: Optional[np.random.Generator] = None) -> Any:
    """Fill with samples of N(mean, std^2)."""
    return _fill(tensor, _rng(generator, tensor).normal(mean, std, size=tensor.shape))


def trunc_normal_(tensor: Any, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Optional[np.random.Generator] = None) -> Any:
    """Fill with samples of N(mean, std^2) conditioned on ``a <= x <= b`` (absolute bounds, as PyTorch).

    Drawn by rejection: out-of-range samples are redrawn until none is left,
    which is the exact truncated distribution (PyTorch inverts the CDF instead;
    the distribution is the same, the numbers are not).
    """
    if not a < b:
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")
    rng = _rng(generator, tensor)
    values = rng.normal(mean, std, size=tensor.shape)
    outside = (values < a) | (values > b)
    for _ in range(10_000):
        if not outside.any():
            break
        values[outside] = rng.normal(mean, std, size=int(outside.sum()))
        outside = (values < a) | (values > b)
    else:  # an interval far in a tail: accept nothing outside it
        raise ValueError(f"trunc_normal_: [{a}, {b}] is too far in the tail of N({mean}, {std}^2) to sample")
    return _fill(tensor, values)


def constant_(tensor: Any, val: float) -> Any:
    """Fill with ``val`` (torch's parameter name, so ``constant_(w, val=0.1)`` works)."""
    return _fill(tensor, val)


def zeros_(tensor: Any) -> Any:
    return constant_(tensor, 0.0)


def ones_(tensor: Any) -> Any:
    return constant_(tensor, 1.0)


def kaiming_uniform_(
    tensor: Any,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Optional[np.random.Generator] = None,
) -> Any:
    """He et al. (2015): U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``.

    ``Linear`` uses ``a = sqrt(5)``: ``gain = sqrt(2 / (1 + 5)) = sqrt(1/3)``, so
    ``bound = 1 / sqrt(fan_in)``.
    """
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor  # nothing to scale by (an empty weight), as PyTorch
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Any,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Optional[np.random.Generator] = None,
) -> Any:
    """He et al. (2015): N(0, std^2) with ``std = gain / sqrt(fan)``."""
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def xavier_uniform_(tensor: Any, gain: float = 1.0, generator: Optional[np.random.Generator] = None) -> Any:
    """Glorot & Bengio (2010): U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / max(fan_in + fan_out, 1))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Any, gain: float = 1.0, generator: Optional[np.random.Generator] = None) -> Any:
    """Glorot & Bengio (2010): N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / max(fan_in + fan_out, 1)), generator)


_calculate_fan_in_and_fan_out = calculate_fan_in_and_fan_out  # PyTorch's private name, which code calls


def eye_(tensor: Any) -> Any:
    r"""Fill the 2-D ``tensor`` with the identity: :math:`W_{ij} = [i = j]` (rectangular: ones on the diagonal)."""
    if len(tensor.shape) != 2:
        raise ValueError(f"eye_: Only tensors with 2 dimensions are supported, got shape {tuple(tensor.shape)}")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Any, groups: int = 1) -> Any:
    r"""Fill a (out, in, *kernel) convolution weight (3 to 5 dims) so that the convolution is the identity.

    In each of the ``groups`` groups of ``out / groups`` output channels, channel ``d`` gets a 1 at the
    kernel's centre of input channel ``d`` (for ``d < min(out / groups, in)``), every other weight 0:
    :math:`W_{g n + d,\, d,\, \lfloor k/2 \rfloor} = 1`.
    """
    shape = tuple(tensor.shape)
    if len(shape) not in (3, 4, 5):
        raise ValueError(f"dirac_: Only tensors with 3, 4, or 5 dimensions are supported, got shape {shape}")
    if shape[0] % groups != 0:
        raise ValueError(f"dirac_: dim 0 must be divisible by groups, got {shape[0]} and groups={groups}")
    per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(n // 2 for n in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d) + centre] = 1.0
    return _fill(tensor, values)


def orthogonal_(tensor: Any, gain: float = 1.0, generator: Optional[np.random.Generator] = None) -> Any:
    r"""Fill with a (semi-)orthogonal matrix times ``gain`` (Saxe et al., 2013), as PyTorch draws it.

    The tensor is seen as (rows, everything else); a standard normal matrix of
    that shape (transposed if wider than tall) is factored ``A = QR`` and ``Q``'s
    columns are signed by ``diag(R)``, which makes ``Q`` uniformly distributed:
    :math:`W W^\top = g^2 I` (rows <= cols) or :math:`W^\top W = g^2 I`.
    """
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(f"orthogonal_: Only tensors with 2 or more dimensions are supported, got shape {shape}")
    if math.prod(shape) == 0:
        return tensor
    rows = shape[0]
    cols = math.prod(shape) // rows
    flat = _rng(generator, tensor).normal(0.0, 1.0, size=(rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (q * gain).reshape(shape))


def sparse_(tensor: Any, sparsity: float, std: float = 0.01, generator: Optional[np.random.Generator] = None) -> Any:
    r"""Fill the 2-D ``tensor`` from :math:`N(0, \text{std}^2)`, then zero ``ceil(sparsity * rows)`` random rows of
    each column (Martens, 2010)."""
    shape = tuple(tensor.shape)
    if len(shape) != 2:
        raise ValueError(f"sparse_: Only tensors with 2 dimensions are supported, got shape {shape}")
    rows, cols = shape
    rng = _rng(generator, tensor)
    values = rng.normal(0.0, std, size=shape)
    zeros = int(math.ceil(sparsity * rows))
    for col in range(cols):
        values[rng.permutation(rows)[:zeros], col] = 0.0
    return _fill(tensor, values)

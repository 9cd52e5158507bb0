"""The ``Distribution`` base class (``torch.distributions.Distribution``'s contract) and shared helpers.

A distribution has a ``batch_shape`` (independent, differently parameterised
copies) and an ``event_shape`` (one draw's shape);
``sample(sample_shape)`` returns ``sample_shape + batch_shape + event_shape``.
``rsample`` draws by reparameterisation, ``x = T(eps; params)`` with ``eps``
from a fixed distribution, so gradients flow from ``x`` to the parameters;
``sample`` draws without a graph.  Draws come from taugrad's default generator
(``taugrad.manual_seed``), so they are reproducible but are not PyTorch's numbers.

``validate_args`` (default True, as PyTorch; ``Distribution.set_default_validate_args``)
checks the parameters against ``arg_constraints`` when the distribution is
made, and values against ``support`` in ``log_prob``.
"""
from __future__ import annotations

import numbers
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from taugrad.distributions import constraints
from taugrad.grad_mode import no_grad
from taugrad.tensors.core.backend import device_of, to_device
from taugrad.tensors.core.dtypes import DEFAULT_FLOAT
from taugrad.tensors.core.generator import get_generator
from taugrad.tensors.core.node import Tensor

__all__ = ["Distribution", "broadcast_all", "lazy_property", "draw", "probs_to_logits", "logits_to_probs",
           "clamp_probs"]


class lazy_property:
    """An attribute computed on first use and then kept in the instance's ``__dict__`` (``probs`` from
    ``logits`` or the other way round)."""

    def __init__(self, fn) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.fn(instance)
        instance.__dict__[self.__name__] = value
        return value


def _size(shape: Any) -> Tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def broadcast_all(*values: Any) -> Tuple[Tensor, ...]:
    """The arguments as Tensors of one broadcast shape (numbers take the Tensors' dtype, or the default float)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or Tensor.")
    dtype = tensors[0].dtype if tensors else None
    like = tensors[0] if tensors else None
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif like is not None:
            out.append(like.new_tensor(float(v)))
        else:
            out.append(Tensor(np.asarray(v, dtype=DEFAULT_FLOAT[0])))
    shape = np.broadcast_shapes(*[tuple(t.shape) for t in out])
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in out)


def draw(fn, shape: Tuple[int, ...], like: Tensor) -> Tensor:
    """A Tensor (no graph) of ``fn(generator, shape)`` drawn on the host from the default generator of
    ``like``'s device, in ``like``'s dtype, on its device."""
    where = device_of(like._data)
    array = np.asarray(fn(get_generator(None, where), shape)).astype(like._data.dtype, copy=False)
    return Tensor(to_device(array, where) if where.type != "cpu" else array)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept in ``[eps, 1 - eps]`` (eps the dtype's machine epsilon), so their logarithms are finite."""
    eps = float(np.finfo(probs._data.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """``log p`` (``log p - log(1 - p)`` when binary), from clamped probabilities."""
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """``sigmoid(logits)`` when binary, else ``softmax(logits, -1)``."""
    if is_binary:
        return logits.sigmoid()
    return (logits - logits.logsumexp(-1, keepdim=True)).exp()


class Distribution:
    """Base class; see the module docstring."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    arg_constraints: Dict[str, constraints.Constraint] = {}
    support: Optional[constraints.Constraint] = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Whether distributions made afterwards check their arguments (True by default, as PyTorch)."""
        if value not in (True, False):
            raise ValueError("set_default_validate_args: value must be True or False")
        Distribution._validate_args = value

    def __init__(self, batch_shape: Sequence[int] = (), event_shape: Sequence[int] = (),
                 validate_args: Optional[bool] = None) -> None:
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue  # the other parameterisation was given
                value = getattr(self, param)
                if not bool(constraint.check(value)._data.all()):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Tuple[int, ...]:
        return self._batch_shape

    @property
    def event_shape(self) -> Tuple[int, ...]:
        return self._event_shape

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Distribution":
        """The same distribution repeated to ``batch_shape`` (the parameters are expanded views, as PyTorch's).

        Every parameter whose leading dimensions are the batch shape is expanded,
        its event dimensions kept; an inner distribution (``Independent``'s base,
        ``OneHotCategorical``'s Categorical) is expanded likewise.  The copy is
        not validated again.
        """
        batch_shape = _size(batch_shape)
        old = self._batch_shape
        try:
            np.broadcast_shapes(old, batch_shape)
        except ValueError:
            raise ValueError(f"{type(self).__name__}.expand: batch shape {old} cannot be expanded to "
                             f"{batch_shape}") from None
        new = type(self).__new__(type(self))
        for name, value in self.__dict__.items():
            if isinstance(value, Distribution):
                inner = value._batch_shape[len(old):]
                value = value.expand(batch_shape + inner)
            elif isinstance(value, Tensor) and tuple(value.shape[:len(old)]) == old:
                value = value.expand(batch_shape + tuple(value.shape[len(old):]))
            new.__dict__[name] = value
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _extended_shape(self, sample_shape: Any = ()) -> Tuple[int, ...]:
        return _size(sample_shape) + self._batch_shape + self._event_shape

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, without a graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no rsample (it is not reparameterizable); use sample")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    def log_prob(self, value: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _validate_sample(self, value: Any) -> None:
        """As PyTorch: a Tensor, broadcastable to ``batch_shape + event_shape``, inside ``support``."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {tuple(value.shape)} vs "
                             f"{self._event_shape}.")
        actual, expected = tuple(value.shape), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.")
        support = self.support
        if support is None or constraints.is_dependent(support):
            return
        if not bool(support.check(value)._data.all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for p in names:
            v = self.__dict__[p]
            parts.append(f"{p}: {v if v.numel() == 1 else tuple(v.shape)}")
        return f"{type(self).__name__}({', '.join(parts)})"

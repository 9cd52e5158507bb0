"""Random ops on tensors: ``multinomial``, ``bernoulli``, ``poisson``, ``normal`` and the
in-place fills ``random_``, ``bernoulli_``, ``exponential_`` (PyTorch's forms and errors).

Every one takes ``generator=`` (a :class:`taugrad.Generator`; the default
generator of the tensor's device otherwise).  Draws are made on the host, from
the tensor's values brought there, and moved to the tensor's device, so a
seeded run draws the same numbers on every device.  Samples are constants of the graph: they carry no
gradient (PyTorch's samplers give zero gradients to their parameters).
"""
from __future__ import annotations

import operator

import numpy as np

from taugrad.tensors.core import sampling
from taugrad.tensors.core.backend import device_of, move_like, to_device, to_host
from taugrad.tensors.core.device import factory_device
from taugrad.tensors.core.generator import get_generator
from taugrad.tensors.core.node import Tensor, _dtype_of, bump_version, check_inplace, to_array
from taugrad.tensors.core.rule import register


def _tensor_input(x, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


def _shape(size, op: str) -> tuple:
    if not isinstance(size, (tuple, list)):
        size = (size,)
    try:
        shape = tuple(operator.index(n) for n in size)
    except TypeError:
        raise TypeError(f"{op}: size must be a tuple of ints, got {size!r}") from None
    if any(n < 0 for n in shape):
        raise ValueError(f"{op}: negative size in {shape}")
    return shape


@register("multinomial", methods=("multinomial",))
def multinomial(input, num_samples, replacement: bool = False, *, generator=None) -> Tensor:
    """Indices drawn from the categorical distribution with weights ``input`` (int64).

    ``input`` is 1-D (one distribution, result ``(num_samples,)``) or 2-D (one
    per row, result ``(rows, num_samples)``); weights need not sum to one:
    P(i) = w_i / sum(w).  Without replacement each index appears at most once.
    """
    like = _tensor_input(input, "multinomial")._data
    rng = get_generator(generator, device_of(like))
    return Tensor(move_like(sampling.multinomial(rng, to_host(like), num_samples, bool(replacement)), like))


@register("bernoulli", methods=("bernoulli",))
def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """1 with probability ``input[i]`` (or ``p`` for every element when given), else 0; input's dtype."""
    x = _tensor_input(input, "bernoulli")
    sampling.check_floating(x._data.dtype, "bernoulli")
    probs = to_host(x._data) if p is None else p
    rng = get_generator(generator, device_of(x._data))
    return Tensor(move_like(sampling.bernoulli(rng, probs, x.shape, x._data.dtype, "bernoulli"), x._data))


@register("poisson")
def poisson(input, generator=None) -> Tensor:
    """Counts drawn from Poisson(rate) for each rate in ``input`` (same dtype)."""
    like = _tensor_input(input, "poisson")._data
    return Tensor(move_like(sampling.poisson(get_generator(generator, device_of(like)), to_host(like), "poisson"),
                            like))


def _normal_of_tensors(mean, std, generator) -> Tensor:
    like = (mean if isinstance(mean, Tensor) else std)._data
    arrays = [to_host(v._data) if isinstance(v, Tensor) else v for v in (mean, std)]
    tensors = [a for a in arrays if isinstance(a, np.ndarray)]
    for a in tensors:
        sampling.check_floating(a.dtype, "normal")
    try:
        shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    except ValueError:
        raise RuntimeError(f"normal: mean of shape {np.shape(arrays[0])} and std of shape "
                           f"{np.shape(arrays[1])} do not broadcast") from None
    dtype = np.result_type(*tensors)
    rng = get_generator(generator, device_of(like))
    return Tensor(move_like(sampling.normal(rng, arrays[0], arrays[1], shape, dtype, "normal"), like))


@register("normal")
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """Samples of N(mean, std^2), in PyTorch's forms.

    ``normal(mean_tensor, std_tensor)``, ``normal(mean_tensor, std=1.0)``,
    ``normal(mean, std_tensor)``: one sample per element (shapes broadcast);
    ``normal(mean, std, size)``: ``size`` samples (float32 unless ``dtype``).
    """
    dev = factory_device(device, "normal")
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None:
            raise TypeError("normal: size is only for a number mean and std; with a tensor the shape is its own")
        return _normal_of_tensors(mean, std, generator)
    if size is None:
        raise TypeError("normal: with numbers for mean and std give the size too: normal(mean, std, size)")
    dtype = np.dtype(np.float32) if dtype is None else _dtype_of(dtype)
    data = sampling.normal(get_generator(generator, dev), float(mean), float(std), _shape(size, "normal"), dtype,
                           "normal")
    return Tensor(to_device(data, dev), requires_grad=requires_grad)


def _fill(x: Tensor, values: np.ndarray) -> Tensor:
    x._data[...] = move_like(values, x._data)
    bump_version(x)
    return x


@register("random_", methods=("random_",))
def random_(x: Tensor, from_=None, to=None, *, generator=None) -> Tensor:
    """Fill x with integers drawn uniformly: ``random_()`` from [0, 2**mantissa] (floats) or the
    dtype's range, ``random_(to)`` from [0, to), ``random_(from, to)`` from [from, to)."""
    check_inplace(x, "random_")
    if to is None:
        low, high = (0, sampling.full_range_high(x._data.dtype)) if from_ is None else (0, from_)
    else:
        low, high = (0 if from_ is None else from_), to
    rng = get_generator(generator, device_of(x._data))
    values = sampling.integers(rng, operator.index(low), operator.index(high), x.shape,
                               x._data.dtype, "random_")
    return _fill(x, values)


@register("bernoulli_", methods=("bernoulli_",))
def bernoulli_(x: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill x with 1 (probability ``p``, a number or a tensor broadcasting to x) or 0."""
    check_inplace(x, "bernoulli_")
    probs = to_host(p._data) if isinstance(p, Tensor) else to_array(p) if isinstance(p, (list, tuple)) else p
    return _fill(x, sampling.bernoulli(get_generator(generator, device_of(x._data)), probs, x.shape, x._data.dtype,
                                                     "bernoulli_"))


@register("exponential_", methods=("exponential_",))
def exponential_(x: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill x with samples of the exponential distribution, density lambd * exp(-lambd * t)."""
    check_inplace(x, "exponential_")
    return _fill(x, sampling.exponential(get_generator(generator, device_of(x._data)), lambd, x.shape, x._data.dtype,
                                                         "exponential_"))

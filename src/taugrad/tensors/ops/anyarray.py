"""Functions that work on arrays and on Tensors alike, for the local rules.

A rule receives raw arrays on the first-order path and Tensors when
``create_graph=True`` (see :mod:`taugrad.tensors.ops.core`).  Operators and methods are
shared by both already; the few *functions* a rule needs are here: each one
does the array thing for an array and calls the differentiable Tensor op for a
Tensor.  Array functions go through the array's module (``xp``), the seam for a
CuPy backend.
"""
from __future__ import annotations

import math

import numpy as np

from taugrad.tensors.core import backend
from taugrad.tensors.core.backend import ARRAY_MODULES
from taugrad.tensors.core.node import Tensor, array_module, constant, to_array
from taugrad.tensors.core.rule import forward_of

_erf_scalar = np.frompyfunc(math.erf, 1, 1)
_add_reduce = np.add.reduce  # ndarray.sum() goes through a slower Python wrapper


def sum_to(g, shape: tuple):
    """Sum ``g`` over the axes that broadcasting added, down to ``shape``.

    If ``z = f(a)`` broadcast ``a`` from ``shape`` up to ``g.shape``, each element
    of ``a`` fed every output position along the broadcast axes, so its gradient
    is the sum over them: leading axes are summed away, size-1 axes kept.
    """
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead and gshape[lead:] == shape:  # only leading axes (a bias): one reduction, already shaped
        axes = tuple(range(lead))
        return _add_reduce(g, axes) if type(g) is np.ndarray else g.sum(axis=axes)
    inner = tuple(i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)
    if not inner:
        return g.sum(axis=tuple(range(lead)))
    g = g.sum(axis=tuple(range(lead)) + tuple(lead + i for i in inner), keepdims=True)
    return g.reshape(shape)


def broadcast_to(g, shape: tuple):
    """``g`` repeated up to ``shape`` (the adjoint of :func:`sum_to`)."""
    if g.shape == shape:
        return g
    if isinstance(g, Tensor):
        return g.expand(shape)
    if g.ndim == 0 and type(g) is np.ndarray:  # a full reduction's gradient: fast paths
        size = 1
        for n in shape:
            size *= n
        if size <= 4096:  # small: a fresh filled array (cheaper than a broadcast view to make)
            out = np.empty(shape, dtype=g.dtype)
            out[...] = g
            return out
        # large: a read-only view repeating the one element (no memory)
        out = np.ndarray(shape, dtype=g.dtype, buffer=np.ascontiguousarray(g), strides=(0,) * len(shape))
        out.flags.writeable = False
        return out
    return array_module(g).broadcast_to(g, shape)


def where(condition, x, y):
    """Elementwise ``x if condition else y`` (condition is a constant mask)."""
    if isinstance(x, Tensor) or isinstance(y, Tensor):
        return forward_of("where")(condition, x, y)
    if isinstance(condition, Tensor):
        condition = condition._data
    # x or y may be a number (0.0): the module of whichever is an array
    xp = ARRAY_MODULES.get(type(x)) or ARRAY_MODULES.get(type(y)) or array_module(condition)
    return xp.where(condition, x, y)


def array_like(data, like, convert=to_array):
    """``data`` (an array, a number, a list) as an array of ``like``'s backend, on its device.

    For constants an op builds from user input (a list of indices, a mask):
    they join ``like`` where it lives, as torch moves CPU index tensors.
    What is not an array yet is made one by ``convert`` on the host (``to_array``:
    torch's dtypes for Python numbers; ``np.asarray``: NumPy's).
    """
    if isinstance(data, Tensor):
        data = data._data
    elif type(data) is np.ndarray or not backend.is_array(data):
        data = convert(data)
    if type(data) is not type(like):
        data = backend.to_device(data, backend.device_of(like))
    return data


def exp(x):
    return x.exp() if isinstance(x, Tensor) else array_module(x).exp(x)


def log(x):
    return x.log() if isinstance(x, Tensor) else array_module(x).log(x)


def sign(x):
    return x.sign() if isinstance(x, Tensor) else array_module(x).sign(x)


def erf(x):
    if isinstance(x, Tensor):
        return x.erf()
    return erf_array(x)


def _erf_device(x):
    """erf of an array of another backend than NumPy's, in ``x``'s dtype."""
    if array_module(x).__name__ == "cupy":
        import cupyx.scipy.special  # optional dependency, installed with CuPy
        return cupyx.scipy.special.erf(x)
    # any other backend: through the host, where the libm erf below runs
    return backend.move_like(erf_array(backend.to_host(x)), x)


def erf_array(x):
    """The error function of an array (libm's ``erf``, exact to double precision).

    Integer and bool arrays give the floating type NumPy's own ``np.exp`` would
    (``erf`` of an integer is not an integer).
    """
    dtype = x.dtype if x.dtype.kind in "fc" else np.result_type(x.dtype, np.float16)
    if array_module(x) is not np:  # NumPy has no erf ufunc to dispatch to another backend
        return _erf_device(x.astype(dtype, copy=False))
    return _erf_scalar(x).astype(dtype) if x.ndim else np.asarray(math.erf(x), dtype=dtype)


def sigmoid(x):
    return x.sigmoid() if isinstance(x, Tensor) else sigmoid_array(x)


def sigmoid_array(x):
    """1 / (1 + exp(-x)) without overflow: exp of a non-positive number only."""
    xp = array_module(x)
    if x.dtype.kind == "c":  # the abs() trick below would drop the imaginary part
        return 1 / (1 + xp.exp(-x))
    e = xp.exp(-xp.abs(x))  # in (0, 1]
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def permute(g, axes):
    return g.permute(axes) if isinstance(g, Tensor) else array_module(g).transpose(g, axes)


def zeros(shape, like):
    """Zeros of ``shape`` with ``like``'s dtype, as a constant (no graph)."""
    data = like._data if isinstance(like, Tensor) else like
    z = array_module(data).zeros(shape, dtype=data.dtype)
    return Tensor(z) if isinstance(like, Tensor) else z


def scatter_add(g, key, shape: tuple, unique: bool):
    """Zeros of ``shape`` with ``g`` added at ``key`` (the adjoint of ``x[key]``).

    Repeated integer indices accumulate (``np.add.at``); keys without integer
    arrays (``unique``) hit every position at most once, a plain assignment.
    """
    if isinstance(g, Tensor):
        return forward_of("index_scatter")(g, key, shape, unique)
    out = array_module(g).zeros(shape, dtype=g.dtype)
    if unique:
        out[key] = g
    else:
        backend.scatter_add(out, key, g)
    return out


def zeroed_at(g, key):
    """``g`` with the elements at ``key`` set to 0."""
    if isinstance(g, Tensor):
        mask = array_module(g._data).ones(g.shape, dtype=g._data.dtype)
        mask[key] = 0
        return g * constant(mask)
    out = g.copy()
    out[key] = 0
    return out


def masked_fill_grads(g, node):
    """Gradients of ``where(mask, value, x)`` (mask in ``node._ctx``, parents ``(x,)`` or ``(x, value)``):
    ``g`` off the mask for ``x``, the sum of ``g`` on it for ``value``.  Shared by ``masked_fill``
    and its in-place form, whose rules differ only in how the node was recorded."""
    mask = node._ctx
    px = node._prev[0]
    gx = where(mask, 0.0, g) if px._requires_grad else None
    if len(node._prev) == 1:
        return (gx,)
    pv = node._prev[1]
    return gx, (sum_to(where(mask, g, 0.0), pv.shape) if pv._requires_grad else None)

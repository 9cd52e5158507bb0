"""Functions that work on arrays and on Tensors alike, for the local rules.

A rule receives raw arrays on the first-order path and Tensors when
``create_graph=True`` (see :mod:`taugrad.tensors.ops.core`).  Operators and methods are
shared by both already; the few *functions* a rule needs are here: each one
does the array thing for an array and calls the differentiable Tensor op for a
Tensor.  Array functions go through the array's module (``xp``), the seam for a
CuPy backend.  At the end, the forward helpers several families share (a unary
function at torch's float dtype, two operands at torch's result dtype, the
max-shift of softmax), so no family imports another.
"""
from __future__ import annotations

import math

import numpy as np

from taugrad.tensors.core import backend
from taugrad.tensors.core.backend import ARRAY_MODULES
from taugrad.tensors.core.dtypes import DEFAULT_FLOAT, float_input, result_type
from taugrad.tensors.core.errstate import quiet
from taugrad.tensors.core.node import Tensor, array_module, constant, make, to_array
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
    if type(y) is float and y == 0.0 and math.copysign(1.0, y) > 0:
        kept = keep(condition, x)
        if kept is not None:
            return kept
    # x or y may be a number (0.0): the module of whichever is an array
    xp = ARRAY_MODULES.get(type(x)) or ARRAY_MODULES.get(type(y)) or array_module(condition)
    return xp.where(condition, x, y)


#: the signed integer type of each float width, to multiply a float's bits by a 0/1 mask
_BITS = {2: "i2", 4: "i4", 8: "i8"}


def keep(mask, g, out=None):
    """``g`` where ``mask`` is true and +0 elsewhere, exactly ``where(mask, g, 0)``; None if ``g`` is not
    a real floating array of at least ``mask``'s shape.

    Computed as the integer product of ``g``'s bits with the 0/1 mask: bits
    times 1 are ``g`` itself (nan, inf and -0 too), bits times 0 are +0.
    ``where`` and masked stores branch on each element, which a random
    mask (half of ReLU's inputs are negative) mispredicts: they ran 10-15x
    slower than this product on a 64x16x32x32 float32 array.  ``out`` may
    be ``g`` itself (in place).
    """
    if (getattr(g, "dtype", None) is None or g.dtype.kind != "f" or g.itemsize not in _BITS
            or getattr(mask, "dtype", None) is None or mask.dtype.kind != "b"):
        return None
    xp = array_module(g)
    if tuple(xp.broadcast_shapes(g.shape, mask.shape)) != tuple(g.shape):
        return None
    bits = _BITS[g.itemsize]
    if out is None:
        return xp.multiply(g.view(bits), mask, dtype=bits).view(g.dtype)
    xp.multiply(g.view(bits), mask, out=out.view(bits))
    return out


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


# ---------------------------------------------------------------------------
# forward helpers the elementwise families share (one place each)
# ---------------------------------------------------------------------------


def float_data(op: str, fn, a: Tensor):
    """``fn`` of ``a``'s values, integer or bool ones converted to the default float dtype first (as torch).

    ``fn``: the name of a ufunc of the array's module (``"exp"``), or a function of the array.
    """
    ad = float_input(a._data)
    if type(fn) is str:
        fn = getattr(array_module(ad), fn)
    try:
        with quiet():
            return fn(ad)
    except TypeError:
        raise TypeError(f"{op}: not supported for a tensor of dtype {a.dtype}") from None


def unary(op: str, ufunc, a: Tensor, rule_fn, ctx=None, floating: bool = True) -> Tensor:
    """``ufunc`` (the name of a ufunc of the array's module, or a function of the array) of ``a``.

    ``floating``: the function's values are not integers, so an integer or bool
    tensor gives the default float dtype, as PyTorch (NumPy would give float64,
    or float16 for bool).
    """
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(a).__name__}")
    ad = float_input(a._data) if floating else a._data
    if type(ufunc) is str:
        ufunc = getattr(array_module(ad), ufunc)
    try:
        with quiet():
            data = ufunc(ad)
    except TypeError:
        raise TypeError(f"{op}: not supported for a tensor of dtype {a.dtype}") from None
    return make(data, (a,), rule_fn, ctx)


def float_arrays(a: Tensor, b: Tensor):
    """The operands' arrays at PyTorch's result dtype for a function with non-integer values:
    promoted as torch promotes (int64 with float32 is float32), an integer result made the default float."""
    ad, bd = a._data, b._data
    d = ad.dtype if ad.dtype == bd.dtype else result_type(ad, bd)
    if d.kind in "biu":
        d = DEFAULT_FLOAT[0]
    # each straight to the result dtype: through the integer one, a -3 meeting uint8 would wrap to 253
    return ad.astype(d, copy=False), bd.astype(d, copy=False)


def shift_by_max(x, d: int):
    """``x`` minus its maximum along ``d``, so exp(x) <= 1.

    The maximum is first raised to the dtype's lowest finite number: that
    changes only a row whose maximum is -inf (all -inf), whose -inf then stay
    -inf (exp 0) instead of becoming nan (-inf - -inf).  A row holding +inf
    becomes nan throughout (inf - inf), and a nan maximum stays nan, as
    PyTorch's softmax: no probabilities can be read from such a row.  Two
    array operations after the maximum, no test of the rows: on a device, a
    test would wait for it.
    """
    if x.size == 0:
        return x
    xp = array_module(x)
    m = x.max(axis=d, keepdims=True)  # the method: CuPy has no maximum.reduce, np.max adds a wrapper
    return x - xp.maximum(m, xp.finfo(m.dtype).min)


def input_tensor(x, op: str) -> Tensor:
    """A loss's or activation's input as a Tensor (a NumPy array or a list is wrapped, as cross_entropy does)."""
    if isinstance(x, Tensor):
        return x
    try:
        return Tensor(x)
    except TypeError as error:
        raise TypeError(f"{op}: input must be a Tensor or an array, got {type(x).__name__} ({error})") from None

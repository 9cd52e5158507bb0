"""A strict fake device backend: NumPy underneath, but every stray NumPy call fails loudly.

:class:`StrictArray` wraps a NumPy array and behaves as a CuPy array does
towards NumPy:

* ``__array_ufunc__ = None``: a NumPy ufunc given one raises ``TypeError``,
  and a NumPy scalar's operators defer to the array's reflected operator;
* ``__array_function__`` and ``__array__`` raise: any other ``np.<function>``
  on it, and any implicit conversion to NumPy (``np.asarray``), fails;
* its operators refuse NumPy-array operands (CuPy raises ``TypeError`` there);
* ``.flags`` has only CuPy's fields (no ``writeable``);
* an integer index array outside the array wraps around, as CuPy's does
  (NumPy would raise): a missing bounds check shows as a wrong number.

:data:`xp`, its module, forwards ``xp.<name>`` to NumPy, unwrapping the
arguments and wrapping the results (0-d results stay 0-d arrays, as CuPy's);
it refuses NumPy-array arguments except in ``xp.asarray``/``xp.array``
(the explicit host-to-device copy).  Every error names the NumPy function or
operator that met the fake array, so a failing seam test says which call escaped.

Because it computes with NumPy, results on it must EQUAL the CPU results.
:func:`install` registers it as the ``'cuda'`` backend.
"""
from __future__ import annotations

import contextlib
import operator
import os
import sys
import types

import numpy as np

from taugrad.tensors.core import backend

#: where device-to-host reads happened, while :func:`recording_syncs` is on (None when off)
_SYNCS = None


def _sync(what: str) -> None:
    """Note a read that makes the host wait for the device (CuPy's ``bool()``, ``.item()``, ``.get()``...)."""
    if _SYNCS is not None:
        _SYNCS.append((what, _caller()))


def _caller() -> str:
    """``file:line`` of the innermost frame of taugrad's own source that led to the read."""
    frame, where = sys._getframe(2), "no taugrad frame"
    while frame is not None:
        path = frame.f_code.co_filename
        if f"{os.sep}taugrad{os.sep}" in path and f"{os.sep}tests{os.sep}" not in path:
            where = f"{path.split(os.sep + 'taugrad' + os.sep)[-1]}:{frame.f_lineno}"
            break
        frame = frame.f_back
    return where


@contextlib.contextmanager
def recording_syncs():
    """Collect ``(what, taugrad file:line)`` for every device-to-host read inside the block."""
    global _SYNCS
    before, _SYNCS = _SYNCS, []
    try:
        yield _SYNCS
    finally:
        _SYNCS = before


class OperationCount:
    """How many array operations ran on the fake device: a proxy for a GPU's kernel launches."""

    def __init__(self) -> None:
        self.count = 0


#: the in-place array operations counted besides the new arrays (CuPy launches a kernel for each)
_COUNTED_IN_PLACE = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__setitem__")


@contextlib.contextmanager
def counting_operations():
    """Count, inside the block, every new array (not a view), in-place operator and index assignment."""
    global wrap
    counter, plain_wrap = OperationCount(), wrap
    originals = {name: StrictArray.__dict__[name] for name in _COUNTED_IN_PLACE}

    def counting_wrap(x):
        # a NumPy scalar is a full reduction's result: on CuPy a 0-d array, made by a kernel
        if isinstance(x, np.generic) or isinstance(x, np.ndarray) and x.base is None:
            counter.count += 1
        return plain_wrap(x)

    def counted(operation):
        def run(array, *args):
            counter.count += 1
            return operation(array, *args)
        return run

    wrap = counting_wrap
    for name, operation in originals.items():
        setattr(StrictArray, name, counted(operation))
    try:
        yield counter
    finally:
        wrap = plain_wrap
        for name, operation in originals.items():
            setattr(StrictArray, name, operation)


class EscapedNumPyCall(TypeError):
    """A NumPy function, operator or conversion received a fake-device array."""


def _escape(what: str) -> EscapedNumPyCall:
    return EscapedNumPyCall(f"strict backend: {what} received a fake-device array (a NumPy call escaped "
                            f"the array module)")


def _unwrap(x, where: str, allow_numpy: bool = False):
    """NumPy arrays under the fake ones, in lists/tuples/dicts too; NumPy arrays refused unless allowed."""
    if type(x) is StrictArray:
        return x._a
    if isinstance(x, np.ndarray):
        if allow_numpy:
            return x
        raise EscapedNumPyCall(f"strict backend: {where} got a NumPy array argument of shape {x.shape} "
                               f"(the device backend refuses host arrays, as CuPy does)")
    if isinstance(x, (list, tuple)):
        items = [_unwrap(v, where, allow_numpy) for v in x]
        return type(x)(*items) if hasattr(type(x), "_fields") else type(x)(items)  # a namedtuple, or a tuple/Size
    if isinstance(x, dict):
        return {k: _unwrap(v, where, allow_numpy) for k, v in x.items()}
    return x


def wrap(x):
    """NumPy results as fake arrays (0-d scalars as 0-d arrays); tuples/lists element-wise."""
    if isinstance(x, np.ndarray):
        return StrictArray(x)
    if isinstance(x, np.generic):
        return StrictArray(np.asarray(x))
    if type(x) in (tuple, list):
        return type(x)(wrap(v) for v in x)
    if isinstance(x, tuple):  # NumPy's named results (linalg.svd's SVDResult)
        return type(x)(*(wrap(v) for v in x))
    return x


def _operand(x, name: str):
    if type(x) is StrictArray:
        return x._a
    if isinstance(x, np.ndarray):
        raise EscapedNumPyCall(f"strict backend: operator {name} got a NumPy array operand of shape {x.shape} "
                               f"(CuPy refuses host arrays in operators)")
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return x
    return NotImplemented


def _binary(name: str, fn, fn_inplace=None):
    def forward(self, other):
        b = _operand(other, name)
        if b is NotImplemented:
            return NotImplemented
        return wrap(fn(self._a, b))

    def reflected(self, other):
        b = _operand(other, name)
        if b is NotImplemented:
            return NotImplemented
        return wrap(fn(b, self._a))

    def inplace(self, other):
        b = _operand(other, name)
        if b is NotImplemented:
            return NotImplemented
        fn_inplace(self._a, b)
        return self

    return forward, reflected, inplace


def _wrapped_around(key, shape: tuple):
    """``key`` with each integer index array taken modulo its dim's size, as CuPy indexes.

    NumPy raises for an index outside the array; CuPy wraps it around, silently
    (its documented difference), so a missing bounds check gives a wrong number
    on a GPU: here too, instead of NumPy's error.
    """
    parts = key if isinstance(key, tuple) else (key,)
    consumed = sum(p.ndim if isinstance(p, np.ndarray) and p.dtype == np.bool_ else 0 if p is None or p is Ellipsis
                   else 1 for p in parts)
    dim, out = 0, []
    for p in parts:
        if p is Ellipsis:
            dim += max(len(shape) - consumed, 0)
        elif isinstance(p, np.ndarray) and p.dtype == np.bool_:
            dim += p.ndim
        elif p is not None:
            if isinstance(p, np.ndarray) and p.dtype.kind in "iu" and dim < len(shape) and shape[dim]:
                p = p % shape[dim]
            dim += 1
        out.append(p)
    return tuple(out) if isinstance(key, tuple) else out[0]


class _Flags:
    """CuPy's flags: contiguity and ownership only (no ``writeable``)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, a: np.ndarray):
        self.c_contiguous = a.flags.c_contiguous
        self.f_contiguous = a.flags.f_contiguous
        self.owndata = a.flags.owndata

    def __getitem__(self, key):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "OWNDATA": "owndata"}[key])


class _Device:
    """What CuPy's ``ndarray.device`` gives: a GPU index in ``.id``."""

    id = 0


_DEVICE0 = _Device()


#: array methods that copy values to the host (the host waits for the device)
_HOST_READS = {"item", "tolist"}


class StrictArray:
    """An array on the fake device: a NumPy array that refuses to meet NumPy."""

    __slots__ = ("_a",)
    __array_ufunc__ = None
    __array_priority__ = 1000

    def __init__(self, a: np.ndarray):
        self._a = a

    # --- refusing NumPy -------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise _escape("implicit conversion to NumPy (np.asarray/np.array/__array__)")

    def __array_function__(self, func, types_, args, kwargs):
        module = getattr(func, "__module__", "numpy") or "numpy"
        raise _escape(f"NumPy function {module.replace('numpy.core', 'numpy')}.{func.__name__}")

    # --- attributes -----------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: _Flags(self._a))
    T = property(lambda self: StrictArray(self._a.T))
    mT = property(lambda self: StrictArray(np.swapaxes(self._a, -1, -2)))
    real = property(lambda self: wrap(self._a.real))
    imag = property(lambda self: wrap(self._a.imag))
    base = property(lambda self: None if self._a.base is None else StrictArray(self._a.base))
    # CuPy's address of the first element (what in-place ops on views locate the view by)
    __cuda_array_interface__ = property(lambda self: {
        "data": (self._a.__array_interface__["data"][0], False), "shape": self._a.shape,
        "strides": self._a.strides, "typestr": self._a.dtype.str, "version": 3})

    @property
    def device(self):
        """CuPy's ``ndarray.device`` (a Device whose ``.id`` is the GPU index): always device 0 here."""
        return _DEVICE0

    def get(self) -> np.ndarray:
        """A host copy (CuPy's ``ndarray.get``)."""
        _sync(".get()")
        return self._a.copy()

    def __getattr__(self, name):
        # array methods (sum, reshape, astype, argmax, ...) run on the NumPy array, results wrapped
        if name.startswith("__") or name in ("tofile", "tobytes", "dump", "dumps", "ctypes", "data", "setflags",
                                             "byteswap", "newbyteorder", "getfield", "setfield"):
            raise AttributeError(f"strict backend: array has no attribute {name!r} (host-only)")
        attr = getattr(self._a, name)
        if name in _HOST_READS:
            _sync(f".{name}()")
        if not callable(attr):
            return wrap(attr)

        def method(*args, **kwargs):
            where = f"method .{name}()"
            return wrap(attr(*_unwrap(args, where, allow_numpy=False), **_unwrap(kwargs, where)))

        return method

    def __getitem__(self, key):
        return wrap(self._a[_wrapped_around(_unwrap(key, "indexing", allow_numpy=True), self._a.shape)])

    def __setitem__(self, key, value):
        key = _wrapped_around(_unwrap(key, "index assignment", allow_numpy=True), self._a.shape)
        self._a[key] = _unwrap(value, "index assignment (value)")

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for row in self._a:
            yield wrap(row)

    def __bool__(self):
        _sync("bool()")
        return bool(self._a)

    def __float__(self):
        _sync("float()")
        return float(self._a)

    def __int__(self):
        _sync("int()")
        return int(self._a)

    def __complex__(self):
        _sync("complex()")
        return complex(self._a)

    def __index__(self):
        _sync("index()")
        return operator.index(self._a)

    def __repr__(self):
        return f"StrictArray({self._a!r})"

    def __neg__(self):
        return wrap(-self._a)

    def __pos__(self):
        return wrap(+self._a)

    def __abs__(self):
        return wrap(abs(self._a))

    def __invert__(self):
        return wrap(~self._a)

    def __copy__(self):
        return StrictArray(self._a.copy())

    def __deepcopy__(self, memo):
        return StrictArray(self._a.copy())

    def __reduce__(self):
        raise _escape("pickle (a device array must be moved to the host first)")


_BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "matmul": operator.matmul,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
    "rshift": operator.rshift,
}
for _name, _fn in _BINARY.items():
    _f, _r, _i = _binary(f"__{_name}__", _fn, getattr(operator, f"i{_name}"))
    setattr(StrictArray, f"__{_name}__", _f)
    setattr(StrictArray, f"__r{_name}__", _r)
    setattr(StrictArray, f"__i{_name}__", _i)
for _name, _fn in {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
                   "eq": operator.eq, "ne": operator.ne}.items():
    setattr(StrictArray, f"__{_name}__", _binary(f"__{_name}__", _fn)[0])
StrictArray.__hash__ = None


# ---------------------------------------------------------------------------
# the module: xp.<name> is NumPy's, with arrays unwrapped and results wrapped
# ---------------------------------------------------------------------------

#: NumPy functions that accept host arrays on this backend (the explicit host-to-device copy, as CuPy)
_TAKES_HOST = {"asarray", "array"}
#: what CuPy does not have: asking for it is an error here too
_MISSING = {"errstate", "seterr", "geterr", "nditer", "frompyfunc", "vectorize", "add_newdoc", "asmatrix",
            "matrix", "memmap", "fromfile", "save", "load", "savez", "ndenumerate", "ndindex"}


#: CuPy's ufuncs have reduce/accumulate/reduceat for these two alone (``cupy.maximum.reduce`` raises)
_CUPY_REDUCING_METHODS = {"reduce", "accumulate", "reduceat"}
_CUPY_REDUCING_UFUNCS = {"add", "multiply"}


class _Ufunc:
    """A NumPy ufunc as the fake module gives it: ``__call__``, ``reduce``, ``accumulate``, ``at``, ``outer``."""

    def __init__(self, ufunc, name: str):
        self._ufunc = ufunc
        self._name = name

    def __call__(self, *args, **kwargs):
        where = f"xp.{self._name}"
        return wrap(self._ufunc(*_unwrap(args, where), **_unwrap(kwargs, where)))

    def __getattr__(self, attr):
        method = getattr(self._ufunc, attr)
        if not callable(method):
            return method
        if attr in _CUPY_REDUCING_METHODS and self._name not in _CUPY_REDUCING_UFUNCS:
            raise NotImplementedError(f"strict backend: xp.{self._name}.{attr} is not supported on the device "
                                      f"backend (CuPy reduces with add and multiply only; use the array's "
                                      f"method, e.g. x.max())")

        def call(*args, **kwargs):
            where = f"xp.{self._name}.{attr}"
            return wrap(method(*_unwrap(args, where, allow_numpy=(attr == "at")), **_unwrap(kwargs, where)))

        return call


class StrictModule(types.ModuleType):
    """``xp`` of the fake device: NumPy's names, refusing host arrays."""

    def __init__(self, name: str, numpy_module):
        super().__init__(name)
        self._numpy = numpy_module

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _MISSING:
            raise AttributeError(f"strict backend: xp.{name} does not exist on the device backend (CuPy lacks it)")
        if name == "ndarray":
            return StrictArray
        obj = getattr(self._numpy, name)
        if isinstance(obj, types.ModuleType):
            sub = StrictModule(f"{self.__name__}.{name}", obj)
            setattr(self, name, sub)
            return sub
        if isinstance(obj, np.ufunc):
            return _Ufunc(obj, name)
        if isinstance(obj, type) or not callable(obj):
            return obj  # dtypes (xp.float32), constants (xp.pi, xp.newaxis)
        allow = name in _TAKES_HOST

        def function(*args, **kwargs):
            where = f"xp.{name}"
            return wrap(obj(*_unwrap(args, where, allow_numpy=allow), **_unwrap(kwargs, where, allow_numpy=allow)))

        function.__name__ = name
        return function


#: the fake device's array module
xp = StrictModule("strict_xp", np)


def _to_host(arr: StrictArray) -> np.ndarray:
    _sync("to_host")
    return arr._a.copy()


def _from_host(arr: np.ndarray, dev) -> StrictArray:
    return StrictArray(np.array(arr, copy=True))


def _scatter_add(target: StrictArray, index, values) -> None:
    np.add.at(target._a, _unwrap(index, "scatter_add index", allow_numpy=True), _unwrap(values, "scatter_add values"))


def install(device_type: str = "cuda"):
    """Register the strict fake as ``device_type``'s backend (returns the Backend record)."""
    return backend.register_backend(device_type, xp, StrictArray, to_host=_to_host, from_host=_from_host,
                                    scatter_add=_scatter_add)


def uninstall(device_type: str = "cuda") -> None:
    backend.unregister_backend(device_type)

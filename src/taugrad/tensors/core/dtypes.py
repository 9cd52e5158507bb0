"""Tensor dtypes as PyTorch names them, the default float dtype, and PyTorch's type promotion.

``taugrad.float32`` and friends are :class:`dtype` objects wrapping a NumPy
dtype; ``Tensor.dtype`` returns them, so PyTorch code comparing
``x.dtype == torch.float32`` runs unchanged.  Everywhere a dtype is taken,
NumPy dtypes, NumPy scalar types and strings (``'float32'``) are accepted too.

Promotion (what dtype ``a + b`` has) follows PyTorch, not NumPy.  Dtypes fall
in categories ``bool < integer < floating < complex``, and operands in three
ranks: tensors with at least one dimension, 0-d tensors, Python numbers.

* Within one rank, operands promote normally (``int8 + int64 -> int64``,
  ``float32 + float64 -> float64``); across categories the higher category's
  dtype wins (``int64 + float16 -> float16``, ``bool + int32 -> int32``).
* A lower rank changes the result only if its category is higher: a 0-d
  float64 tensor or a Python float does not widen a float32 tensor, but makes
  an integer tensor floating.
* A Python float counts as the default float dtype (:func:`get_default_dtype`,
  float32 unless changed), a Python int as int64, a Python bool as bool.
* Float functions (``exp``, ``sqrt``, true division...) of integer or bool
  tensors give the default float dtype.

NumPy 2 differs in each of these (``float32 + int64`` and ``int64 * 0.5`` are
float64 there), so the ops call :func:`promote` before computing.
"""
from __future__ import annotations

import numpy as np

try:  # optional: NumPy has no bfloat16 of its own
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None

_PYTHON_TYPES = (float, int, bool, complex)


class DtypeMismatchError(TypeError, RuntimeError):
    """Operands of an op that needs one dtype (matmul, linear) have different ones.

    A TypeError as taugrad's other dtype errors, and a RuntimeError as PyTorch raises there.
    """


class dtype:  # noqa: N801  (named as torch.dtype)
    """A tensor element type (``taugrad.float32``, ``taugrad.int64``...), wrapping a NumPy dtype.

    Equal to itself and to the NumPy dtype it wraps (``taugrad.float32 ==
    np.float32``); NumPy accepts it wherever it takes a dtype.
    """

    __slots__ = ("name", "_numpy", "__weakref__")

    def __init__(self, name: str, numpy_dtype) -> None:
        self.name = name
        self._numpy = None if numpy_dtype is None else np.dtype(numpy_dtype)

    @property
    def numpy_dtype(self) -> np.dtype:
        """The NumPy dtype this one stands for."""
        if self._numpy is None:
            raise TypeError(f"taugrad.{self.name} needs the optional package ml_dtypes "
                            f"(pip install ml_dtypes); NumPy has no {self.name} of its own")
        return self._numpy

    # NumPy reads ``.dtype`` from any object given as a dtype: np.zeros(3, dtype=taugrad.float32)
    dtype = numpy_dtype

    @property
    def is_floating_point(self) -> bool:
        return self.numpy_dtype.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.numpy_dtype.kind == "c"

    @property
    def is_signed(self) -> bool:
        return self.numpy_dtype.kind in "ifc"

    @property
    def itemsize(self) -> int:
        return self.numpy_dtype.itemsize

    @property
    def kind(self) -> str:
        """NumPy's one-letter kind ('f', 'i', 'u', 'b', 'c'), for code written against NumPy dtypes."""
        return self.numpy_dtype.kind

    def __repr__(self) -> str:
        return f"taugrad.{self.name}"

    def __eq__(self, other) -> bool:
        if isinstance(other, dtype):
            return self is other or (self._numpy is not None and self._numpy == other._numpy)
        if other is None or self._numpy is None or isinstance(other, str) or any(other is t for t in _PYTHON_TYPES):
            return False  # as torch: taugrad.float32 != 'float32'; Python's float means float64, not float
        try:
            return self._numpy == np.dtype(other)
        except TypeError:
            return False

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._numpy if self._numpy is not None else self.name)

    def __reduce__(self):
        return (as_dtype, (self.name,))


# ---------------------------------------------------------------------------
# the dtype objects
# ---------------------------------------------------------------------------

float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
bfloat16 = dtype("bfloat16", None if _ml_dtypes is None else _ml_dtypes.bfloat16)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)
uint8 = dtype("uint8", np.uint8)
uint16 = dtype("uint16", np.uint16)
uint32 = dtype("uint32", np.uint32)
uint64 = dtype("uint64", np.uint64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
bool_ = dtype("bool", np.bool_)

#: every name a dtype goes by, as in torch (``taugrad.float`` is float32, ``taugrad.long`` int64)
ALIASES = {
    "float16": float16, "half": float16, "float32": float32, "float": float32, "float64": float64,
    "double": float64, "bfloat16": bfloat16, "complex64": complex64, "cfloat": complex64,
    "complex128": complex128, "cdouble": complex128, "uint8": uint8, "uint16": uint16, "uint32": uint32,
    "uint64": uint64, "int8": int8, "int16": int16, "short": int16, "int32": int32, "int": int32,
    "int64": int64, "long": int64, "bool": bool_,
}

#: NumPy dtype -> taugrad dtype (what ``Tensor.dtype`` returns)
_BY_NUMPY = {d._numpy: d for d in ALIASES.values() if d._numpy is not None}


def is_numeric(numpy_dtype: np.dtype) -> bool:
    """Whether a tensor can hold this NumPy dtype: bool, integers, floats, complex, and ml_dtypes' bfloat16
    (whose NumPy kind is 'V', like untyped bytes)."""
    return numpy_dtype.kind in "biufc" or (bfloat16._numpy is not None and numpy_dtype == bfloat16._numpy)


def from_numpy_dtype(numpy_dtype: np.dtype) -> dtype:
    """The taugrad dtype of an array's NumPy dtype (made on first use for a rare one)."""
    found = _BY_NUMPY.get(numpy_dtype)
    if found is None:
        found = _BY_NUMPY[numpy_dtype] = dtype(np.dtype(numpy_dtype).name, numpy_dtype)
    return found


def as_numpy_dtype(value) -> np.dtype:
    """The NumPy dtype for a taugrad dtype, a NumPy dtype or scalar type, a string or a Python type.

    Strings are NumPy's names or torch's aliases ('float', 'long', 'half');
    Python's ``float``/``int``/``bool`` are float64/int64/bool, as in both.
    """
    if isinstance(value, dtype):
        return value.numpy_dtype
    if isinstance(value, str) and value in ALIASES:
        return ALIASES[value].numpy_dtype
    try:
        return np.dtype(value)
    except TypeError:
        raise TypeError(f"unknown dtype {value!r}; use e.g. taugrad.float32, taugrad.float64, taugrad.int64"
                        ) from None


def as_dtype(value) -> dtype:
    """The taugrad dtype for anything :func:`as_numpy_dtype` takes."""
    if isinstance(value, dtype):
        return value
    if isinstance(value, str) and value in ALIASES:
        return ALIASES[value]
    return from_numpy_dtype(as_numpy_dtype(value))


# ---------------------------------------------------------------------------
# the default float dtype
# ---------------------------------------------------------------------------

#: one-element list: the NumPy dtype Python floats become (float32 unless set_default_dtype changed it)
DEFAULT_FLOAT = [np.dtype(np.float32)]


def get_default_dtype() -> dtype:
    """The dtype Python floats become in tensors (``taugrad.float32`` unless changed)."""
    return from_numpy_dtype(DEFAULT_FLOAT[0])


def set_default_dtype(d) -> None:
    """Make Python floats (and float functions of integer tensors) give ``d``: float32 or float64 (or float16)."""
    numpy_dtype = as_numpy_dtype(d)
    if numpy_dtype.kind != "f":
        raise TypeError(f"set_default_dtype: only floating dtypes can be the default, got {as_dtype(numpy_dtype)}")
    DEFAULT_FLOAT[0] = numpy_dtype


def default_complex() -> np.dtype:
    """complex64 with a float32 default, complex128 with float64."""
    return np.dtype(np.complex128) if DEFAULT_FLOAT[0] == np.float64 else np.dtype(np.complex64)


# ---------------------------------------------------------------------------
# promotion
# ---------------------------------------------------------------------------

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # 'V': ml_dtypes' bfloat16


def _category(d: np.dtype) -> int:
    return _CATEGORY.get(d.kind, 2)


def promote_types(a, b) -> dtype:
    """The dtype both convert to when tensors of dtypes ``a`` and ``b`` meet (``torch.promote_types``)."""
    return from_numpy_dtype(_promote(as_numpy_dtype(a), as_numpy_dtype(b)))


def _promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types on NumPy dtypes: the higher category wins; within one, the wider
    (float16 + bfloat16: float32)."""
    ca, cb = _category(a), _category(b)
    if ca != cb:
        high, low = (a, b) if ca > cb else (b, a)
        if max(ca, cb) == 3 and min(ca, cb) == 2:  # complex64 + float64 -> complex128
            return np.promote_types(high, low)
        return high
    if a == b:
        return a
    if ca == 2 and (a.kind == "V" or b.kind == "V"):  # bfloat16 with float16 -> float32
        other = b if a.kind == "V" else a
        return np.dtype(np.float32) if other.itemsize <= 2 else other
    return np.promote_types(a, b)


def _combine(high, low):
    """The dtype of a higher-ranked result ``high`` meeting a lower-ranked ``low`` (either may be None)."""
    if high is None:
        return low
    if low is None:
        return high
    ch, cl = _category(high), _category(low)
    if ch == 3:
        return high
    if cl == 3:
        return np.promote_types(high, low) if ch == 2 else low
    if ch == 2:
        return high  # a floating result is not widened by a lower rank
    if ch == 0 or cl == 2:
        return _promote(high, low)
    return high


def python_number_dtype(x) -> np.dtype:
    """The dtype a Python number counts as in promotion."""
    if isinstance(x, bool):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return np.dtype(np.int64)
    if isinstance(x, complex):
        return default_complex()
    return DEFAULT_FLOAT[0]


def result_type(*operands) -> np.dtype:
    """PyTorch's result dtype for arrays and Python numbers (see the module docstring)."""
    dims = zeros = numbers = None
    for x in operands:
        if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
            d = python_number_dtype(x)
            numbers = d if numbers is None else _promote(numbers, d)
        elif x.ndim == 0:
            zeros = x.dtype if zeros is None else _promote(zeros, x.dtype)
        else:
            dims = x.dtype if dims is None else _promote(dims, x.dtype)
    return _combine(dims, _combine(zeros, numbers))


def promote(a, b):
    """``a`` and ``b`` (arrays) converted to their PyTorch result dtype, for a binary op.

    Callers test ``a.dtype is not b.dtype`` first, so same-dtype operands
    (almost every op) pay nothing.
    """
    da, db = a.dtype, b.dtype
    if da == db:
        return a, b
    if bool(a.ndim) == bool(b.ndim):  # the same rank: normal promotion
        d = _promote(da, db)
    else:  # a 0-d operand changes the result only if its category is higher
        d = _combine(da, db) if a.ndim else _combine(db, da)
    return (a if da == d else a.astype(d)), (b if db == d else b.astype(d))


def promote_number(a, x):
    """``a`` (an array) converted so that ``a op x`` (x a Python number) has PyTorch's dtype.

    NumPy already keeps ``a``'s dtype where PyTorch does (weak Python
    numbers); only a Python float (or complex) meeting an integer or bool
    array differs: the result is the default float dtype, not float64.
    """
    kind = a.dtype.kind
    if kind in "biu" and isinstance(x, (float, complex)):
        return a.astype(result_type(a, x))
    return a


def float_input(a):
    """``a`` converted to the default float dtype if it is integer or bool (for exp, sqrt, ...)."""
    if a.dtype.kind in "biu":
        return a.astype(DEFAULT_FLOAT[0])
    return a


# ---------------------------------------------------------------------------
# the limits of a dtype (torch.finfo, torch.iinfo)
# ---------------------------------------------------------------------------


def _limits_repr(info, fields) -> str:
    return f"{type(info).__name__}(" + ", ".join(f"{f}={getattr(info, f):.6g}" for f in fields) + \
        f", dtype={info.dtype})"


class finfo:  # noqa: N801  (named as torch.finfo)
    """The limits of a floating dtype, as ``torch.finfo``: ``bits``, ``eps`` (the gap from 1 to the
    next number), ``max``, ``min`` (= -max), ``tiny`` (= ``smallest_normal``, the smallest
    positive normal number), ``resolution`` (10 ** -decimal digits) and ``dtype`` (its name).

    ``finfo()`` describes the default float dtype; a complex dtype gives its parts' limits.
    The numbers are NumPy's (ml_dtypes' for bfloat16), as Python floats.
    """

    def __init__(self, type=None) -> None:  # noqa: A002  (torch's argument name)
        d = get_default_dtype() if type is None else as_dtype(type)
        np_dtype = d.numpy_dtype
        if np_dtype.kind == "c":
            np_dtype = np.dtype(np_dtype.char.lower())  # complex64 -> float32 (its real part)
        elif not (np_dtype.kind == "f" or d is bfloat16):
            raise TypeError(f"finfo: needs a floating point dtype, got {d}; use taugrad.iinfo for integers")
        info = _ml_dtypes.finfo(np_dtype) if d is bfloat16 else np.finfo(np_dtype)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # NumPy's own rounds it to the dtype
        self.dtype = from_numpy_dtype(np_dtype).name if d is not bfloat16 else "bfloat16"

    def __repr__(self) -> str:
        return _limits_repr(self, ("resolution", "min", "max", "eps", "smallest_normal", "tiny"))


class iinfo:  # noqa: N801  (named as torch.iinfo)
    """The limits of an integer dtype, as ``torch.iinfo``: ``bits``, ``max``, ``min`` (Python ints)
    and ``dtype`` (its name)."""

    def __init__(self, type) -> None:  # noqa: A002  (torch's argument name)
        d = as_dtype(type)
        if d.numpy_dtype.kind not in "iu":
            raise TypeError(f"iinfo: needs an integer dtype, got {d}; use taugrad.finfo for floating dtypes")
        info = np.iinfo(d.numpy_dtype)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = d.name

    def __repr__(self) -> str:
        return _limits_repr(self, ("min", "max"))

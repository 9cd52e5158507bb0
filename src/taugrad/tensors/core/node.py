"""The bottom layer of the tensor engine: what a tensor node is.

A ``Tensor`` is both a value (its array, ``_data``) and a node of the graph
that produced it.  The graph bookkeeping is the scalar engine's:

* ``_prev``  -- the parent tensors (empty for a leaf), in operand order;
* ``_rule``  -- the :class:`~taugrad.tensors.core.rule.Rule` of the op that made it
  (None for a leaf, :data:`~taugrad.tensors.core.rule.RELEASED` once backward freed it);
* ``_ctx``   -- constants the rule needs (axes, shapes, masks); never a Tensor of
  the graph, so a graph holds no reference cycle and is freed as soon as its
  output is dropped.

This module makes result nodes (:func:`make`, :func:`make_view`,
:func:`constant`) and keeps the in-place bookkeeping (:data:`CLOCK`, versions).
It imports nothing from the ops or the engine: the ops build on it, the
backward pass (:mod:`taugrad.tensors.engine`) walks what it builds, and
:mod:`taugrad.tensors.methods` binds the ops to ``Tensor`` as methods.

In-place modification
---------------------
``CLOCK[0]`` counts in-place ops.  A node remembers the clock when recorded
(``_clock``); an in-place op sets the modified storage's ``_version`` to the new
clock.  So "was a tensor this node reads modified after the node was recorded?"
is ``version > node._clock``, and when the clock has not moved since the node
was recorded (the usual forward-then-backward) the check is one comparison.

Array module
------------
Every array operation goes through operators, array methods, NumPy ufuncs
(which dispatch to other array libraries) or :func:`array_module`, the module
of the tensor's array type (:mod:`taugrad.tensors.core.backend`, where another
backend registers its array type).
"""
from __future__ import annotations

import copy
import sys
from typing import Any, Callable, Dict

import numpy as np

from taugrad.grad_mode import STATE as _grad_mode
from taugrad.tensors.core.backend import ARRAY_MODULES, device_of, is_array, same_backend
from taugrad.tensors.core.size import Size
from taugrad.tensors.core.backend import array_module  # noqa: F401 - re-exported: the ops import it from here
from taugrad.tensors.core.args import normalize_dim
from taugrad.tensors.core.dtypes import DEFAULT_FLOAT, as_numpy_dtype, default_complex, from_numpy_dtype
from taugrad.tensors.core.device_checks import raise_pending
from taugrad.tensors.core.dtypes import is_numeric, python_number_dtype
from taugrad.tensors.core.grad_fn import grad_fn_of, op_name
from taugrad.tensors.core.printing import tensor_repr

_PYTHON_SCALARS = (bool, int, float)


def _dtype_of(dtype):
    """``np.dtype`` for a taugrad dtype, a NumPy dtype, a string ('float32', 'long') or a Python type."""
    return as_numpy_dtype(dtype)


def _holds_python_numbers(data) -> bool:
    """True for a Python number or (nested) list/tuple whose first leaf is one.

    NumPy scalars are not Python numbers here even where they subclass them
    (``np.float64`` is a ``float``): they keep their dtype.
    """
    while isinstance(data, (list, tuple)):
        if not data:
            return True  # [] -> float32, as torch.tensor([])
        data = data[0]
    return isinstance(data, _PYTHON_SCALARS) and not isinstance(data, np.generic)


def _shorten(data, limit: int = 40) -> str:
    text = repr(data)
    return text if len(text) <= limit else text[:limit] + "..."


def to_array(data, dtype=None):
    """Turn ``data`` into an array following PyTorch's ``torch.tensor`` dtype rules.

    Python floats (and lists of them) become the default dtype (float32 unless
    ``set_default_dtype`` changed it), Python ints int64, bools bool; arrays
    and NumPy scalars keep their dtype.  Arrays are not copied
    unless ``dtype`` asks for a conversion.
    """
    if isinstance(data, Tensor):
        data = data._data
    if dtype is not None:
        dtype = _dtype_of(dtype)
    if isinstance(data, np.ndarray) or is_array(data):  # an array of any backend keeps its device
        if not is_numeric(data.dtype):
            raise TypeError(f"cannot make a Tensor from an array of dtype {data.dtype} (not numeric)")
        return data if dtype is None or data.dtype == dtype else data.astype(dtype)
    python_numbers = _holds_python_numbers(data)
    try:
        array = np.asarray(data, dtype=dtype)
    except (ValueError, TypeError) as error:
        if "inhomogeneous" in str(error):  # NumPy's wording for nested lists of different lengths
            raise TypeError(
                f"cannot make a Tensor from a ragged {type(data).__name__}: nested sequences have different "
                f"lengths"
            ) from None
        raise TypeError(f"cannot make a Tensor from {type(data).__name__}: {error}") from None
    if not is_numeric(array.dtype):
        raise TypeError(
            f"cannot make a Tensor from {type(data).__name__} of dtype {array.dtype} (ragged or non-numeric data, or integers beyond 64 bits)"
        )
    if dtype is None and python_numbers:
        if array.dtype.kind == "u":  # NumPy's way out for a Python int above int64's range
            raise ValueError(f"cannot make a Tensor: an integer in {_shorten(data)} does not fit in int64 "
                             f"(pass dtype='float64' or dtype='uint64' to store it)")
        if array.dtype == np.float64:
            if DEFAULT_FLOAT[0] != np.float64:
                array = array.astype(DEFAULT_FLOAT[0])
        elif array.dtype.kind == "c":
            array = array.astype(default_complex())
        elif array.dtype.kind == "i" and array.dtype != np.int64:
            array = array.astype(np.int64)
    return array


def legacy_data(args: tuple, dtype, device):
    """What ``torch.Tensor(*args)`` holds: an empty array for sizes, a default-float array for Python data.

    ``Tensor(4)``, ``Tensor(2, 3)``, ``Tensor()``: uninitialised (zeros here:
    the values are unspecified, as torch's).  ``Tensor([1, 2])``: the
    default float dtype, as torch (which has no integer ``Tensor`` type).
    A lone Python float is refused, as torch refuses it (a size must be an
    int, data a sequence).
    """
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"Tensor(): legacy constructor expects device type: cpu but device type: {device} was "
                           "passed (use taugrad.tensor(data, device=...) or taugrad.empty(..., device=...))")
    if not args or all(type(n) is int for n in args):
        for n in args:
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(args)}")
        return np.zeros(args if args else (0,), dtype=DEFAULT_FLOAT[0] if dtype is None else _dtype_of(dtype))
    if len(args) != 1:
        raise TypeError(f"Tensor(): expected sizes (ints) or one sequence of data, got {len(args)} arguments of "
                        f"types {', '.join(type(a).__name__ for a in args)}")
    data = args[0]
    if isinstance(data, Tensor) or isinstance(data, np.generic):
        return data
    if isinstance(data, (float, complex, bool)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__}); "
                        f"use taugrad.tensor({data!r}) for a 0-d tensor")
    if dtype is None and isinstance(data, (list, tuple)) and _holds_python_numbers(data):
        return to_array(data, DEFAULT_FLOAT[0])
    return data


def _unpickled_tensor(cls, data, requires_grad: bool, grad) -> "Tensor":
    """A leaf of class ``cls`` (Tensor or Parameter) rebuilt from pickled parts."""
    t = Tensor.__new__(cls)
    Tensor.__init__(t, data, requires_grad=requires_grad)
    t._grad = grad
    return t


def _check_gradient(value, tensor) -> None:
    """What PyTorch checks on ``t.grad = value``: a Tensor of t's shape and dtype."""
    if not isinstance(value, Tensor):
        raise TypeError(f"grad: expected a Tensor or None, got {type(value).__name__}")
    if value._data.shape != tensor._data.shape:
        raise ValueError(f"grad: a gradient of shape {value._data.shape} cannot be assigned to a tensor of "
                         f"shape {tensor._data.shape}")
    if value._data.dtype != tensor._data.dtype:
        raise TypeError(f"grad: a gradient of dtype {value._data.dtype} cannot be assigned to a tensor of "
                        f"dtype {tensor._data.dtype}")


def _check_can_require_grad(dtype) -> None:
    if dtype.kind == "c":
        raise TypeError(
            f"complex tensors cannot require gradients (dtype {dtype}): taugrad differentiates real "
            f"functions only"
        )
    if dtype.kind != "f":
        raise TypeError(
            f"only floating-point tensors can require gradients, got dtype {dtype}; "
            f"make it floating first, e.g. taugrad.tensor(x, dtype='float32')"
        )


def _on_device_error(t, what: str) -> TypeError:
    """PyTorch's refusal to hand out a device tensor's memory as a NumPy array."""
    return TypeError(f"{what}: can't convert {device_of(t._data)} device type tensor to numpy; use .cpu() to copy "
                     f"the tensor to host memory first")


class Tensor:
    """An n-dimensional array that records the operations applied to it.

    ``Tensor(data, requires_grad=False, dtype=None)``: ``data`` is an array, a
    tensor or a (nested) list.  Lists become the default float dtype (float32
    unless changed), as ``torch.Tensor`` makes them; arrays and tensors keep
    their dtype and are wrapped *without a copy* (use :func:`taugrad.tensor`
    for a copy).  PyTorch's legacy size forms make an uninitialised tensor:
    ``Tensor(4)`` has shape (4,), ``Tensor(2, 3)`` shape (2, 3), ``Tensor()``
    shape (0,).  Only floating tensors may require grad.

    After ``loss.backward()`` every leaf with ``requires_grad=True`` holds
    ``d loss / d leaf`` in ``.grad`` (a Tensor, accumulated across calls);
    intermediate tensors keep ``.grad = None``.
    """

    __slots__ = (
        "_data",  # the array (writable; gradcheck perturbs it in place)
        "_grad",  # Tensor or None; only leaves receive one (``grad`` checks what is assigned)
        "_requires_grad",  # (``requires_grad`` checks what is assigned)
        "_prev",  # parent Tensors; () for a leaf
        "_rule",  # local derivative rule, None for a leaf (RELEASED after backward)
        "_ctx",  # constants for the rule (never a Tensor of the graph)
        "_clock",  # in-place clock when this node was recorded (see the module docstring)
        "_version",  # bumped (to the clock) by in-place ops on this tensor's storage
        "_base",  # the tensor whose storage ``data`` views, or None
        "_extras",  # None, or NodeExtras: hooks, retain_grad, creation site
        "__weakref__",
    )

    # NumPy must not treat a Tensor as an array in ``ndarray + Tensor``: returning
    # NotImplemented lets Python call Tensor.__radd__, which records the op.
    __array_ufunc__ = None
    __hash__ = object.__hash__  # nodes are dict keys by identity; == is elementwise

    def __init__(self, *args, requires_grad: bool = False, dtype=None, device=None):
        data = legacy_data(args, dtype, device) if len(args) != 1 or not is_array(args[0]) else args[0]
        array = to_array(data, dtype)
        if requires_grad:
            _check_can_require_grad(array.dtype)
        self._data = array
        self._grad = None
        self._requires_grad = bool(requires_grad)
        self._prev = ()
        self._rule = None
        self._ctx = None
        self._clock = 0
        self._version = 0
        self._extras = None
        # Tensor(t) shares t's memory (no copy, as for an array): it shares t's
        # version counter too, as a view does, so in-place changes through
        # either one are seen by the backward of ops that read the other
        self._base = None
        if isinstance(data, Tensor) and array is data._data:
            self._base = data if data._base is None else data._base

    # ------------------------------------------------------------------ storage
    @property
    def data(self) -> "Tensor":
        """This tensor's values as a tensor outside the graph, sharing memory (as ``torch.Tensor.data``).

        ``p.data += -lr * p.grad`` updates ``p`` in place without recording
        anything, and bumps ``p``'s version as any in-place op does (so a
        backward through an op that saved ``p`` refuses to run).  For the
        NumPy array use ``t.numpy()`` or ``np.asarray(t)``.
        """
        out = _new(Tensor)
        out._data = self._data
        out._grad = None
        out._requires_grad = False
        out._prev = ()
        out._rule = None
        out._ctx = None
        out._clock = 0
        out._version = 0
        out._base = self if self._base is None else self._base
        out._extras = None
        return out

    @data.setter
    def data(self, value) -> None:
        """``p.data = t``: ``p`` now holds ``t``'s values (shared; shape and dtype may change, as torch)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"data: assigned value must be a Tensor, got {type(value).__name__} "
                            f"(wrap it: t.data = taugrad.tensor(value))")
        if value._data is not self._data:
            if self._requires_grad:
                _check_can_require_grad(value._data.dtype)
            self._data = value._data
            if self._grad is not None and self._grad._data.shape != value._data.shape:
                self._grad = None  # a gradient of the old shape no longer fits

    # ------------------------------------------------------------------ autograd state
    @property
    def requires_grad(self) -> bool:
        """Whether ops on this tensor record a graph so that gradients reach it."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)  # the same checks: a leaf of a floating dtype only

    @property
    def grad(self):
        """The accumulated gradient (a Tensor of this tensor's shape and dtype), or None."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            _check_gradient(value, self)
        self._grad = value

    # ------------------------------------------------------------------ info
    @property
    def shape(self) -> Size:
        """The shape, as a :class:`~taugrad.tensors.core.size.Size` (a tuple that prints as torch's)."""
        return Size(self._data.shape)

    @property
    def dtype(self):
        """The element type: ``taugrad.float32``, ``taugrad.int64``... (compares equal to the NumPy dtype too)."""
        return from_numpy_dtype(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op (as in PyTorch)."""
        return self._rule is None

    @property
    def _op(self) -> str:
        """Name of the op that produced this tensor ('' for a leaf)."""
        return op_name(self)

    @property
    def grad_fn(self):
        """The backward node of the op that produced this tensor (``name()``, ``next_functions``), None for a leaf."""
        return grad_fn_of(self)

    def size(self, dim=None):
        """The shape as a :class:`~taugrad.tensors.core.size.Size`, or the length of dimension ``dim``."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[normalize_dim(dim, self._data.ndim, "size")]

    def numel(self) -> int:
        """Number of elements."""
        return self._data.size

    nelement = numel

    def dim(self) -> int:
        return self._data.ndim

    def stride(self, dim=None):
        """Steps between neighbours along each dimension, in elements (as torch; NumPy counts bytes).

        Where the step of a size-1 dimension means nothing, PyTorch's value is
        given: NumPy's 0 for an inserted dimension (``x[None]``) reads as the
        size times the step of the dimension after it (1 for the last), and
        an empty tensor has the row-major steps of its shape, sizes 0 counted as 1.
        """
        data = self._data
        itemsize = data.itemsize
        shape = data.shape
        strides = [s // itemsize for s in data.strides]
        after = 1  # the step a size-1 dimension would get, from the dimension after it
        for i in range(len(shape) - 1, -1, -1):
            if data.size == 0 or (shape[i] == 1 and strides[i] == 0):
                strides[i] = after
            after = strides[i] * shape[i] if data.size else after * max(shape[i], 1)
        if dim is None:
            return tuple(strides)
        return strides[normalize_dim(dim, data.ndim, "stride")]

    def data_ptr(self) -> int:
        """The address of the first element, as ``torch.Tensor.data_ptr``: a view starts inside its base."""
        data = self._data
        if isinstance(data, np.ndarray):
            return data.__array_interface__["data"][0]
        return int(data.data.ptr)  # CuPy's device pointer

    def is_floating_point(self) -> bool:
        """True for float16/32/64 (and bfloat16) tensors."""
        return self._data.dtype.kind in "fV"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    # ----------------------------------------------------------- conversion
    def numpy(self) -> np.ndarray:
        """The underlying array (shared, not copied: as ``torch.Tensor.numpy``).

        Refused for a tensor that requires grad, as in PyTorch: writing into the
        shared array would change what backward() reads without its in-place
        check seeing it.  ``.detach().numpy()`` says that is intended.
        """
        if self.requires_grad:
            raise RuntimeError("numpy(): the tensor requires grad; use .detach().numpy() to get its array")
        if not isinstance(self._data, np.ndarray):
            raise _on_device_error(self, "numpy()")
        return self._data

    def item(self):
        """The single element as a Python number."""
        if self._data.size != 1:
            raise ValueError(f"item(): tensor has {self._data.size} elements, expected exactly 1")
        return self._host_item()

    def tolist(self):
        if not isinstance(self._data, np.ndarray):
            raise_pending()
        return self._data.tolist()

    def _host_item(self):
        """The one element as a Python number: on a device, after the checks it has not answered yet."""
        if not isinstance(self._data, np.ndarray):
            raise_pending()
        return self._data.item()

    def __array__(self, dtype=None, copy=None):
        if not isinstance(self._data, np.ndarray):
            raise _on_device_error(self, "converting to a NumPy array")
        if dtype is not None and dtype != self._data.dtype:
            return self._data.astype(dtype)
        if copy:
            return self._data.copy()
        if self.requires_grad:  # readable, but np.asarray(t)[...] = v must not bypass the in-place check
            view = self._data.view()
            view.flags.writeable = False
            return view
        return self._data

    # ----------------------------------------------------------- DLPack
    def __dlpack__(self, *, stream=None, **kwargs):
        """The DLPack capsule of this tensor's memory (shared, no copy), for ``np.from_dlpack``, torch, CuPy, JAX.

        Refused for a tensor that requires grad, as PyTorch does: the other
        library could write into memory that backward() reads.
        """
        if self.requires_grad:
            raise BufferError("__dlpack__: can't export a tensor that requires grad; use tensor.detach()")
        if stream is not None:
            kwargs["stream"] = stream
        if not isinstance(self._data, np.ndarray):  # the other library may read the values next
            raise_pending()
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        """``(device type, index)`` of the memory, as DLPack numbers them (1: CPU, 2: CUDA)."""
        return self._data.__dlpack_device__()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.size != 1 or self._data.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self._host_item())

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:  # f"{loss:.4f}" formats the number, as PyTorch
            return format(self._host_item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} for a tensor of shape {self._data.shape}: "
                            f"only 0-d tensors format as numbers (use .item())")
        return str(self)

    def __round__(self, ndigits=None):
        # torch.Tensor defines no __round__ either; say what works instead
        raise TypeError("round() of a tensor: use round(t.item(), n) for a number")

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ValueError(
                f"the truth value of a tensor with {self._data.size} elements is ambiguous; use .any() or .all()"
            )
        return bool(self._host_item())

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(self._data.shape[0]):
            yield self[i]

    def __repr__(self) -> str:
        """PyTorch's layout: ``tensor([1.0000, 2.5000], grad_fn=<MulBackward0>)`` (see tensors/core/printing.py)."""
        grad_fn = grad_fn_of(self)
        return tensor_repr(self._data, "" if grad_fn is None else grad_fn.name(), self._requires_grad)

    # ------------------------------------------------------------ copying
    def __reduce_ex__(self, protocol):
        """Pickle the data, the flag and ``.grad``, never the graph (an op's output comes back a leaf).

        The default would pickle the parents and every saved array too:
        megabytes for a scalar loss, and a graph that no longer reaches the
        original leaves.
        """
        requires_grad = self._requires_grad and self._rule is None
        return (_unpickled_tensor, (type(self), self._data, requires_grad, self._grad))

    def __deepcopy__(self, memo):
        """A leaf copied with its data and ``.grad``; an op's output is refused, as in PyTorch."""
        if self._rule is not None:
            raise RuntimeError("deepcopy: only leaf tensors can be deep-copied (this one is the output of an op); "
                               "use .detach() first")
        new = _unpickled_tensor(type(self), self._data.copy(order="K"), self._requires_grad, None)  # keeps the layout
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        return new

    # ------------------------------------------------------------ autograd
    def detach(self) -> "Tensor":
        """A tensor sharing ``data`` (and its version counter) but outside the graph."""
        out = Tensor(self._data)
        out._base = self if self._base is None else self._base
        return out

    def detach_(self) -> "Tensor":
        """Take this tensor out of the graph, in place: it becomes a leaf that does not require grad; returns self.

        A view of another tensor is refused, as in PyTorch (its base would
        still see it as part of the graph): use ``detach()``.
        """
        if self._base is not None and self._data is not self._base._data:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._prev = ()
        self._rule = None
        self._ctx = None
        self._requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place on a leaf; returns self.

        An op's output keeps its flag, as in PyTorch: turning it off would make
        backward skip the paths through it and return a gradient missing their part.
        """
        requires_grad = bool(requires_grad)
        if requires_grad != self._requires_grad and self._rule is not None:
            raise RuntimeError(
                f"requires_grad can be changed on leaf tensors only; this one is the output of an op "
                f"(use .detach() for a copy outside the graph)"
            )
        if requires_grad:
            _check_can_require_grad(self._data.dtype)
        self._requires_grad = requires_grad
        return self


class NodeExtras:
    """What a Tensor carries beyond the graph: hooks, the retain_grad flag, its creation site.

    A Tensor's ``_extras`` is None for almost every tensor, so the backward
    pass pays one attribute read per node for the feature.
    """

    __slots__ = ("site", "hooks", "retains_grad", "__weakref__")

    def __init__(self, site: Any = None) -> None:
        self.site = site  # (filename, line, function) under detect_anomaly(), else None
        self.hooks: Dict[int, Callable] = {}
        self.retains_grad = False


# ---------------------------------------------------------------------------
# making results
# ---------------------------------------------------------------------------

ndarray = np.ndarray
_new = object.__new__

#: one-element list: number of in-place ops so far (see the module docstring)
CLOCK = [0]

#: ``detect_anomaly()``: ``[threads with it on, check]``.  :func:`make` reads
#: only the count (zero almost always); :mod:`taugrad.debug.anomaly` sets both,
#: the check being ``check(data, parents, rule, ctx) -> NodeExtras or None``.
ANOMALY: list = [0, None]


_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)


def is_tensor(obj) -> bool:
    """True for a taugrad ``Tensor`` (a ``Parameter`` included), as ``torch.is_tensor``."""
    return isinstance(obj, Tensor)


def make(data, parents: tuple, rule_fn, ctx=None) -> Tensor:
    """The result Tensor of an op; a graph node if grad mode is on and a parent requires grad."""
    if type(data) is not ndarray:
        data = as_array(data)
    t = _new(Tensor)
    t._data = data
    t._grad = None
    t._version = 0
    t._base = None
    # detect_anomaly(): the only cost when it is off is this test of a counter
    t._extras = ANOMALY[1](data, parents, rule_fn, ctx) if ANOMALY[0] else None
    if _grad_mode.enabled:
        for p in parents:
            if p._requires_grad:
                dtype = data.dtype
                # float32/float64 by identity first: .kind is one more lookup on every op
                if dtype is not _FLOAT32 and dtype is not _FLOAT64 and dtype.kind == "c":
                    raise _complex_graph_error(rule_fn)
                t._requires_grad = True
                t._prev = parents
                t._rule = rule_fn
                t._ctx = ctx
                t._clock = CLOCK[0]
                return t
    t._requires_grad = False
    t._prev = ()
    t._rule = None
    t._ctx = None
    t._clock = 0
    return t


class ComplexGradError(TypeError):
    """A complex result would need a gradient: refused (the rules are for real functions)."""


def _complex_graph_error(rule_fn) -> TypeError:
    # the local rules are written for real functions; complex gradients need
    # conjugates (Wirtinger calculus), so refuse instead of returning wrong numbers
    name = rule_fn.op
    return ComplexGradError(
        f"{name}: the result is complex and an input requires grad; taugrad differentiates real "
        f"functions only (take .real / .abs() first, or detach())"
    )


def make_view(data, source: Tensor, parents: tuple, rule_fn, ctx=None) -> Tensor:
    """Like :func:`make` for ops whose result may share ``source``'s storage.

    The view shares the version counter of ``source``'s storage, so an in-place
    change through either one is seen by the backward of ops that read the other.
    """
    t = make(data, parents, rule_fn, ctx)
    t._base = source if source._base is None else source._base
    return t


def constant(data) -> Tensor:
    """A result that never takes part in a graph (comparisons, argmax...)."""
    if type(data) is not ndarray:
        data = as_array(data)
    t = _new(Tensor)
    t._data = data
    t._grad = None
    t._requires_grad = False
    t._prev = ()
    t._rule = None
    t._ctx = None
    t._clock = 0
    t._version = 0
    t._base = None
    t._extras = None
    return t


def as_array(data):
    """NumPy returns scalars for 0-d results; a Tensor always holds an array."""
    if isinstance(data, np.generic):
        return np.asarray(data)
    if type(data) in ARRAY_MODULES:
        return data
    return np.asarray(data)


def device_mismatch(op: str, *tensors):
    """PyTorch's error for tensors of one op on different devices, or None when they share one."""
    first = None
    for t in tensors:
        if isinstance(t, Tensor):
            dev = device_of(t._data)
            if first is None:
                first = dev
            elif dev != first:
                return RuntimeError(f"{op}: expected all tensors to be on the same device, but found at least two "
                                    f"devices, {first} and {dev}!")
    return None


def check_same_device(op: str, *tensors) -> None:
    """Raise :func:`device_mismatch`'s error if ``tensors`` are on two devices (for an op's error path)."""
    mixed = device_mismatch(op, *tensors)
    if mixed is not None:
        raise mixed


def is_sparse_operand(x) -> bool:
    """Whether ``x`` is a sparse tensor (``taugrad.sparse.SparseTensor``, a class beside Tensor).

    Recognised by its ``is_sparse`` class flag, since the core cannot import that module; the few dense ops
    torch defines on a sparse operand (``add``, ``mm``, ``matmul``, ``sum``) hand it to its methods.
    """
    return getattr(type(x), "is_sparse", None) is True


def operand(x, like: Tensor) -> Tensor:
    """The other operand of a binary op as a Tensor.

    A Python number becomes a 0-d constant of the dtype PyTorch computes in:
    ``like``'s where the number's category is not higher (a float with a
    float32 tensor, an int with an int32 tensor, a bool with anything), else
    the number's own (the default float dtype for a float; int64 for an int
    meeting a bool tensor).  Arrays keep their dtype; lists follow ``tensor()``.
    """
    if isinstance(x, Tensor):
        # one type comparison: arrays of two backends are tensors on two devices
        if type(x._data) is not type(like._data) and not same_backend(x._data, like._data):
            raise device_mismatch(sys._getframe(1).f_code.co_name, like, x)  # the op is the caller
        return x
    if isinstance(x, (bool, int, float, complex, np.number, np.bool_)) and not isinstance(x, np.ndarray):
        value = x.item() if isinstance(x, np.generic) else x
        kind = like._data.dtype.kind
        xp = array_module(like._data)  # the number joins like's device (CuPy refuses NumPy 0-d operands)
        if (isinstance(value, bool) or (kind in "fc" and not isinstance(value, complex))
                or (kind in "iu" and isinstance(value, int))):
            try:
                return constant(xp.asarray(value, dtype=like._data.dtype))
            except OverflowError:  # an int beyond int8's range: int64 here, wrapped when promoted (as torch)
                return constant(xp.asarray(value))
        return constant(xp.asarray(value, dtype=python_number_dtype(value)))
    return constant(to_array(x))




# ---------------------------------------------------------------------------
# in-place bookkeeping
# ---------------------------------------------------------------------------


def check_inplace(x: Tensor, op: str) -> None:
    """Refuse in-place changes that would corrupt a graph being recorded."""
    if x.requires_grad and _grad_mode.enabled:
        if x._rule is None:
            raise RuntimeError(
                f"{op}: a leaf Variable that requires grad is being used in an in-place operation. (A leaf tensor "
                f"that requires grad cannot be changed in place while gradients are recorded; do it inside "
                f"`with taugrad.no_grad():`, as an optimizer step does)"
            )
        raise RuntimeError(
            f"{op}: in-place changes of a tensor produced by a recorded op are not supported; "
            f"write it out of place (y = y + 1 rather than y += 1) or detach() first"
        )
    if not getattr(x._data.flags, "writeable", True):  # CuPy arrays have no read-only flag
        raise ValueError(f"{op}: this tensor's data is read-only (an expand()ed view?); clone() it first")


def bump_version(x: Tensor) -> None:
    """Mark ``x``'s storage as changed now (for the backward-time check)."""
    CLOCK[0] += 1
    now = CLOCK[0]
    x._version = now
    if x._base is not None:
        x._base._version = now

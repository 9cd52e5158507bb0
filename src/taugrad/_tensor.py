"""``Tensor``: the autograd engine over n-dimensional arrays.

A ``Tensor`` is both a value (``.data``, a NumPy array) and a node of the graph
that produced it.  The graph bookkeeping is the scalar engine's, unchanged:

* ``_prev``  -- the parent tensors (empty for a leaf), in operand order;
* ``_rule``  -- the op's local derivative rule, a module-level function
  ``rule(g, out, ins, node) -> tuple of parent gradients`` (see :mod:`taugrad.ops`);
* ``_ctx``   -- constants the rule needs (axes, shapes, masks); never a Tensor of
  the graph, so a graph holds no reference cycle and is freed as soon as its
  output is dropped.

``backward()`` (in :mod:`taugrad.tensor_engine`) walks the graph with the shared
:func:`taugrad.autograd.topological_order` and runs the rules in reverse.

The methods (``+``, ``exp``, ``sum``, ``@``, indexing...) are the op functions of
:mod:`taugrad.ops`, bound at the bottom of this file, so ``x.exp()`` and
``taugrad.exp(x)`` run the same code with no extra call layer.

Array-module seam: every array operation goes through operators, array methods,
NumPy ufuncs (which dispatch to other array libraries) or ``t._xp`` -- the
module of the tensor's array type.  A CuPy backend would register its array type
in :data:`taugrad.ops.core.ARRAY_MODULES`; nothing else names NumPy's array type.
"""
from __future__ import annotations

import copy

import numpy as np

_PYTHON_SCALARS = (bool, int, float)


def _dtype_of(dtype):
    """``np.dtype`` for a NumPy dtype, a string ('float32') or a Python type."""
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unknown dtype {dtype!r}; use e.g. 'float32', 'float64', 'int64'") from None


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

    Python floats (and lists of them) become float32, Python ints int64, bools
    bool; arrays and NumPy scalars keep their dtype.  Arrays are not copied
    unless ``dtype`` asks for a conversion.
    """
    if isinstance(data, Tensor):
        data = data.data
    if dtype is not None:
        dtype = _dtype_of(dtype)
    if isinstance(data, np.ndarray):
        if data.dtype.kind not in "biufc":
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
    if array.dtype.kind not in "biufc":
        raise TypeError(
            f"cannot make a Tensor from {type(data).__name__} of dtype {array.dtype} (ragged or non-numeric data, or integers beyond 64 bits)"
        )
    if dtype is None and python_numbers:
        if array.dtype.kind == "u":  # NumPy's way out for a Python int above int64's range
            raise ValueError(f"cannot make a Tensor: an integer in {_shorten(data)} does not fit in int64 "
                             f"(pass dtype='float64' or dtype='uint64' to store it)")
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype.kind == "i" and array.dtype != np.int64:
            array = array.astype(np.int64)
    return array


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
    if value.data.shape != tensor.data.shape:
        raise ValueError(f"grad: a gradient of shape {value.data.shape} cannot be assigned to a tensor of "
                         f"shape {tensor.data.shape}")
    if value.data.dtype != tensor.data.dtype:
        raise TypeError(f"grad: a gradient of dtype {value.data.dtype} cannot be assigned to a tensor of "
                        f"dtype {tensor.data.dtype}")


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


class Tensor:
    """An n-dimensional array that records the operations applied to it.

    ``Tensor(data, requires_grad=False, dtype=None)``: ``data`` is an array, a
    (nested) list or a number.  Python floats become float32 (as ``torch.tensor``);
    NumPy arrays keep their dtype and are wrapped *without a copy* (use
    :func:`taugrad.tensor` for a copy).  Only floating tensors may require grad.

    After ``loss.backward()`` every leaf with ``requires_grad=True`` holds
    ``d loss / d leaf`` in ``.grad`` (a Tensor, accumulated across calls);
    intermediate tensors keep ``.grad = None``.
    """

    __slots__ = (
        "data",  # the ndarray (writable; gradcheck perturbs it in place)
        "_grad",  # Tensor or None; only leaves receive one (``grad`` checks what is assigned)
        "_requires_grad",  # (``requires_grad`` checks what is assigned)
        "_prev",  # parent Tensors; () for a leaf
        "_rule",  # local derivative rule, None for a leaf (RELEASED after backward)
        "_ctx",  # constants for the rule (never a Tensor of the graph)
        "_clock",  # in-place clock when this node was recorded (see ops.core)
        "_version",  # bumped (to the clock) by in-place ops on this tensor's storage
        "_base",  # the tensor whose storage ``data`` views, or None
        "_hooks",  # reserved for issue 7: retain_grad / register_hook
        "__weakref__",
    )

    # NumPy must not treat a Tensor as an array in ``ndarray + Tensor``: returning
    # NotImplemented lets Python call Tensor.__radd__, which records the op.
    __array_ufunc__ = None
    __hash__ = object.__hash__  # nodes are dict keys by identity; == is elementwise

    def __init__(self, data, requires_grad: bool = False, dtype=None):
        array = to_array(data, dtype)
        if requires_grad:
            _check_can_require_grad(array.dtype)
        self.data = array
        self._grad = None
        self._requires_grad = bool(requires_grad)
        self._prev = ()
        self._rule = None
        self._ctx = None
        self._clock = 0
        self._version = 0
        self._hooks = None
        # Tensor(t) shares t's memory (no copy, as for an array): it shares t's
        # version counter too, as a view does, so in-place changes through
        # either one are seen by the backward of ops that read the other
        self._base = None
        if isinstance(data, Tensor) and array is data.data:
            self._base = data if data._base is None else data._base

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
    def shape(self) -> tuple:
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op (as in PyTorch)."""
        return self._rule is None

    @property
    def _xp(self):
        """The array module of ``data`` (NumPy here; the seam for CuPy)."""
        from taugrad.ops.core import array_module

        return array_module(self.data)

    @property
    def _op(self) -> str:
        """Name of the op that produced this tensor ('' for a leaf)."""
        return _engine.op_name(self)

    @property
    def grad_fn(self):
        """The local rule of the op that produced this tensor, or None for a leaf."""
        return self._rule

    def size(self, dim=None):
        """Shape as a tuple, or the length of dimension ``dim``."""
        if dim is None:
            return self.data.shape
        from taugrad.ops.core import normalize_dim

        return self.data.shape[normalize_dim(dim, self.data.ndim, "size")]

    def numel(self) -> int:
        return self.data.size

    def dim(self) -> int:
        return self.data.ndim

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    # ----------------------------------------------------------- conversion
    def numpy(self) -> np.ndarray:
        """The underlying array (shared, not copied: as ``torch.Tensor.numpy``).

        Refused for a tensor that requires grad, as in PyTorch: writing into the
        shared array would change what backward() reads without its in-place
        check seeing it.  ``.detach().numpy()`` says that is intended.
        """
        if self.requires_grad:
            raise RuntimeError("numpy(): the tensor requires grad; use .detach().numpy() to get its array")
        return self.data

    def item(self):
        """The single element as a Python number."""
        if self.data.size != 1:
            raise ValueError(f"item(): tensor has {self.data.size} elements, expected exactly 1")
        return self.data.item()

    def tolist(self):
        return self.data.tolist()

    def __array__(self, dtype=None, copy=None):
        if dtype is not None and dtype != self.data.dtype:
            return self.data.astype(dtype)
        if copy:
            return self.data.copy()
        if self.requires_grad:  # readable, but np.asarray(t)[...] = v must not bypass the in-place check
            view = self.data.view()
            view.flags.writeable = False
            return view
        return self.data

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.data.size != 1 or self.data.dtype.kind not in "iub":
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.data.item())

    def __format__(self, spec: str) -> str:
        if spec and self.data.size == 1:  # f"{loss:.4f}" formats the number, as PyTorch
            return format(self.data.item(), spec)
        return format(str(self), spec)

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise ValueError(
                f"the truth value of a tensor with {self.data.size} elements is ambiguous; use .any() or .all()"
            )
        return bool(self.data.item())

    def __iter__(self):
        if self.data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(self.data.shape[0]):
            yield self[i]

    def __repr__(self) -> str:
        body = np.array2string(self.data, separator=", ", prefix="Tensor(")
        extras = []
        if self.data.dtype not in (np.float32, np.int64, np.bool_):
            extras.append(f"dtype={self.data.dtype}")
        if self._rule is not None:
            freed_op = getattr(self._ctx, "op", None) if self._op == "released" else None
            extras.append(f"grad_fn=<{freed_op}, released>" if freed_op else f"grad_fn=<{self._op}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"Tensor({body}{''.join(', ' + e for e in extras)})"

    # ------------------------------------------------------------ copying
    def __reduce_ex__(self, protocol):
        """Pickle the data, the flag and ``.grad``, never the graph (an op's output comes back a leaf).

        The default would pickle the parents and every saved array too:
        megabytes for a scalar loss, and a graph that no longer reaches the
        original leaves.
        """
        requires_grad = self._requires_grad and self._rule is None
        return (_unpickled_tensor, (type(self), self.data, requires_grad, self._grad))

    def __deepcopy__(self, memo):
        """A leaf copied with its data and ``.grad``; an op's output is refused, as in PyTorch."""
        if self._rule is not None:
            raise RuntimeError("deepcopy: only leaf tensors can be deep-copied (this one is the output of an op); "
                               "use .detach() first")
        new = _unpickled_tensor(type(self), self.data.copy(order="K"), self._requires_grad, None)  # keeps the layout
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        return new

    # ------------------------------------------------------------ autograd
    def detach(self) -> "Tensor":
        """A tensor sharing ``data`` (and its version counter) but outside the graph."""
        out = Tensor(self.data)
        out._base = self if self._base is None else self._base
        return out

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
            _check_can_require_grad(self.data.dtype)
        self._requires_grad = requires_grad
        return self


# ---------------------------------------------------------------------------
# Method table.  The ops live in taugrad.ops (one module per family) and need
# the class above, so they are imported here, after it.
# ---------------------------------------------------------------------------
from taugrad.ops import elementwise as _ew  # noqa: E402
from taugrad.ops import index as _ix  # noqa: E402
from taugrad.ops import inplace as _ip  # noqa: E402
from taugrad.ops import matmul as _mm  # noqa: E402
from taugrad.ops import reduce as _rd  # noqa: E402
from taugrad.ops import shape as _sh  # noqa: E402
from taugrad import tensor_engine as _engine  # noqa: E402

# arithmetic (with NumPy broadcasting) and comparisons
Tensor.__add__ = Tensor.__radd__ = Tensor.add = _ew.add
Tensor.__sub__ = Tensor.sub = _ew.sub
Tensor.__rsub__ = _ew.rsub
Tensor.__mul__ = Tensor.__rmul__ = Tensor.mul = _ew.mul
Tensor.__truediv__ = Tensor.div = _ew.div
Tensor.__rtruediv__ = _ew.rdiv
Tensor.__pow__ = Tensor.pow = _ew.pow
Tensor.__rpow__ = _ew.rpow
Tensor.__neg__ = Tensor.neg = _ew.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = Tensor.abs = _ew.abs
Tensor.__lt__ = Tensor.lt = _ew.lt
Tensor.__le__ = Tensor.le = _ew.le
Tensor.__gt__ = Tensor.gt = _ew.gt
Tensor.__ge__ = Tensor.ge = _ew.ge
Tensor.__eq__ = Tensor.eq = _ew.eq
Tensor.__ne__ = Tensor.ne = _ew.ne
Tensor.__invert__ = Tensor.logical_not = _ew.logical_not
Tensor.__and__ = Tensor.__rand__ = _ew.bitwise_and
Tensor.__or__ = Tensor.__ror__ = _ew.bitwise_or
Tensor.__xor__ = Tensor.__rxor__ = _ew.bitwise_xor
Tensor.logical_and = _ew.logical_and
Tensor.logical_or = _ew.logical_or
# elementwise functions
Tensor.exp = _ew.exp
Tensor.log = _ew.log
Tensor.log1p = _ew.log1p
Tensor.sqrt = _ew.sqrt
Tensor.sin = _ew.sin
Tensor.cos = _ew.cos
Tensor.tanh = _ew.tanh
Tensor.sigmoid = _ew.sigmoid
Tensor.relu = _ew.relu
Tensor.gelu = _ew.gelu
Tensor.erf = _ew.erf
Tensor.sign = _ew.sign
Tensor.maximum = _ew.maximum
Tensor.minimum = _ew.minimum
Tensor.clip = Tensor.clamp = _ew.clip
Tensor.where = lambda self, condition, other: _ew.where(condition, self, other)
Tensor.astype = Tensor.to = _ew.astype
Tensor.float = lambda self: _ew.astype(self, np.float32)
Tensor.double = lambda self: _ew.astype(self, np.float64)
Tensor.clone = _ew.clone
# reductions
Tensor.sum = _rd.sum
Tensor.mean = _rd.mean
Tensor.max = _rd.max
Tensor.min = _rd.min
Tensor.amax = _rd.amax
Tensor.amin = _rd.amin
Tensor.argmax = _rd.argmax
Tensor.argmin = _rd.argmin
Tensor.var = _rd.var
Tensor.std = _rd.std
Tensor.logsumexp = _rd.logsumexp
Tensor.all = _rd.all
Tensor.any = _rd.any
# linear algebra
Tensor.__matmul__ = Tensor.matmul = _mm.matmul
Tensor.__rmatmul__ = _mm.rmatmul
# shapes
Tensor.reshape = Tensor.view = _sh.reshape
Tensor.flatten = _sh.flatten
Tensor.transpose = Tensor.swapaxes = _sh.transpose
Tensor.permute = _sh.permute
Tensor.T = property(_sh.full_transpose)
Tensor.mT = property(lambda self: _sh.transpose(self, -2, -1))
Tensor.squeeze = _sh.squeeze
Tensor.unsqueeze = _sh.unsqueeze
Tensor.expand = Tensor.broadcast_to = _sh.expand
Tensor.expand_as = lambda self, other: _sh.expand(self, other.shape)
Tensor.split = _sh.split
Tensor.chunk = _sh.chunk
# indexing
Tensor.__getitem__ = _ix.getitem
Tensor.__setitem__ = _ix.setitem
# in-place (bump the version counter; refused on tensors that require grad in grad mode)
Tensor.add_ = _ip.add_
Tensor.sub_ = _ip.sub_
Tensor.mul_ = _ip.mul_
Tensor.div_ = _ip.div_
Tensor.zero_ = _ip.zero_
Tensor.fill_ = _ip.fill_
Tensor.copy_ = _ip.copy_
Tensor.clamp_ = _ip.clamp_
Tensor.normal_ = _ip.normal_
Tensor.uniform_ = _ip.uniform_
Tensor.__iadd__ = _ip.iadd
Tensor.__isub__ = _ip.isub
Tensor.__imul__ = _ip.imul
Tensor.__itruediv__ = _ip.itruediv
# autograd
Tensor.backward = _engine.backward
# hooks (issue 7)
from taugrad import hooks as _hooks  # noqa: E402

Tensor.register_hook = _hooks.register_hook
Tensor.retain_grad = _hooks.retain_grad
Tensor.retains_grad = property(_hooks.retains_grad)

"""Array backends: which array library holds a tensor's numbers, per device.

A tensor's ``_data`` is an array of one backend: a NumPy array on ``'cpu'``,
a CuPy array on ``'cuda'``.  The ops never name a library: they ask the array
for its module (:func:`array_module`) and call ``xp.exp``, ``xp.zeros``... on
it, so the same op code runs on every backend.  What the array API lacks is
here, once per backend: :func:`scatter_add` (``np.add.at`` / ``cupy.add.at``),
moving arrays between devices (:func:`to_host`, :func:`to_device`), and the
device an array lives on (:func:`device_of`).

CuPy is imported the first time a CUDA device is asked for (:func:`backend_for`)
or a CuPy array is met, never on ``import taugrad``.  A test backend (an array
type computing on the CPU that refuses every NumPy call) can stand in for
``'cuda'`` through :func:`register_backend`, so the whole device path runs on
machines without a GPU.

The :class:`device` class (``taugrad.device``) lives here, below the tensor
engine, because the backends are looked up by it.
"""
from __future__ import annotations

import contextlib
import sys
import weakref
from typing import Any, Callable, Dict, Optional

import numpy as np

from taugrad.tensors.core.device_checks import raise_pending

#: the device types ``torch.device`` accepts (most exist only in PyTorch builds for that hardware)
KNOWN_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "ipu", "hpu", "mtia", "vulkan", "lazy",
               "privateuseone")


class device:
    """A device: ``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:0')``, or a copy of another.

    ``.type`` is the kind (``'cpu'``), ``.index`` the number or None.  Two
    devices are equal when both agree; as in PyTorch a device never equals a
    string (compare ``str(d)`` or ``d.type``).
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's parameter name
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device: give either a device or a type and an index, not both")
            self._type, self._index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device: expected a device string such as 'cpu', got {type!r}")
        name, colon, number = type.partition(":")
        if name not in KNOWN_TYPES:
            raise RuntimeError(f"device: unknown device type {type!r}; expected one of {', '.join(KNOWN_TYPES)}")
        if colon:
            if index is not None or not number.isdigit():
                raise RuntimeError(f"device: invalid device string {type!r}")
            index = int(number)
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(f"device: index must be an int, got {index!r}")
            if index < 0:
                raise RuntimeError(f"device: index must not be negative, got {index}")
        self._type, self._index = name, index

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self):
        return self._index

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return (self._type, self._index) == (other._type, other._index)

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __reduce__(self):
        return (device, (self._type, self._index))

    def __enter__(self) -> "device":
        """``with taugrad.device('cuda'):`` makes it the default device of the factory functions inside."""
        DEFAULT_DEVICES.append(self)
        return self

    def __exit__(self, *exc) -> None:
        DEFAULT_DEVICES.pop()


CPU = device("cpu")

#: the default device of the factory functions (``zeros``, ``randn``, layers...): the last entry.  The first
#: is what ``set_default_device`` sets; ``with device(...)`` blocks push and pop above it.
DEFAULT_DEVICES = [CPU]


class Backend:
    """One array library serving one device type.

    ``module``: the ``xp`` of the ops (``numpy``, ``cupy``); ``array_type``: its
    array class; the callables move arrays, say where one lives, and give the
    context in which the library allocates on a given device (``use_device``:
    CuPy allocates on its *current* GPU).
    """

    __slots__ = ("device_type", "module", "array_type", "to_host", "from_host", "device_of", "scatter_add",
                 "use_device")

    def __init__(self, device_type: str, module, array_type: type, *, to_host: Callable, from_host: Callable,
                 device_of: Callable, scatter_add: Callable, use_device: Callable):
        self.device_type = device_type
        self.module = module
        self.array_type = array_type
        self.to_host = to_host
        self.from_host = from_host
        self.device_of = device_of
        self.scatter_add = scatter_add
        self.use_device = use_device


#: array type -> its array module.  :func:`array_module` reads it on every op.
ARRAY_MODULES: Dict[type, Any] = {np.ndarray: np}

#: array type -> its :class:`Backend`
_BY_ARRAY_TYPE: Dict[type, Backend] = {}

#: device type ('cpu', 'cuda') -> its :class:`Backend`
_BY_DEVICE_TYPE: Dict[str, Backend] = {}


def register_backend(device_type: str, module, array_type: type, *, to_host: Callable,
                     from_host: Callable, device_of: Optional[Callable] = None,
                     scatter_add: Optional[Callable] = None, use_device: Optional[Callable] = None) -> Backend:
    """Serve ``device_type`` with ``module`` (whose arrays are ``array_type``).

    ``to_host(arr)`` gives a NumPy array, ``from_host(ndarray, device)`` an
    array of this backend on ``device``; ``device_of(arr)`` defaults to index
    0 of ``device_type``; ``scatter_add(target, index, values)`` to
    ``module.add.at``; ``use_device(device)`` a context manager under which
    ``module``'s creation functions allocate on ``device`` (default: nothing to
    do).  Replaces the backend registered before for the device type (a test
    backend standing in for CuPy, and back).
    """
    old = _BY_DEVICE_TYPE.get(device_type)
    if old is not None and old.array_type is not array_type:
        unregister_backend(device_type)
    if device_of is None:
        fixed = device(device_type, 0)
        device_of = lambda arr: fixed  # noqa: E731 - one device of this type
    if scatter_add is None:
        scatter_add = module.add.at
    if use_device is None:
        use_device = lambda dev: contextlib.nullcontext()  # noqa: E731 - one place to allocate
    backend = Backend(device_type, module, array_type, to_host=to_host, from_host=from_host,
                      device_of=device_of, scatter_add=scatter_add, use_device=use_device)
    ARRAY_MODULES[array_type] = module
    _BY_ARRAY_TYPE[array_type] = backend
    _BY_DEVICE_TYPE[device_type] = backend
    return backend


def unregister_backend(device_type: str) -> None:
    """Forget the backend of ``device_type`` (the CPU's stays)."""
    if device_type == "cpu":
        raise ValueError("the CPU backend (NumPy) cannot be removed")
    backend = _BY_DEVICE_TYPE.pop(device_type, None)
    if backend is not None:
        ARRAY_MODULES.pop(backend.array_type, None)
        _BY_ARRAY_TYPE.pop(backend.array_type, None)


def _numpy_from_host(arr, dev):
    return arr


register_backend("cpu", np, np.ndarray, to_host=lambda arr: arr, from_host=_numpy_from_host,
                 device_of=lambda arr: CPU, scatter_add=np.add.at)


# ---------------------------------------------------------------------------
# CuPy, registered on first use
# ---------------------------------------------------------------------------


def _cupy_device_of(arr):
    return device("cuda", arr.device.id)


#: the dtypes ``cupyx.scatter_add`` takes (its atomicAdd kernels); others go through the host
_CUPY_SCATTER_DTYPES = frozenset(np.dtype(t) for t in (np.int32, np.uint32, np.uint64, np.float16, np.float32,
                                                         np.float64))


def _register_cupy(cupy):
    import cupyx  # optional dependency, installed with CuPy

    def from_host(arr, dev):
        # Row-major on the GPU, whatever the host layout (nn.Linear's weight is column-major
        # there): CuPy's elementwise results are row-major, and a column-major parameter
        # updated by them is read strided (p -= lr * g on 4096x4096 float32 on an H200:
        # 770 us against 168 us with both row-major)
        with cupy.cuda.Device(dev.index or 0):
            return cupy.asarray(arr, order="C")

    # cupy.add.at where CuPy has it (cupyx.scatter_add, the older name, warns that it is deprecated there)
    add_at = getattr(cupy.add, "at", None) or cupyx.scatter_add

    def scatter_add(target, index, values):
        if target.dtype in _CUPY_SCATTER_DTYPES:
            add_at(target, index, values)
            return
        # int64, int8, bool...: no atomic add on the GPU; exact on the host (slow, and rare: integer scatters)
        host = cupy.asnumpy(target)
        host_index = tuple(cupy.asnumpy(i) if isinstance(i, cupy.ndarray) else i for i in index) \
            if isinstance(index, tuple) else (cupy.asnumpy(index) if isinstance(index, cupy.ndarray) else index)
        np.add.at(host, host_index, cupy.asnumpy(values) if isinstance(values, cupy.ndarray) else values)
        target[...] = cupy.asarray(host)

    return register_backend("cuda", cupy, cupy.ndarray, to_host=cupy.asnumpy, from_host=from_host,
                            device_of=_cupy_device_of, scatter_add=scatter_add,
                            use_device=lambda dev: cupy.cuda.Device(dev.index or 0))


def _missing_cuda(why: str) -> RuntimeError:
    return RuntimeError(f"CUDA requested, but {why}")


def cupy_or_none():
    """CuPy if it is installed (importing it), else None.  Never raises."""
    try:
        import cupy  # optional dependency: only for CUDA tensors
    except Exception:  # noqa: BLE001 - a broken CuPy install counts as none
        return None
    return cupy


#: CuPy module -> how many GPUs it saw (asked once: the count does not change while a process runs)
_GPU_COUNTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def gpu_count(cupy) -> int:
    """How many CUDA devices CuPy sees (0 when the driver or runtime is missing)."""
    count = _GPU_COUNTS.get(cupy)
    if count is None:
        try:
            count = int(cupy.cuda.runtime.getDeviceCount())
        except Exception:  # noqa: BLE001 - no driver / no device: CuPy raises its own CUDA errors
            count = 0
        _GPU_COUNTS[cupy] = count
    return count


def _cuda_backend(dev: device) -> Backend:
    backend = _BY_DEVICE_TYPE.get("cuda")
    if backend is None:
        cupy = cupy_or_none()
        if cupy is None:
            raise _missing_cuda("CuPy is not installed (pip install 'taugrad[cuda]', or a cupy-cudaXXx wheel "
                                "matching your CUDA)")
        count = gpu_count(cupy)
        if count == 0:
            raise _missing_cuda("CuPy found no GPU (no CUDA device or driver on this machine)")
        backend = _register_cupy(cupy)
    if dev.index is not None and backend.module.__name__ == "cupy":
        count = gpu_count(backend.module)
        if dev.index >= count:
            raise RuntimeError(f"CUDA device {dev.index} requested, but there are only {count} CUDA devices")
    return backend


def _backend_of_device(dev: device) -> Backend:
    backend = _BY_DEVICE_TYPE.get(dev.type)
    if backend is not None and dev.type != "cuda":
        return backend
    if dev.type == "cuda":
        return _cuda_backend(dev)
    raise RuntimeError(f"device {str(dev)!r} requested, but no {dev.type.upper()} device is available "
                       f"(taugrad runs on the CPU, and on CUDA GPUs through CuPy)")


def as_device(spec) -> device:
    """A :class:`device` from a device, a string, or an int (meaning ``cuda:<n>``, as torch)."""
    if isinstance(spec, device):
        return spec
    if isinstance(spec, str):
        return device(spec)
    if isinstance(spec, int) and not isinstance(spec, bool):
        return device("cuda", spec)
    raise TypeError(f"expected a device such as 'cpu' or 'cuda', got {spec!r}")


def make_on(dev, name: str, *args, **kwargs):
    """``xp.<name>(*args, **kwargs)`` of ``dev``'s array library, allocated on ``dev`` (``zeros``, ``eye``...).

    CuPy's creation functions allocate on its current GPU, so ``cuda:1``
    needs that GPU selected around the call (``'cuda'`` means ``cuda:0``, as
    moves take it).
    """
    if dev.type == "cpu":
        return getattr(np, name)(*args, **kwargs)
    backend = _backend_of_device(dev)
    with backend.use_device(dev):
        return getattr(backend.module, name)(*args, **kwargs)


def backend_for(spec):
    """The array module of a device (``'cpu'`` -> numpy, ``'cuda'``/``'cuda:N'`` -> cupy).

    Raises a one-line ``RuntimeError`` saying what is missing: CuPy, or a GPU.
    """
    dev = as_device(spec)
    if dev.type == "cpu":
        return np
    return _backend_of_device(dev).module


# ---------------------------------------------------------------------------
# questions about arrays
# ---------------------------------------------------------------------------


def _late_backend(array) -> Optional[Backend]:
    """The backend of an array type not registered yet: CuPy's when the user made one (CuPy imported)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(array, cupy.ndarray):
        return _BY_ARRAY_TYPE.get(cupy.ndarray) or _register_cupy(cupy)
    return None


def _backend_of(array) -> Backend:
    backend = _BY_ARRAY_TYPE.get(type(array))
    if backend is None:
        if isinstance(array, np.ndarray):
            return _BY_DEVICE_TYPE["cpu"]
        backend = _late_backend(array)
        if backend is None:
            raise TypeError(f"not an array of any backend: {type(array).__name__}")
    return backend


def array_module(array):
    """The array library that owns ``array`` (``numpy`` for NumPy arrays and scalars)."""
    module = ARRAY_MODULES.get(type(array))
    if module is not None:
        return module
    backend = _late_backend(array)
    return np if backend is None else backend.module


def is_array(x) -> bool:
    """True for an array of any backend (NumPy, CuPy, a registered test backend)."""
    if type(x) in ARRAY_MODULES or isinstance(x, np.ndarray):
        return True
    return _late_backend(x) is not None


def device_of(array) -> device:
    """The :class:`device` ``array`` lives on."""
    if type(array) is np.ndarray:
        return CPU
    return _backend_of(array).device_of(array)


def to_host(array) -> np.ndarray:
    """``array`` as a NumPy array (itself for a NumPy array: no copy)."""
    if isinstance(array, np.ndarray):
        return array
    raise_pending()  # a value is about to be seen: first the checks the device has not answered yet
    return _backend_of(array).to_host(array)


def to_device(array, spec):
    """``array`` on device ``spec`` (itself when it is there already)."""
    dev = as_device(spec)
    here = device_of(array)
    if here == dev or (here.type == dev.type and dev.index is None and here.index in (None, 0)):
        return array
    host = to_host(array)
    if dev.type == "cpu":
        return host
    return _backend_of_device(dev).from_host(host, dev)


def scatter_add(target, index, values) -> None:
    """``target[index] += values`` with repeated indices adding up, in place (``np.add.at``)."""
    if type(target) is np.ndarray:
        np.add.at(target, index, values)
    else:
        _backend_of(target).scatter_add(target, index, values)


def same_backend(a, b) -> bool:
    """True when arrays ``a`` and ``b`` can meet in one op (same array type, or both NumPy)."""
    return type(a) is type(b) or (isinstance(a, np.ndarray) and isinstance(b, np.ndarray))


def move_like(host, like):
    """``host`` (a NumPy array, e.g. random draws) on the device of array ``like`` (itself on the CPU)."""
    if type(like) is np.ndarray or isinstance(like, np.ndarray):
        return host
    backend = _backend_of(like)
    return backend.from_host(host, backend.device_of(like))

"""Shared machinery of the differential database: the two libraries, inputs from NumPy, comparison.

Every sample runs twice, once with ``taugrad`` and once with ``torch``, from the same NumPy
values in float64. Results are compared with ``RTOL = ATOL = 1e-10``: both libraries compute the
same formulas in IEEE double precision, so the only differences allowed are the rounding of a
different summation order, far below 1e-10 for the small shapes used here.
"""
from __future__ import annotations

import contextlib
import dataclasses
import types
from typing import Any, Callable

import numpy as np
import torch

import taugrad
import taugrad.autograd
import taugrad.nn
import taugrad.nn.functional
import taugrad.nn.init
import taugrad.nn.utils
import taugrad.optim
import taugrad.optim.lr_scheduler
import taugrad.utils.data

RTOL = 1e-10
ATOL = 1e-10


def _namespace(root, name):
    return types.SimpleNamespace(
        name=name, root=root, nn=root.nn, F=root.nn.functional, optim=root.optim,
        sched=root.optim.lr_scheduler, utils=root.nn.utils, init=root.nn.init,
        data=root.utils.data, autograd=root.autograd, Tensor=root.Tensor,
    )


TAUGRAD = _namespace(taugrad, "taugrad")
TORCH = _namespace(torch, "torch")
LIBS = (TAUGRAD, TORCH)


@contextlib.contextmanager
def float64_default():
    """Both libraries build parameters and factory tensors in float64 inside the block."""
    before = torch.get_default_dtype(), taugrad.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    taugrad.set_default_dtype(taugrad.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(before[0])
        taugrad.set_default_dtype(before[1])


# ---------------------------------------------------------------------------
# inputs described once, in NumPy, built in either library
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Arr:
    """A tensor argument: its NumPy value, whether it is a leaf that requires grad.

    ``grad=None`` means: floating arrays require grad, others do not. ``leaf=False`` passes a
    clone of the leaf (a non-leaf), which is what an in-place call on an input needs.
    """

    value: np.ndarray
    grad: bool | None = None
    leaf: bool = False

    def wants_grad(self) -> bool:
        if self.grad is not None:
            return self.grad
        return np.asarray(self.value).dtype.kind == "f"


@dataclasses.dataclass(frozen=True)
class ByLib:
    """An argument that names something of the library: ``ByLib(lambda L: L.root.float64)``."""

    make: Callable[[Any], Any]


@dataclasses.dataclass(frozen=True)
class Gen:
    """An iterable argument passed as a one-shot generator over its items (``model.parameters()``)."""

    items: tuple


def build(L, spec, leaves: list):
    """The library's form of an argument description; leaves collects (leaf, passed) pairs."""
    if isinstance(spec, Arr):
        value = np.array(spec.value, copy=True)
        leaf = L.root.tensor(value, requires_grad=spec.wants_grad())
        passed = leaf if spec.leaf or not spec.wants_grad() else leaf.clone()
        leaves.append((leaf, passed))
        return passed
    if isinstance(spec, ByLib):
        return spec.make(L)
    if isinstance(spec, Gen):
        built = [build(L, item, leaves) for item in spec.items]
        return (item for item in built)
    if isinstance(spec, tuple):
        return tuple(build(L, item, leaves) for item in spec)
    if isinstance(spec, list):
        return [build(L, item, leaves) for item in spec]
    if isinstance(spec, dict):
        return {key: build(L, item, leaves) for key, item in spec.items()}
    return spec


def rng_for(key: str) -> np.random.Generator:
    """A generator seeded by a name, so a sample's values do not depend on the order of the table."""
    return np.random.default_rng(abs(hash_str(key)) % (2**32))


def hash_str(text: str) -> int:
    value = 0
    for ch in text:
        value = (value * 131 + ord(ch)) % (2**61 - 1)
    return value


# ---------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------


def is_tensor(obj) -> bool:
    return isinstance(obj, (taugrad.Tensor, torch.Tensor))


def to_numpy(obj):
    """A tensor's values as a NumPy array (detached, on the host)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().numpy()
    if isinstance(obj, taugrad.Tensor):
        return np.asarray(obj.detach().numpy())
    return np.asarray(obj)


def dtype_name(obj) -> str:
    return str(obj.dtype).replace("torch.", "").replace("taugrad.", "")


def assert_close(got, want, what: str, check_dtype: bool = True, rtol: float = RTOL):
    """Arrays, tensors, numbers, None and nested sequences/dicts equal to 1e-10 (or ``rtol``)."""
    if want is None or got is None:
        assert got is None and want is None, f"{what}: {type(got).__name__} where torch gives {type(want).__name__}"
        return
    if is_tensor(want) or isinstance(want, np.ndarray):
        assert is_tensor(got) or isinstance(got, np.ndarray), f"{what}: {type(got).__name__}, torch gives a tensor"
        if check_dtype and is_tensor(want) and is_tensor(got):
            assert dtype_name(got) == dtype_name(want), f"{what}: dtype {dtype_name(got)}, torch {dtype_name(want)}"
        _close_arrays(to_numpy(got), to_numpy(want), what, rtol)
        return
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{what}: {type(got).__name__}, torch gives a dict"
        assert list(got) == list(want), f"{what}: keys {list(got)}, torch {list(want)}"
        for key in want:
            assert_close(got[key], want[key], f"{what}[{key!r}]", check_dtype, rtol)
        return
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{what}: {type(got).__name__}, torch gives {type(want).__name__}"
        assert len(got) == len(want), f"{what}: {len(got)} items, torch {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{what}[{i}]", check_dtype, rtol)
        return
    if isinstance(want, (bool, str)) or want is ...:
        assert got == want, f"{what}: {got!r}, torch {want!r}"
        return
    if isinstance(want, (int, float)):
        if is_tensor(got) or isinstance(got, np.ndarray):
            got = to_numpy(got)
        _close_arrays(np.asarray(got, dtype=float), np.asarray(want, dtype=float), what, rtol)
        return
    assert got == want, f"{what}: {got!r}, torch {want!r}"


def _close_arrays(got: np.ndarray, want: np.ndarray, what: str, rtol: float = RTOL):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, torch {want.shape}"
    if want.dtype.kind == "b" or got.dtype.kind == "b":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    np.testing.assert_allclose(got.astype(np.float64) if got.dtype.kind != "c" else got,
                               want.astype(np.float64) if want.dtype.kind != "c" else want,
                               rtol=rtol, atol=ATOL * rtol / RTOL, equal_nan=True, err_msg=what)


def flat_tensors(out) -> list:
    """The tensors of an output, in order (a tensor, or a tuple/list/dict of them)."""
    if is_tensor(out):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for item in out for t in flat_tensors(item)]
    if isinstance(out, dict):
        return [t for item in out.values() for t in flat_tensors(item)]
    return []


def projection_loss(L, out, key: str):
    """A random projection of every differentiable output: sum_i <out_i, w_i>, w the same NumPy values."""
    rng = rng_for("projection:" + key)
    total = None
    for t in flat_tensors(out):
        if not t.requires_grad or not str(t.dtype).endswith(("float64", "float32")):
            continue
        w = L.root.tensor(rng.normal(size=tuple(t.shape)))
        term = (t * w).sum()
        total = term if total is None else total + term
    return total


def grads_of(leaves) -> list:
    return [None if leaf.grad is None else to_numpy(leaf.grad) for leaf, _ in leaves if leaf.requires_grad]


def torch_parameters(fn) -> list[str]:
    """The named parameters torch's callable takes (its signature, or its docstring's first line).

    Names starting with ``_`` are torch's internals (``_stacklevel``) and are left out.
    """
    import inspect
    import re

    try:
        params = inspect.signature(fn).parameters.values()
        names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if names or not fn.__doc__:
            return [n for n in names if not n.startswith("_") and n != "self"]
    except (TypeError, ValueError):
        pass
    doc = (fn.__doc__ or "").strip()
    match = re.match(r"[\w.]+\((.*?)\)\s*(->|$|\n)", doc, re.S)
    assert match, f"no signature for {fn!r}"
    names = []
    for part in match.group(1).replace("\n", " ").split(","):
        part = part.strip().lstrip("*").strip()
        name = re.split(r"[=:\s]", part)[0] if part else ""
        if name and name.isidentifier() and not name.startswith("_"):
            names.append(name)
    return names

"""Shared machinery for the Tensor tests: one harness checks any op three ways.

An op is described once (see ``op_table.py``) as a function ``fn(L, *tensors,
**kwargs)`` written against a small adapter ``L`` (:class:`Library`), so the
very same line runs on ``taugrad`` and on PyTorch.  :func:`check_op` then:

1. builds float64 inputs from a seeded NumPy generator, shaped as Hypothesis
   drew them and shaped by the op's *domain* (positive for ``log``, away from
   zero for ``abs``, all-distinct for ``max``...), so no input sits on a point
   where the derivative does not exist;
2. runs the op forward in both libraries and compares values, shapes, dtypes;
3. back-propagates the same *random* upstream gradient (a plain ``sum()``
   would hide errors such as a transposed or mis-broadcast gradient) and
   compares the input gradients with PyTorch's;
4. compares them again with central finite differences of
   ``L(x) = sum(f(x) * upstream)`` computed from taugrad's own forward.

PyTorch is a test oracle only and is imported here directly: a missing torch
must fail the suite, never skip it.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np
import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import taugrad
import taugrad.functional
from taugrad.tensors.ops.matmul import linear as _linear

# Deterministic, moderate and deadline-free: the CI machine has 2 shared cores.
HYPOTHESIS = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEW_EXAMPLES = settings(HYPOTHESIS, max_examples=8)

# float64 forward values of two correct implementations agree to rounding.
VALUE_TOL = dict(rtol=1e-10, atol=1e-12)
GRAD_TOL = dict(rtol=1e-8, atol=1e-10)
# Central differences: truncation ~eps**2, rounding ~1e-16 |L| / eps.
FD_EPS = 1e-6
FD_TOL = dict(rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# the two libraries behind one set of names
# ---------------------------------------------------------------------------


class Library:
    """What an op row may call, for one library; rows never name torch or taugrad.

    Attribute access falls through to the library's module (``L.cat``,
    ``L.stack``, ``L.where``, ``L.maximum``...), ``L.F`` is its functional
    module.  The few methods below paper over spellings that differ for
    reasons that are not the engine's business (torch indexes with torch
    tensors, spells "all dims" differently for ``amax``...).
    """

    def __init__(self, name: str, module: Any, functional: Any) -> None:
        self.name = name
        self.module = module
        self.F = functional

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.module, attr)

    def __repr__(self) -> str:
        return f"Library({self.name})"

    # construction --------------------------------------------------------
    def tensor(self, array: np.ndarray, requires_grad: bool = False) -> Any:
        if self.name == "torch":
            return torch.tensor(np.array(array), requires_grad=requires_grad)
        return taugrad.Tensor(np.array(array), requires_grad=requires_grad)

    def const(self, array: np.ndarray) -> Any:
        """A tensor that takes no gradient (targets, masks)."""
        return self.tensor(array, requires_grad=False)

    def index(self, index: Any) -> Any:
        """NumPy integer / boolean index arrays as this library indexes with them."""
        if self.name != "torch":
            return index
        if isinstance(index, tuple):
            return tuple(self.index(part) for part in index)
        if isinstance(index, np.ndarray):
            return torch.from_numpy(index)
        return index

    # spellings that differ -------------------------------------------------
    def linear_relu(self, x: Any, w: Any, b: Any) -> Any:
        """``relu(linear(x, w, b))``: nn.Sequential's Linear then ReLU, two ops in both libraries."""
        if self.name == "torch":
            return torch.relu(torch.nn.functional.linear(x, w, b))
        return _linear(x, w, b).relu()

    def rmatmul(self, array: np.ndarray, x: Any) -> Any:
        """``array @ x`` with a NumPy array on the left (torch refuses that: it multiplies a tensor of it)."""
        if self.name == "torch":
            return torch.from_numpy(array) @ x
        return array @ x

    @staticmethod
    def _all_dims_if_none(dim: Any, x: Any) -> Any:
        return tuple(range(x.ndim)) if dim is None else dim

    def amax(self, x: Any, dim: Any, keepdim: bool) -> Any:
        """``x.amax(dim, keepdim)``; torch spells "all dims" as a tuple, not None."""
        if self.name == "torch":
            dim = self._all_dims_if_none(dim, x)
        return x.amax(dim=dim, keepdim=keepdim)

    def amin(self, x: Any, dim: Any, keepdim: bool) -> Any:
        if self.name == "torch":
            dim = self._all_dims_if_none(dim, x)
        return x.amin(dim=dim, keepdim=keepdim)

    def logsumexp(self, x: Any, dim: Any, keepdim: bool) -> Any:
        if self.name == "torch":
            return x.logsumexp(dim=self._all_dims_if_none(dim, x), keepdim=keepdim)
        return x.logsumexp(dim=dim, keepdim=keepdim)


def values_only(result: Any) -> Any:
    """``max(dim=...)`` returns ``(values, indices)`` (torch: a named tuple); keep the values."""
    if isinstance(result, tuple):
        return result[0]
    return result


TORCH = Library("torch", torch, torch.nn.functional)
TAUGRAD = Library("taugrad", taugrad, taugrad.functional)


# ---------------------------------------------------------------------------
# describing an op and the inputs it is tried on
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """One drawn call: the shapes of the differentiable inputs and other arguments."""

    shapes: Tuple[Tuple[int, ...], ...]
    kwargs: Dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Op:
    """One row of the op table.

    ``fn(L, *inputs, **case.kwargs)`` must give the same result with
    ``L = TORCH`` and ``L = TAUGRAD``.  ``cases`` draws :class:`Case` objects.
    ``domain`` names how input values are drawn: one name for all inputs or a
    tuple with one name per input (see :data:`DOMAINS`).
    """

    name: str
    fn: Callable[..., Any]
    cases: st.SearchStrategy
    domain: Any = "real"

    def __str__(self) -> str:  # used as the pytest id
        return self.name


@dataclasses.dataclass(frozen=True)
class ValueOp:
    """A row of the value tables (ops without a gradient to check); see ``value_table.py``."""

    name: str
    fn: Callable[..., Any]
    exact: bool = True

    def __str__(self) -> str:
        return self.name


def _real(rng: np.random.Generator, shape: Tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-2.0, 2.0, size=shape)


def _positive(rng: np.random.Generator, shape: Tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.5, 2.5, size=shape)


def _nonzero(rng: np.random.Generator, shape: Tuple[int, ...]) -> np.ndarray:
    """Away from 0, where abs, relu and 1/x have no derivative."""
    magnitude = rng.uniform(0.25, 2.0, size=shape)
    return np.where(rng.random(size=shape) < 0.5, -magnitude, magnitude)


def _unit(rng: np.random.Generator, shape: Tuple[int, ...]) -> np.ndarray:
    """Probabilities strictly inside (0, 1)."""
    return rng.uniform(0.05, 0.95, size=shape)


def _with_zeros(rng: np.random.Generator, shape: Tuple[int, ...]) -> np.ndarray:
    """Real values with about a third exactly 0 (for products, whose rules must not divide by them)."""
    return np.where(rng.random(size=shape) < 0.35, 0.0, rng.uniform(-2.0, 2.0, size=shape))


DOMAINS = {"real": _real, "positive": _positive, "nonzero": _nonzero, "unit": _unit, "with_zeros": _with_zeros}


def distinct_values(rng: np.random.Generator, shapes: Sequence[Tuple[int, ...]]) -> List[np.ndarray]:
    """Values that are all different across *all* inputs, on a grid of step 0.1.

    For max, min, maximum, minimum and clip: values are ``0.1 k + 0.025 +- 0.01``,
    so there are no ties (where the derivative is not defined) and every value
    is at least 0.015 away from 0 and from bounds such as -0.55, 0.05 and 0.65
    (the clip bounds in the op table).
    """
    sizes = [int(np.prod(shape, dtype=np.int64)) for shape in shapes]
    total = sum(sizes)
    grid = (rng.permutation(total) - total // 2) * 0.1 + 0.025
    grid = grid + rng.uniform(-0.01, 0.01, size=total)
    out, start = [], 0
    for shape, size in zip(shapes, sizes):
        out.append(grid[start:start + size].reshape(shape))
        start += size
    return out


def make_inputs(op: Op, case: Case, seed: int) -> List[np.ndarray]:
    rng = np.random.default_rng(seed)
    if op.domain == "distinct":
        return distinct_values(rng, case.shapes)
    domains = op.domain if isinstance(op.domain, tuple) else (op.domain,) * len(case.shapes)
    assert len(domains) == len(case.shapes), f"{op.name}: one domain per input"
    return [DOMAINS[d](rng, shape).astype(np.float64) for d, shape in zip(domains, case.shapes)]


# ---------------------------------------------------------------------------
# running an op and comparing
# ---------------------------------------------------------------------------


def as_outputs(result: Any) -> List[Any]:
    """An op returns a tensor or a tuple/list of tensors (``split``)."""
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


def to_numpy(t: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    assert isinstance(t, taugrad.Tensor), f"expected a taugrad.Tensor, got {type(t).__name__}"
    return np.asarray(t.data)


def run(L: Library, op: Op, case: Case, arrays: Sequence[np.ndarray],
        upstream: Sequence[np.ndarray] | None, check_inputs_unchanged: bool = False):
    """Forward (and backward if ``upstream`` is given): outputs, their arrays, input gradients."""
    inputs = [L.tensor(a, requires_grad=True) for a in arrays]
    outputs = as_outputs(op.fn(L, *inputs, **case.kwargs))
    values = [to_numpy(o) for o in outputs]
    if upstream is None:
        return outputs, values, None
    # One backward per output, all into the same .grad (accumulation is part
    # of the contract); the graph is kept until the last one.
    for k, (o, g) in enumerate(zip(outputs, upstream)):
        o.backward(L.const(g), retain_graph=k < len(outputs) - 1)
    grads = []
    for x in inputs:
        # An input that reached the output only through zero-size arrays may
        # legitimately have no gradient in torch; both sides mean zeros.
        grads.append(np.zeros(x.shape) if x.grad is None else to_numpy(x.grad))
    if check_inputs_unchanged:  # neither forward nor backward may write into an input
        for i, (x, a) in enumerate(zip(inputs, arrays)):
            np.testing.assert_array_equal(to_numpy(x), a, err_msg=f"{op.name}: input {i} was modified")
    return outputs, values, grads


def forward_sum(op: Op, case: Case, arrays: Sequence[np.ndarray], upstream: Sequence[np.ndarray]) -> float:
    """``sum_k sum(f_k(x) * upstream_k)`` with taugrad, no graph: the finite-difference target."""
    with TAUGRAD.no_grad():
        inputs = [TAUGRAD.tensor(a) for a in arrays]
        outputs = as_outputs(op.fn(TAUGRAD, *inputs, **case.kwargs))
        return float(sum(np.sum(np.asarray(o.data, dtype=np.float64) * g) for o, g in zip(outputs, upstream)))


def finite_difference_grads(op: Op, case: Case, arrays: Sequence[np.ndarray],
                            upstream: Sequence[np.ndarray]) -> List[np.ndarray]:
    grads = []
    for i, array in enumerate(arrays):
        grad = np.zeros_like(array)
        for j in np.ndindex(array.shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[i][j] += FD_EPS
            minus[i][j] -= FD_EPS
            grad[j] = (forward_sum(op, case, plus, upstream) - forward_sum(op, case, minus, upstream)) / (2 * FD_EPS)
        grads.append(grad)
    return grads


def check_op(op: Op, case: Case, seed: int, finite_differences: bool = True) -> None:
    """Values and input gradients of ``op`` on ``case``: taugrad vs torch vs finite differences."""
    arrays = make_inputs(op, case, seed)
    where = f"{op.name} on shapes {case.shapes} with {case.kwargs}"

    _, want_values, _ = run(TORCH, op, case, arrays, None)
    _, got_values, _ = run(TAUGRAD, op, case, arrays, None)
    assert len(got_values) == len(want_values), f"{where}: {len(got_values)} outputs, torch gives {len(want_values)}"
    for k, (got, want) in enumerate(zip(got_values, want_values)):
        assert got.shape == want.shape, f"{where}: output {k} has shape {got.shape}, torch {want.shape}"
        assert got.dtype == np.float64, f"{where}: float64 inputs gave {got.dtype}"
        np.testing.assert_allclose(got, want, **VALUE_TOL, err_msg=f"{where}: forward values")

    rng = np.random.default_rng(seed + 1)
    upstream = [rng.standard_normal(v.shape) for v in want_values]
    _, _, want_grads = run(TORCH, op, case, arrays, upstream)
    _, _, got_grads = run(TAUGRAD, op, case, arrays, upstream, check_inputs_unchanged=True)
    for i, (got, want, array) in enumerate(zip(got_grads, want_grads, arrays)):
        assert got.shape == array.shape, f"{where}: grad of input {i} has shape {got.shape}, input {array.shape}"
        assert got.dtype == np.float64, f"{where}: grad of float64 input {i} is {got.dtype}"
        np.testing.assert_allclose(got, want, **GRAD_TOL, err_msg=f"{where}: grad of input {i} vs torch")

    if finite_differences:
        numeric = finite_difference_grads(op, case, arrays, upstream)
        for i, (got, num) in enumerate(zip(got_grads, numeric)):
            np.testing.assert_allclose(got, num, **FD_TOL, err_msg=f"{where}: grad of input {i} vs finite differences")


# ---------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------

MAX_DIMS = 4
MAX_SIDE = 3


def shapes(min_dims: int = 0, max_dims: int = MAX_DIMS, min_side: int = 0, max_side: int = MAX_SIDE):
    """Array shapes; ``min_side=0`` includes empty arrays, and size-1 dims come often."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


def one_input(**shape_kwargs) -> st.SearchStrategy:
    return shapes(**shape_kwargs).map(lambda s: Case((s,)))


@st.composite
def broadcast_pair(draw, min_side: int = 0) -> Case:
    """Two shapes that broadcast together, with size-1 and missing leading dims."""
    import hypothesis.extra.numpy as hnp

    pair = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=MAX_DIMS,
                                                  min_side=min_side, max_side=MAX_SIDE))
    return Case(tuple(pair.input_shapes))


@st.composite
def same_shape_pair(draw, min_dims: int = 0, min_side: int = 0) -> Case:
    shape = draw(shapes(min_dims=min_dims, min_side=min_side))
    return Case((shape, shape))


def negate_some(draw, dims: Sequence[int], ndim: int) -> Tuple[int, ...]:
    """Write some dims counted from the end (``-1`` for the last) as PyTorch allows."""
    return tuple(d - ndim if draw(st.booleans()) else d for d in dims)


@st.composite
def dim_of(draw, ndim: int, extra: int = 0) -> int:
    """One dim of an ``ndim + extra``-dim result, positive or negative."""
    n = ndim + extra
    return draw(st.integers(-n, n - 1))


@st.composite
def index_add_case(draw) -> Case:
    """x, a source of x's shape with ``len(index)`` along ``dim``, an index (repeats allowed) and ``alpha``."""
    shape = draw(shapes(min_dims=1, min_side=1))
    dim = draw(st.integers(0, len(shape) - 1))
    index = np.array(draw(st.lists(st.integers(0, shape[dim] - 1), max_size=4)), dtype=np.int64)
    source = shape[:dim] + (len(index),) + shape[dim + 1:]
    return Case((shape, source), {"dim": dim, "index": index, "alpha": draw(st.sampled_from([1, -0.5]))})


@st.composite
def reduction(draw, min_side: int = 1, min_reduced: int = 1, kinds=("none", "int", "tuple")) -> Case:
    """A shape, ``dim`` (None, int or tuple of ints, some negative) and ``keepdim``.

    ``kinds``: which forms of ``dim`` to draw.
    ``min_reduced``: at least that many elements fall in each reduced group
    (max of nothing is an error, var of one value divides by zero).
    """
    shape = draw(shapes(min_side=min_side))
    ndim = len(shape)
    kind = draw(st.sampled_from(kinds)) if ndim else "none"
    if kind == "none":
        dim = None
        reduced = list(range(ndim))
    elif kind == "int":
        d = draw(st.integers(0, ndim - 1))
        reduced = [d]
        dim = negate_some(draw, [d], ndim)[0]
    else:
        reduced = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
        dim = negate_some(draw, reduced, ndim)
    count = int(np.prod([shape[d] for d in reduced], dtype=np.int64))
    if count < min_reduced:
        # Grow the first reduced dim (or make it a 1-D array) so each group is big enough.
        grown = list(shape) if shape else [min_reduced]
        if reduced:
            grown[reduced[0]] = max(grown[reduced[0]], 1) * min_reduced
        shape = tuple(grown) if shape else (min_reduced,)
        if not ndim:
            dim = None
    return Case((tuple(shape),), {"dim": dim, "keepdim": draw(st.booleans())})


def check_float32(op: Op, case: Case, seed: int) -> None:
    """float32 in, float32 out: dtypes of values and gradients follow PyTorch, values close."""
    arrays = [a.astype(np.float32) for a in make_inputs(op, case, seed)]
    kwargs = {k: v.astype(np.float32) if isinstance(v, np.ndarray) and v.dtype == np.float64 else v
              for k, v in case.kwargs.items()}
    case32 = Case(case.shapes, kwargs)
    where = f"{op.name} on float32 shapes {case.shapes} with {case.kwargs}"
    _, want_values, _ = run(TORCH, op, case32, arrays, None)
    rng = np.random.default_rng(seed + 1)
    upstream = [rng.standard_normal(v.shape).astype(np.float32) for v in want_values]
    _, want_values, want_grads = run(TORCH, op, case32, arrays, upstream)
    _, got_values, got_grads = run(TAUGRAD, op, case32, arrays, upstream)
    for got, want in zip(got_values, want_values):
        assert got.dtype == want.dtype, f"{where}: output dtype {got.dtype}, torch {want.dtype}"
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{where}: forward values")
    for i, (got, want) in enumerate(zip(got_grads, want_grads)):
        assert got.dtype == np.float32, f"{where}: grad of float32 input {i} is {got.dtype}"
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{where}: grad of input {i}")


@st.composite
def softmax_case(draw) -> Case:
    """Other dims may be empty; an empty softmax dim is tested on its own (test_functional.py)."""
    shape = list(draw(shapes(min_dims=1)))
    dim = draw(dim_of(len(shape)))
    shape[dim] = max(shape[dim], 1)
    return Case((tuple(shape),), {"dim": dim})

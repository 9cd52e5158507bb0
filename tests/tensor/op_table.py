"""Every differentiable Tensor op, one row each, in the spirit of PyTorch's derivatives.yaml.

A row is ``Op(name, fn, cases, domain)``:

* ``fn(L, *inputs, **kwargs)`` is written once against the adapter ``L`` and
  runs unchanged on taugrad and on PyTorch (see ``helpers.Library``);
* ``cases`` is a Hypothesis strategy of input shapes plus the other arguments
  (dims, keepdim, indices, targets...);
* ``domain`` says where input values come from, chosen so that no input sits
  where the derivative does not exist: ``real`` (-2..2), ``positive``
  (0.5..2.5), ``nonzero`` (|x| >= 0.25), ``unit`` (0.05..0.95) or ``distinct``
  (no ties anywhere, for max/min/clip).

``test_ops_against_torch.py`` runs every row through ``helpers.check_op``.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .op_table_api import API_OPS
from .op_table_cnn import CNN_OPS
from .op_table_methods import METHOD_OPS
from .helpers import index_add_case
from .helpers import (
    Case,
    Op,
    broadcast_pair,
    dim_of,
    negate_some,
    one_input,
    reduction,
    same_shape_pair,
    shapes,
    softmax_case,
    values_only,
)

# ---------------------------------------------------------------------------
# strategies for the shape ops, matmul, indexing and losses
# ---------------------------------------------------------------------------


@st.composite
def matmul_pair(draw) -> Case:
    """1-D, 2-D and batched operands with broadcast batch dims (NumPy's matmul signature)."""
    import hypothesis.extra.numpy as hnp

    pair = draw(hnp.mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=2,
                                                  min_side=0, max_side=3))
    return Case(tuple(pair.input_shapes))


@st.composite
def reshape_case(draw) -> Case:
    """Same elements, dims shuffled, merged, padded with 1 and maybe one -1."""
    shape = draw(shapes())
    dims = list(draw(st.permutations(shape))) if shape else []
    target: list = []
    for d in dims:
        if target and draw(st.booleans()):
            target[-1] *= d
        else:
            target.append(d)
    if draw(st.booleans()):
        target.insert(draw(st.integers(0, len(target))), 1)
    if target and all(target) and draw(st.booleans()):  # -1 is ambiguous with a 0 around
        target[draw(st.integers(0, len(target) - 1))] = -1
    return Case((shape,), {"shape": tuple(target)})


@st.composite
def flatten_case(draw) -> Case:
    shape = draw(shapes(min_dims=1))
    n = len(shape)
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(start, n - 1))
    start, end = negate_some(draw, [start, end], n)
    return Case((shape,), {"start_dim": start, "end_dim": end})


@st.composite
def transpose_case(draw) -> Case:
    shape = draw(shapes(min_dims=1))
    return Case((shape,), {"dim0": draw(dim_of(len(shape))), "dim1": draw(dim_of(len(shape)))})


@st.composite
def permute_case(draw) -> Case:
    shape = draw(shapes(min_dims=1))
    perm = draw(st.permutations(range(len(shape))))
    return Case((shape,), {"dims": negate_some(draw, perm, len(shape))})


@st.composite
def squeeze_case(draw) -> Case:
    """Many size-1 dims; ``dim`` may name a dim that is not size 1 (a no-op in PyTorch)."""
    shape = draw(st.lists(st.sampled_from([1, 1, 2, 0]), max_size=4).map(tuple))
    dim = draw(st.none() | dim_of(len(shape))) if shape else None
    return Case((shape,), {"dim": dim})


@st.composite
def unsqueeze_case(draw) -> Case:
    shape = draw(shapes())
    return Case((shape,), {"dim": draw(dim_of(len(shape), extra=1))})


@st.composite
def expand_case(draw) -> Case:
    """Size-1 dims grow (or stay, or say -1), other dims say their size or -1; new leading dims."""
    shape = draw(shapes(max_dims=3))
    sizes = [draw(st.sampled_from([1, 2, 3, -1])) if n == 1 else draw(st.sampled_from([n, -1])) for n in shape]
    leading = draw(st.lists(st.integers(0, 3), min_size=0 if shape else 1, max_size=2))
    return Case((shape,), {"sizes": tuple(leading) + tuple(sizes)})


@st.composite
def cat_case(draw) -> Case:
    """2-3 tensors that agree except along ``dim`` (sizes there may be 0)."""
    base = list(draw(shapes(min_dims=1)))
    d = draw(st.integers(0, len(base) - 1))
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        shape = base.copy()
        shape[d] = draw(st.integers(0, 3))
        parts.append(tuple(shape))
    return Case(tuple(parts), {"dim": negate_some(draw, [d], len(base))[0]})


@st.composite
def stack_case(draw) -> Case:
    shape = draw(shapes())
    count = draw(st.integers(1, 3))
    return Case((shape,) * count, {"dim": draw(dim_of(len(shape), extra=1))})


@st.composite
def split_case(draw) -> Case:
    """PyTorch's split: an int is the chunk size (last chunk smaller), a list gives every size."""
    shape = draw(shapes(min_dims=1))
    d = draw(st.integers(0, len(shape) - 1))
    n = shape[d]
    if n and draw(st.booleans()):
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
        bounds = [0, *cuts, n]
        size = [b - a for a, b in zip(bounds, bounds[1:])]
    else:
        size = draw(st.integers(1, 4))
    return Case((shape,), {"size": size, "dim": negate_some(draw, [d], len(shape))[0]})


@st.composite
def chunk_case(draw) -> Case:
    """``chunk`` on a non-empty dim: for an empty one torch
    returns ``chunks`` empty pieces and taugrad one, a difference left out here."""
    shape = draw(shapes(min_dims=1, min_side=1))
    d = draw(st.integers(0, len(shape) - 1))
    return Case((shape,), {"chunks": draw(st.integers(1, 4)), "dim": negate_some(draw, [d], len(shape))[0]})


@st.composite
def pad_case(draw) -> Case:
    """``F.pad`` widths, last dim first as in PyTorch, constant value."""
    shape = draw(shapes(min_dims=1, min_side=1))
    k = draw(st.integers(1, len(shape)))
    widths = tuple(draw(st.integers(0, 2)) for _ in range(2 * k))
    return Case((shape,), {"pad": widths, "value": draw(st.sampled_from([0.0, -1.5]))})


@st.composite
def basic_index(draw) -> Case:
    """ints (some negative), slices with steps, ``None`` and one ``...``."""
    shape = draw(shapes(min_dims=1))
    parts: list = []
    for n in shape:
        choice = draw(st.sampled_from(["int", "slice", "all"] if n else ["slice", "all"]))
        if choice == "int":
            parts.append(draw(st.integers(-n, n - 1)))
        elif choice == "slice":
            bound = st.none() | st.integers(-n - 1, n + 1)
            parts.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3]))))
        else:
            parts.append(slice(None))
    if draw(st.booleans()):  # a run of dims becomes "..."
        a = draw(st.integers(0, len(parts)))
        b = draw(st.integers(a, len(parts)))
        parts[a:b] = [Ellipsis]
    else:  # trailing dims left implicit
        parts = parts[:draw(st.integers(0, len(parts)))]
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), None)
    return Case((shape,), {"index": tuple(parts)})


@st.composite
def mask_index(draw) -> Case:
    """A boolean mask over the leading dims."""
    shape = draw(shapes(min_dims=1))
    k = draw(st.integers(1, len(shape)))
    bits = draw(st.lists(st.booleans(), min_size=int(np.prod(shape[:k])), max_size=int(np.prod(shape[:k]))))
    return Case((shape,), {"index": np.array(bits, dtype=bool).reshape(shape[:k])})


@st.composite
def _index_array(draw, n: int, length: int) -> np.ndarray:
    """``length`` indices into a dim of size ``n``, negative ones included; repeats likely."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    return np.array(draw(st.lists(st.integers(-n, n - 1), min_size=length, max_size=length)), dtype=np.int64)


@st.composite
def array_index(draw) -> Case:
    """Integer arrays alone or beside slices/``...``; more indices than the dim so repeats occur."""
    shape = draw(shapes(min_dims=1, min_side=1))
    form = draw(st.sampled_from(["x[i]", "x[:, i]", "x[..., i]", "x[i, 1:]", "x[i, j]", "x[i2d]"]))
    if form in ("x[:, i]", "x[i, 1:]", "x[i, j]") and len(shape) < 2:
        form = "x[i]"
    if form == "x[i]":
        index = draw(_index_array(shape[0], shape[0] + 2))
    elif form == "x[:, i]":
        index = (slice(None), draw(_index_array(shape[1], shape[1] + 2)))
    elif form == "x[..., i]":
        index = (Ellipsis, draw(_index_array(shape[-1], shape[-1] + 2)))
    elif form == "x[i, 1:]":
        index = (draw(_index_array(shape[0], 4)), slice(1, None))
    elif form == "x[i, j]":
        index = (draw(_index_array(shape[0], 4)), draw(_index_array(shape[1], 4)))
    else:
        index = draw(_index_array(shape[0], 6)).reshape(2, 3)
    return Case((shape,), {"index": index})


@st.composite
def along_dim_case(draw, unique: bool = False, src: bool = False) -> Case:
    """x (2-D) and an index of x's shape except ``k`` entries along ``dim`` (gather, take_along_dim, scatter).

    ``unique``: no position repeats along a line (scatter's result is then defined, as in torch).
    """
    rows, cols = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    dim = draw(st.integers(0, 1))
    n = (rows, cols)[dim]
    k = draw(st.integers(1, n if unique else n + 2))
    lines = (cols, rows)[dim]
    if unique:
        picks = [draw(st.permutations(range(n)))[:k] for _ in range(lines)]
    else:
        picks = [draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)) for _ in range(lines)]
    index = np.array(picks, dtype=np.int64)  # (lines, k)
    index = index.T if dim == 0 else index
    return Case(((rows, cols), index.shape) if src else ((rows, cols),), {"dim": dim, "index": index})


@st.composite
def index_select_case(draw) -> Case:
    shape = draw(shapes(min_dims=1, min_side=1))
    dim = draw(st.integers(0, len(shape) - 1))
    index = np.array(draw(st.lists(st.integers(0, shape[dim] - 1), max_size=4)), dtype=np.int64)
    return Case((shape,), {"dim": dim, "index": index})


@st.composite
def full_mask_case(draw) -> Case:
    """A bool mask of x's shape or of a shape that broadcasts to it."""
    shape = draw(shapes(min_dims=1))
    mask_shape = tuple(1 if draw(st.booleans()) else n for n in shape)
    size = int(np.prod(mask_shape))
    bits = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    return Case((shape,), {"mask": np.array(bits, dtype=bool).reshape(mask_shape)})


@st.composite
def cross_entropy_case(draw) -> Case:
    n, c = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    target = np.array(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)), dtype=np.int64)
    return Case(((n, c),), {"target": target, "reduction": draw(st.sampled_from(["mean", "sum", "none"]))})


@st.composite
def bce_case(draw) -> Case:
    shape = draw(shapes(min_side=1))
    size = int(np.prod(shape))
    probs = draw(st.lists(st.floats(0.0, 1.0), min_size=size, max_size=size))
    return Case((shape,), {"target": np.array(probs).reshape(shape),
                           "reduction": draw(st.sampled_from(["mean", "sum", "none"]))})


@st.composite
def linear_case(draw) -> Case:
    """x (..., in), weight (out, in), bias (out,)."""
    batch = draw(shapes(max_dims=2))
    n_in, n_out = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return Case((batch + (n_in,), (n_out, n_in), (n_out,)))


@st.composite
def mse_case(draw) -> Case:
    shape = draw(shapes(min_side=1))
    return Case((shape, shape), {"reduction": draw(st.sampled_from(["mean", "sum", "none"]))})


REDUCE = reduction()
ONE_DIM = reduction(kinds=("none", "int"))  # torch.max / min: one dim, (values, indices)
unary = one_input()
pair = broadcast_pair()


# ---------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------

OPS = [
    # elementwise, broadcasting; gradients sum back to each input's shape
    Op("add", lambda L, a, b: a + b, pair),
    Op("sub", lambda L, a, b: a - b, pair),
    Op("mul", lambda L, a, b: a * b, pair),
    Op("div", lambda L, a, b: a / b, pair, ("real", "nonzero")),
    Op("pow_tensor", lambda L, a, b: a ** b, pair, ("positive", "real")),
    Op("pow_2", lambda L, x: x ** 2, unary),
    Op("pow_3", lambda L, x: x ** 3, unary),
    Op("pow_half", lambda L, x: x ** 0.5, unary, "positive"),
    Op("pow_neg", lambda L, x: x ** -1.5, unary, "positive"),
    Op("radd", lambda L, x: 1.5 + x, unary),
    Op("rsub", lambda L, x: 1.5 - x, unary),
    Op("rmul", lambda L, x: 3.0 * x, unary),
    Op("rdiv", lambda L, x: 2.0 / x, unary, "nonzero"),
    Op("rpow", lambda L, x: 2.0 ** x, unary),
    Op("neg", lambda L, x: -x, unary),
    Op("positive", lambda L, x: +x * 1.0, unary),
    Op("exp", lambda L, x: x.exp(), unary),
    Op("log", lambda L, x: x.log(), unary, "positive"),
    Op("sqrt", lambda L, x: x.sqrt(), unary, "positive"),
    Op("abs", lambda L, x: x.abs(), unary, "nonzero"),
    Op("tanh", lambda L, x: x.tanh(), unary),
    Op("sigmoid", lambda L, x: x.sigmoid(), unary),
    Op("relu", lambda L, x: x.relu(), unary, "nonzero"),
    Op("gelu", lambda L, x: L.F.gelu(x), unary),
    Op("gelu_tanh", lambda L, x: L.F.gelu(x, approximate="tanh"), unary),
    Op("sin", lambda L, x: x.sin(), unary),
    Op("cos", lambda L, x: x.cos(), unary),
    Op("log1p", lambda L, x: x.log1p(), unary, "positive"),
    Op("erf", lambda L, x: x.erf(), unary),
    Op("maximum", lambda L, a, b: L.maximum(a, b), pair, "distinct"),
    Op("minimum", lambda L, a, b: L.minimum(a, b), pair, "distinct"),
    Op("clip", lambda L, x: x.clip(-0.55, 0.65), unary, "distinct"),
    Op("clip_min", lambda L, x: x.clip(min=0.05), unary, "distinct"),
    Op("where", lambda L, a, b: L.where(a > 0, a, b), pair, "nonzero"),
    Op("where_scalar", lambda L, x: L.where(x > 0, x, 0.5), unary, "nonzero"),
    Op("where_method", lambda L, a, b: a.where(a > 0, b), pair, "nonzero"),
    Op("clone", lambda L, x: x.clone() * 2.0, unary),
    Op("double", lambda L, x: x.double(), unary),
    Op("astype", lambda L, x: x.to(L.float64), unary),
    # reductions: dim None / int / tuple (some negative), keepdim
    Op("sum", lambda L, x, dim, keepdim: x.sum(dim=dim, keepdim=keepdim), reduction(min_side=0)),
    Op("mean", lambda L, x, dim, keepdim: x.mean(dim=dim, keepdim=keepdim), REDUCE),
    Op("max", lambda L, x, dim, keepdim: x.max() if dim is None else values_only(x.max(dim, keepdim=keepdim)),
       ONE_DIM, "distinct"),
    Op("min", lambda L, x, dim, keepdim: x.min() if dim is None else values_only(x.min(dim, keepdim=keepdim)),
       ONE_DIM, "distinct"),
    Op("amax", lambda L, x, dim, keepdim: L.amax(x, dim, keepdim), REDUCE, "distinct"),
    Op("amin", lambda L, x, dim, keepdim: L.amin(x, dim, keepdim), REDUCE, "distinct"),
    Op("var", lambda L, x, dim, keepdim: x.var(dim=dim, keepdim=keepdim), reduction(min_reduced=2)),
    Op("std", lambda L, x, dim, keepdim: x.std(dim=dim, keepdim=keepdim), reduction(min_reduced=2)),
    Op("logsumexp", lambda L, x, dim, keepdim: L.logsumexp(x, dim, keepdim), REDUCE),
    # NumPy's spellings, accepted as well (torch takes them too)
    Op("sum_axis", lambda L, x, dim, keepdim: x.sum(axis=dim, keepdims=keepdim), reduction(min_side=0)),
    Op("mean_axis", lambda L, x, dim, keepdim: x.mean(axis=dim, keepdims=keepdim), REDUCE),
    Op("var_axis", lambda L, x, dim, keepdim: x.var(axis=dim, keepdims=keepdim), reduction(min_reduced=2)),
    # matmul: 1-D and batched, batch dims broadcast, inner size may be 0
    Op("matmul", lambda L, a, b: a @ b, matmul_pair()),
    Op("matmul_method", lambda L, a, b: a.matmul(b), matmul_pair()),
    Op("rmatmul", lambda L, x: L.rmatmul(
       np.linspace(-1, 1, 2 * x.shape[-2]).reshape(2, x.shape[-2]).astype(str(x.dtype).rsplit(".")[-1]), x),
       one_input(min_dims=2)),
    # shape ops
    Op("reshape", lambda L, x, shape: x.reshape(shape), reshape_case()),
    Op("view", lambda L, x, shape: x.view(shape), reshape_case()),
    Op("flatten", lambda L, x, start_dim, end_dim: x.flatten(start_dim, end_dim), flatten_case()),
    Op("transpose", lambda L, x, dim0, dim1: x.transpose(dim0, dim1), transpose_case()),
    Op("permute", lambda L, x, dims: x.permute(*dims), permute_case()),
    Op("T", lambda L, x: x.T if L.name == "taugrad" or x.ndim == 2 else x.permute(*reversed(range(x.ndim))),
       one_input(min_dims=1)),
    Op("mT", lambda L, x: x.mT, one_input(min_dims=2)),
    Op("expand_as", lambda L, x, sizes: x.expand_as(L.const(np.zeros(x.expand(*sizes).shape))), expand_case()),
    Op("squeeze", lambda L, x, dim: x.squeeze() if dim is None else x.squeeze(dim), squeeze_case()),
    Op("unsqueeze", lambda L, x, dim: x.unsqueeze(dim), unsqueeze_case()),
    Op("expand", lambda L, x, sizes: x.expand(*sizes), expand_case()),
    Op("cat", lambda L, *xs, dim: L.cat(list(xs), dim=dim), cat_case()),
    Op("stack", lambda L, *xs, dim: L.stack(list(xs), dim=dim), stack_case()),
    Op("split", lambda L, x, size, dim: x.split(size, dim=dim), split_case()),
    Op("chunk", lambda L, x, chunks, dim: x.chunk(chunks, dim=dim), chunk_case()),
    Op("concatenate", lambda L, *xs, dim: L.concatenate(list(xs), dim=dim), cat_case()),
    Op("pad", lambda L, x, pad, value: L.F.pad(x, pad, value=value), pad_case()),
    # indexing; backward scatter-adds, so repeated indices accumulate
    Op("getitem_basic", lambda L, x, index: x[index], basic_index()),
    Op("getitem_mask", lambda L, x, index: x[L.index(index)], mask_index()),
    Op("getitem_array", lambda L, x, index: x[L.index(index)], array_index()),
    Op("getitem_torch_placement", lambda L, x: x[1, :, L.index(np.array([2, 0, 2]))],
       shapes(min_dims=3, max_dims=3, min_side=3).map(lambda s: Case((s,)))),
    Op("gather", lambda L, x, dim, index: x.gather(dim, L.index(index)), along_dim_case()),
    Op("take_along_dim", lambda L, x, dim, index: L.take_along_dim(x, L.index(index), dim), along_dim_case()),
    Op("index_select", lambda L, x, dim, index: x.index_select(dim, L.index(index)), index_select_case()),
    Op("masked_select", lambda L, x, mask: x.masked_select(L.index(mask)), full_mask_case()),
    Op("masked_fill", lambda L, x, mask: x.masked_fill(L.index(mask), -1.5) * 1.0, full_mask_case()),
    Op("scatter", lambda L, x, src, dim, index: x.scatter(dim, L.index(index), src), along_dim_case(True, True)),
    Op("scatter_add", lambda L, x, src, dim, index: x.scatter_add(dim, L.index(index), src), along_dim_case(src=True)),
    Op("index_add", lambda L, x, src, dim, index, alpha: x.index_add(dim, L.index(index), src, alpha=alpha),
       index_add_case()),
    Op("scatter_", lambda L, x, src, dim, index: (x * 1.0).scatter_(dim, L.index(index), src),
       along_dim_case(True, True)),
    Op("masked_fill_", lambda L, x, mask: (x * 1.0).masked_fill_(L.index(mask), 0.25), full_mask_case()),
    Op("relu_", lambda L, x: (x * 1.0).relu_(), unary, "nonzero"),
    # taugrad.functional / torch.nn.functional
    Op("softmax", lambda L, x, dim: L.F.softmax(x, dim=dim), softmax_case()),
    Op("log_softmax", lambda L, x, dim: L.F.log_softmax(x, dim=dim), softmax_case()),
    Op("cross_entropy", lambda L, x, target, reduction: L.F.cross_entropy(x, L.index(target), reduction=reduction),
       cross_entropy_case()),
    Op("nll_loss", lambda L, x, target, reduction:
       L.F.nll_loss(L.F.log_softmax(x, dim=1), L.index(target), reduction=reduction), cross_entropy_case()),
    Op("linear", lambda L, x, w, b: L.F.linear(x, w, b), linear_case()),
    Op("linear_relu", lambda L, x, w, b: L.linear_relu(x, w, b), linear_case()),
    Op("mse_loss", lambda L, a, b, reduction: L.F.mse_loss(a, b, reduction=reduction), mse_case()),
    Op("binary_cross_entropy_with_logits", lambda L, x, target, reduction:
       L.F.binary_cross_entropy_with_logits(x, L.const(target), reduction=reduction), bce_case()),
    # the same ops as module-level functions (torch.exp(x), taugrad.exp(x)...)
    Op("fn_exp", lambda L, x: L.exp(x), unary),
    Op("fn_tanh", lambda L, x: L.tanh(x), unary),
    Op("fn_sum", lambda L, x, dim, keepdim: L.sum(x, dim=dim, keepdim=keepdim), reduction(min_side=0)),
    Op("fn_matmul", lambda L, a, b: L.matmul(a, b), matmul_pair()),
    Op("fn_softmax", lambda L, x, dim: L.softmax(x, dim=dim), softmax_case()),
]

OPS += API_OPS  # elementary functions, sorting, scans, rearranging, einsum, norms (op_table_api.py)
OPS += CNN_OPS  # convolution, im2col, pooling, normalisation, resampling (op_table_cnn.py)
OPS += METHOD_OPS  # torch Tensor methods: mm/bmm/mv/dot/addmm, remainder/fmod, diff... (op_table_methods.py)

"""Every differentiable Tensor op, one row each, for the second-order checks.

A row is ``OpCase(name, fn, shapes, domain)``: ``fn(*tensors)`` applies the op
to float64 tensors of the given ``shapes`` whose values come from ``domain``
(chosen so no input sits where the op is not twice differentiable: away from
0 for ``abs``/``relu``, positive for ``log``/``sqrt``, without ties for
``max``/``clip``).  Shapes are small: the second-order check costs two
backward passes per input element.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Tuple

import numpy as np

import taugrad
import taugrad.functional as F
from taugrad.tensors.ops.matmul import linear


@dataclass(frozen=True)
class OpCase:
    name: str
    fn: Callable
    shapes: Tuple[tuple, ...]
    domain: str = "real"


def make_inputs(case: OpCase, seed: int = 0):
    """float64 leaf tensors for ``case``, drawn from its domain, all distinct values."""
    rng = np.random.default_rng(seed)
    tensors = []
    for shape in case.shapes:
        n = int(np.prod(shape)) if shape else 1
        if case.domain == "positive":
            values = rng.uniform(0.5, 2.0, n)
        elif case.domain == "nonzero":  # |x| in [0.3, 1.5], random signs
            values = rng.uniform(0.3, 1.5, n) * rng.choice([-1.0, 1.0], n)
        elif case.domain == "unit":
            values = rng.uniform(0.1, 0.9, n)
        else:  # real, distinct (no ties for max/min)
            values = rng.permutation(np.linspace(-1.5, 1.5, n)) + rng.uniform(-0.05, 0.05, n)
        tensors.append(taugrad.tensor(values.reshape(shape), dtype="float64", requires_grad=True))
    return tensors


#: added to the bias of linear-then-relu: |x . w| <= 3 * 1.5 * 1.5 < 10 here, so unit 0 is always active,
#: unit 1 never, and no pre-activation sits at the ReLU's kink
_KINK_FREE = np.array([10.0, -10.0])


def _dropout(x):
    # a fresh generator per call: every evaluation of f sees the same mask
    return F.dropout(x, 0.4, generator=np.random.default_rng(7))


def _well_separated(a):
    """``a`` (in [-1.5, 1.5]) as a small perturbation of diag(k + 0.5, ..., 1.5): singular values
    far apart and from 0, where the SVD is smooth."""
    m, n = a.shape[-2:]
    return a * 0.05 + taugrad.tensor(np.eye(m, n) * (np.arange(max(m, n), 0, -1) + 0.5)[:n])


def _svd_invariants(a, full_matrices):
    """A scalar of the SVD that the signs of the singular vectors do not change."""
    U, S, Vh = taugrad.linalg.svd(_well_separated(a), full_matrices=full_matrices)
    k = S.shape[-1]
    U, Vh = U[..., :, :k], Vh[..., :k, :]  # the extra columns of full bases take no gradient
    weights = taugrad.tensor(np.arange(1.0, U.shape[-2] + 1))
    return ((S ** 3).sum() + (U * U[..., :1, :] * weights[:, None]).sum() + (Vh * Vh[..., :, :1]).sum() * 0.5
            + ((U @ Vh) ** 2 * a).sum())


_TARGETS = np.array([2, 0, 1])
#: zeros planted in a (2, 3) input: one row with one zero, one with two
_ZEROS = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
_INFS = np.array([[0.0, np.inf, 0.0], [-np.inf, 0.0, 0.0]])  # nan_to_num: replaced where a + _INFS is not finite

def _setitem(a, b):
    y = a * 1.0
    y[0] = b.exp()
    return y


def _inplace_arith(a, b):
    y = a * 1.0
    y += b
    y *= b
    y /= 1.5 + b * b
    y -= 0.5
    return y ** 2


def _inplace_fill(a, b):
    y = a.sin()
    y = y * 1.0
    y[:, 0].copy_(b)
    y[1, 1:].zero_()
    y.masked_fill_(taugrad.tensor([False, False, True]), 2.0)
    y.clamp_(-10.0, 10.0)
    return y ** 3


def _inplace_view(a):
    y = a * 2.0
    y.scatter_(1, taugrad.tensor([[1], [0]]), a[:, :1] ** 2)
    y[1].relu_()
    return y ** 3


OP_CASES = [
    # arithmetic (with broadcasting, so the sum_to of each rule is exercised)
    OpCase("add", lambda a, b: a + b * b, ((2, 3), (3,))),
    OpCase("add_scalar", lambda a: (a + 2.0) * a, ((2, 3),)),
    OpCase("sub", lambda a, b: (a - b) * a, ((2, 3), (2, 1))),
    OpCase("rsub_scalar", lambda a: (1.0 - a) * a, ((4,),)),
    OpCase("mul", lambda a, b: a * b, ((2, 3), (3,))),
    OpCase("mul_scalar", lambda a: (a * 3.0) * a, ((4,),)),
    OpCase("div", lambda a, b: a / b, ((2, 3), (3,)), "positive"),
    OpCase("div_scalar", lambda a: (a / 4.0) * a, ((4,),)),
    OpCase("rdiv_scalar", lambda a: 2.0 / a, ((4,),), "positive"),
    OpCase("pow", lambda a, b: a**b, ((2, 3), (3,)), "positive"),
    OpCase("pow_scalar_3", lambda a: a**3, ((4,),)),
    OpCase("pow_scalar_2", lambda a: a**2 * a, ((4,),)),
    OpCase("pow_scalar_frac", lambda a: a**-1.5, ((4,),), "positive"),
    OpCase("pow_scalar_0_1", lambda a: a**0 + a**1 * a, ((4,),)),
    OpCase("rpow_scalar", lambda a: 2.5**a, ((4,),)),
    OpCase("neg", lambda a: -(a * a), ((4,),)),
    # unary functions
    OpCase("exp", lambda a: a.exp(), ((2, 3),)),
    OpCase("log", lambda a: a.log(), ((2, 3),), "positive"),
    OpCase("log1p", lambda a: a.log1p(), ((2, 3),), "positive"),
    OpCase("sqrt", lambda a: a.sqrt(), ((2, 3),), "positive"),
    OpCase("sin", lambda a: a.sin(), ((2, 3),)),
    OpCase("cos", lambda a: a.cos(), ((2, 3),)),
    OpCase("abs", lambda a: a.abs() * a, ((2, 3),), "nonzero"),
    OpCase("tanh", lambda a: a.tanh(), ((2, 3),)),
    OpCase("sigmoid", lambda a: a.sigmoid(), ((2, 3),)),
    OpCase("relu", lambda a: a.relu() * a, ((2, 3),), "nonzero"),
    OpCase("gelu", lambda a: a.gelu(), ((2, 3),)),
    OpCase("gelu_tanh", lambda a: F.gelu(a, approximate="tanh"), ((2, 3),)),
    OpCase("erf", lambda a: a.erf(), ((2, 3),)),
    OpCase("asinh", lambda a: a.asinh(), ((2, 3),)),
    OpCase("acosh", lambda a: (a + 1.5).acosh(), ((2, 3),), "positive"),
    OpCase("atanh", lambda a: (a * 0.5).atanh(), ((2, 3),)),
    OpCase("logit", lambda a: (a * 0.3 + 0.5).logit(), ((2, 3),)),
    OpCase("maximum", lambda a, b: taugrad.maximum(a, b) * a, ((2, 3), (3,))),
    OpCase("minimum", lambda a, b: taugrad.minimum(a, b) * b, ((2, 3), (3,))),
    OpCase("clip", lambda a: a.clip(-0.5, 0.7) * a, ((2, 3),)),
    OpCase("clip_tensors", lambda a: a.clip(a.detach() * 0 - 0.5, a.detach() * 0 + 0.7) * a, ((2, 3),)),
    OpCase("clamp_tensors_", lambda a: (a * 1.0).clamp_(a.detach() * 0 - 0.5, a.detach() * 0 + 0.7) * a, ((2, 3),)),
    OpCase("where", lambda a, b: taugrad.where(a > 0, a * a, b * b * b), ((2, 3), (3,))),
    OpCase("clone", lambda a: a.clone() * a, ((4,),)),
    # reductions
    OpCase("sum_all", lambda a: a.sum() ** 2, ((2, 3),)),
    OpCase("sum_dim", lambda a: a.sum(dim=1) ** 2, ((2, 3),)),
    OpCase("sum_keepdim", lambda a: a.sum(dim=0, keepdim=True) * a, ((2, 3),)),
    OpCase("mean_all", lambda a: a.mean() * a, ((2, 3),)),
    OpCase("mean_dims", lambda a: a.mean(dim=(0, 2)) ** 2, ((2, 2, 2),)),
    OpCase("amax", lambda a: a.amax(dim=1) ** 2, ((2, 3),)),
    OpCase("amin", lambda a: a.amin(dim=0, keepdim=True) * a, ((2, 3),)),
    OpCase("max_all", lambda a: a.max() * a, ((2, 3),)),
    OpCase("max_dim", lambda a: a.max(dim=1).values ** 2, ((2, 3),)),
    OpCase("min_dim", lambda a: a.min(dim=0, keepdim=True).values * a, ((2, 3),)),
    OpCase("var", lambda a: a.var(dim=1), ((2, 3),)),
    OpCase("var_all", lambda a: a.var(), ((2, 3),)),
    OpCase("std", lambda a: a.std(dim=0), ((3, 2),)),
    OpCase("logsumexp", lambda a: a.logsumexp(dim=1), ((2, 3),)),
    # linear algebra
    OpCase("matmul_2d", lambda a, b: (a @ b) ** 2, ((2, 3), (3, 2))),
    OpCase("matmul_dot", lambda a, b: (a @ b) * (a @ a), ((3,), (3,))),
    OpCase("matmul_vec_mat", lambda a, b: (a @ b) ** 2, ((3,), (3, 2))),
    OpCase("matmul_mat_vec", lambda a, b: (a @ b) ** 2, ((2, 3), (3,))),
    OpCase("matmul_batched", lambda a, b: (a @ b) ** 2, ((2, 2, 3), (3, 2))),
    OpCase("bmm", lambda a, b: a.bmm(b) ** 2, ((2, 2, 3), (2, 3, 2))),
    OpCase("linear", lambda x, w, b: F.linear(x, w, b).tanh(), ((2, 3), (2, 3), (2,))),
    OpCase("linear_no_bias", lambda x, w: F.linear(x, w).tanh(), ((2, 3), (2, 3))),
    OpCase("embedding", lambda w: F.embedding(taugrad.tensor([[1, 0], [2, 1]]), w) ** 3, ((3, 2),)),
    # the fused op nn.Sequential runs for Linear, ReLU; bias shifted so no pre-activation is near the kink
    OpCase("linear_relu", lambda x, w, b: linear(x, w, b + _KINK_FREE).relu() * x.sum(), ((2, 3), (2, 3), (2,)), "nonzero"),
    # shapes
    OpCase("reshape", lambda a: a.reshape(3, 2) ** 2, ((2, 3),)),
    OpCase("flatten", lambda a: a.flatten() ** 2, ((2, 3),)),
    OpCase("transpose", lambda a: a.transpose(0, 1) ** 2 @ a, ((2, 2),)),
    OpCase("t", lambda a: a.t() ** 2 @ a, ((2, 2),)),
    OpCase("diagonal", lambda a: a.diagonal(1) ** 3 * a.diagonal(0, 1, 2).sum(), ((2, 3, 3),)),
    OpCase("permute", lambda a: a.permute(2, 0, 1) ** 2, ((2, 1, 2),)),
    OpCase("T", lambda a: (a.T @ a) ** 2, ((2, 3),)),
    OpCase("mT", lambda a: (a.mT @ a).sum(dim=0) ** 2, ((2, 2, 2),)),
    OpCase("squeeze", lambda a: a.squeeze() ** 2, ((2, 1, 2),)),
    OpCase("unsqueeze", lambda a: a.unsqueeze(1) ** 2 * a, ((3,),)),
    OpCase("expand", lambda a: a.expand(2, 3) ** 2, ((1, 3),)),
    OpCase("cat", lambda a, b: taugrad.cat([a * a, b], dim=1) ** 2, ((2, 2), (2, 1))),
    OpCase("stack", lambda a, b: taugrad.stack([a * b, b], dim=1) ** 2, ((3,), (3,))),
    OpCase("split", lambda a: a.split(1, dim=0)[1] ** 2 * a.split([2, 1])[0].sum(), ((3, 2),)),
    OpCase("chunk", lambda a: a.chunk(2, dim=1)[0] ** 3, ((2, 4),)),
    OpCase("pad", lambda a: taugrad.pad(a, (1, 1)) ** 2, ((2, 2),)),
    # indexing: basic (a view), integer arrays with repeats (scatter-add), masks
    OpCase("index_basic", lambda a: a[1:, ::2] ** 2 * a[0, 0], ((3, 3),)),
    OpCase("index_repeat", lambda a: a[[0, 2, 0, 0]] ** 3, ((3,),)),
    OpCase("index_mask", lambda a: a[a > 0] ** 3, ((2, 3),)),
    OpCase("index_torch_placement", lambda a: a[1, :, [2, 0, 2]] ** 3, ((2, 2, 3),)),
    OpCase("setitem", lambda a, b: _setitem(a, b) ** 3, ((2, 3), (3,))),
    OpCase("gather", lambda a: a.gather(1, taugrad.tensor([[0, 0, 2], [1, 2, 1]])) ** 3, ((2, 3),)),
    OpCase("take_along_dim", lambda a: taugrad.take_along_dim(a, taugrad.tensor([[2], [0]]), 1) ** 3, ((2, 3),)),
    OpCase("index_select", lambda a: a.index_select(1, taugrad.tensor([2, 0, 2])) ** 3, ((2, 3),)),
    OpCase("masked_select", lambda a: a.masked_select(taugrad.tensor([True, False, True])) ** 3, ((2, 3),)),
    OpCase("masked_fill", lambda a: a.masked_fill(taugrad.tensor([True, False, True]), 0.5) ** 3, ((2, 3),)),
    OpCase("scatter", lambda a, b: a.scatter(1, taugrad.tensor([[2, 0], [1, 2]]), b) ** 3, ((2, 3), (2, 2))),
    OpCase("scatter_add", lambda a, b: a.scatter_add(0, taugrad.tensor([[1, 1, 0]]), b) ** 3, ((2, 3), (1, 3))),
    OpCase("index_add", lambda a, b: a.index_add(0, taugrad.tensor([1, 1]), b, alpha=2) ** 3, ((2, 3), (2, 3))),
    # in-place ops recorded in the graph (the tensor's node is rebased)
    OpCase("inplace_arith", lambda a, b: _inplace_arith(a, b), ((2, 3), (3,))),
    OpCase("inplace_fill", lambda a, b: _inplace_fill(a, b), ((2, 3), (2,))),
    OpCase("inplace_view", lambda a: _inplace_view(a), ((2, 3),), "nonzero"),
    OpCase("scatter_add_", lambda a, b: (a * 1.0).scatter_add_(0, taugrad.tensor([[1, 1, 0]]), b * b) ** 3,
           ((2, 3), (1, 3))),
    OpCase("index_add_", lambda a, b: (a * a).index_add_(1, taugrad.tensor([2, 2]), b, alpha=-0.5) ** 3,
           ((2, 3), (2, 2))),
    OpCase("log_", lambda a: (a * 1.0).log_() ** 2 * a, ((2, 3),), "positive"),
    OpCase("exp_", lambda a: (a * 1.0).exp_() * a, ((2, 3),)),
    # fused nn ops and losses
    OpCase("softmax", lambda a: F.softmax(a, dim=1), ((2, 3),)),
    OpCase("log_softmax", lambda a: F.log_softmax(a, dim=0), ((2, 3),)),
    OpCase("cross_entropy", lambda a: F.cross_entropy(a, _TARGETS), ((3, 4),)),
    OpCase("cross_entropy_sum", lambda a: F.cross_entropy(a, _TARGETS, reduction="sum"), ((3, 4),)),
    OpCase("cross_entropy_none", lambda a: F.cross_entropy(a, _TARGETS, reduction="none"), ((3, 4),)),
    OpCase("nll_loss", lambda a: F.nll_loss(F.log_softmax(a, dim=1), _TARGETS), ((3, 4),)),
    OpCase("mse_loss", lambda a, b: F.mse_loss(a * a, b), ((2, 3), (2, 3))),
    OpCase("mse_loss_none", lambda a, b: F.mse_loss(a, b * b, reduction="none"), ((2, 3), (2, 3))),
    OpCase("bce_with_logits", lambda a, b: F.binary_cross_entropy_with_logits(a, b), ((2, 3), (2, 3)), "unit"),
    OpCase("dropout", lambda a: _dropout(a) ** 2, ((2, 3),)),
    # more elementary functions
    OpCase("log10", lambda a: a.log10(), ((2, 3),), "positive"),
    OpCase("log2", lambda a: a.log2() * a, ((2, 3),), "positive"),
    OpCase("expm1", lambda a: a.expm1(), ((2, 3),)),
    OpCase("exp2", lambda a: taugrad.exp2(a), ((2, 3),)),
    OpCase("frac", lambda a: a.frac() * a, ((2, 3),)),
    OpCase("deg2rad", lambda a: taugrad.deg2rad(a) ** 2, ((2, 3),)),
    OpCase("rad2deg", lambda a: a.rad2deg() ** 2, ((2, 3),)),
    OpCase("rsqrt", lambda a: a.rsqrt(), ((2, 3),), "positive"),
    OpCase("square", lambda a: a.square() * a, ((2, 3),)),
    OpCase("tan", lambda a: a.tan(), ((2, 3),), "unit"),
    OpCase("asin", lambda a: a.asin(), ((2, 3),), "unit"),
    OpCase("acos", lambda a: a.acos(), ((2, 3),), "unit"),
    OpCase("atan", lambda a: a.atan(), ((2, 3),)),
    OpCase("sinh", lambda a: a.sinh(), ((2, 3),)),
    OpCase("cosh", lambda a: a.cosh(), ((2, 3),)),
    OpCase("atan2", lambda a, b: taugrad.atan2(a, b), ((2, 3), (3,)), "nonzero"),
    # triangles, sorting
    OpCase("tril", lambda a: a.tril(-1) ** 2 @ a, ((3, 3),)),
    OpCase("triu", lambda a: taugrad.triu(a, 1) ** 2, ((2, 3),)),
    OpCase("sort", lambda a: taugrad.sort(a, dim=1, descending=True).values ** 2 * a, ((2, 3),)),
    OpCase("topk", lambda a: a.topk(2, dim=0).values ** 3, ((3, 2),)),
    # scans and products, with zeros (the division-free rules) and without
    OpCase("cumsum", lambda a: a.cumsum(1) ** 2, ((2, 3),)),
    OpCase("cumprod", lambda a: a.cumprod(1), ((2, 3),), "positive"),
    OpCase("cumprod_zeros", lambda a: (a * _ZEROS).cumprod(1) + a.cumprod(0) * 0.5, ((2, 3),)),
    OpCase("prod", lambda a: a.prod(1), ((2, 3),)),
    OpCase("prod_all", lambda a: a.prod() * a, ((2, 2),)),
    OpCase("prod_zeros", lambda a: (a * _ZEROS).prod(1, keepdim=True) + (a * _ZEROS).prod(), ((2, 3),)),
    # rearranging
    OpCase("flip", lambda a: a.flip(0, 1) ** 2 * a, ((2, 3),)),
    OpCase("roll", lambda a: a.roll(1, 1) ** 2 * a + a.roll(2) ** 3, ((2, 3),)),
    OpCase("repeat", lambda a: a.repeat(2, 1, 2) ** 3, ((2, 2),)),
    OpCase("repeat_interleave", lambda a: a.repeat_interleave(2, dim=0) ** 3, ((2, 2),)),
    # einsum (its rule is an einsum, so every order is one)
    OpCase("einsum_matmul", lambda a, b: taugrad.einsum("ij,jk->ik", a, b) ** 2, ((2, 3), (3, 2))),
    OpCase("einsum_diagonal", lambda a: taugrad.einsum("ii->i", a) ** 2 * taugrad.einsum("ij->", a), ((2, 2),)),
    OpCase("einsum_broadcast", lambda a, b: taugrad.einsum("...ij,jk->...ki", a, b) ** 2, ((2, 1, 3), (3, 2))),
    # vectors and matrices
    OpCase("outer", lambda a, b: taugrad.outer(a, b) ** 2, ((2,), (3,))),
    OpCase("linalg_cross", lambda a, b: taugrad.linalg.cross(a, b) ** 2, ((2, 3), (1, 3))),
    OpCase("cross", lambda a, b: taugrad.cross(a, b, dim=0) ** 2, ((3, 2), (3, 2))),
    OpCase("diag_embed", lambda a: taugrad.diag(a, 1) @ taugrad.diag(a * a, -1), ((2,),)),
    OpCase("diag_extract", lambda a: a.diag(-1) ** 3, ((3, 3),)),
    OpCase("trace", lambda a: (a @ a).trace(), ((2, 2),)),
    OpCase("vector_norm", lambda a: taugrad.linalg.vector_norm(a, dim=1), ((2, 3),)),
    OpCase("vector_norm_p3", lambda a: a.norm(3, dim=(0,)), ((2, 3),), "nonzero"),
    OpCase("vector_norm_inf", lambda a: taugrad.linalg.vector_norm(a, float("inf"), dim=0) ** 2, ((2, 3),)),
    OpCase("matrix_norm_1", lambda a: taugrad.linalg.matrix_norm(a, 1) ** 2, ((2, 3),), "nonzero"),
    OpCase("linalg_svd_tall", lambda a: _svd_invariants(a, False), ((3, 2),)),
    OpCase("linalg_svd_wide_full", lambda a: _svd_invariants(a, True), ((2, 3),)),
    OpCase("linalg_svd_batch", lambda a: _svd_invariants(a, False), ((2, 2, 2),)),
    OpCase("linalg_svdvals", lambda a: taugrad.linalg.svdvals(_well_separated(a)) ** 2, ((2, 3),)),
    OpCase("matrix_norm_nuc", lambda a: taugrad.linalg.matrix_norm(_well_separated(a), "nuc") ** 2, ((3, 2),)),
    OpCase("linalg_norm_2", lambda a: taugrad.linalg.norm(_well_separated(a), 2) ** 2, ((3, 3),)),
    # torch Tensor methods with their own rules, and the composed ones
    OpCase("remainder", lambda a, b: a.remainder(b) ** 2 * b, ((2, 3), (3,)), "nonzero"),
    OpCase("fmod", lambda a, b: a.fmod(b) ** 2 * b, ((2, 3), (3,)), "nonzero"),
    OpCase("logaddexp", lambda a, b: a.logaddexp(b) ** 2, ((2, 3), (3,))),
    OpCase("hypot", lambda a, b: a.hypot(b) ** 2 * a, ((2, 3), (3,)), "nonzero"),
    OpCase("xlogy", lambda a, b: a.xlogy(b) ** 2, ((2, 3), (3,)), "positive"),
    OpCase("xlogy_zero", lambda a, b: (a * _ZEROS).xlogy(b) * a, ((2, 3), (3,)), "positive"),
    OpCase("reciprocal", lambda a: a.reciprocal() * a.sum(), ((2, 3),), "nonzero"),
    OpCase("mm", lambda a, b: a.mm(b) ** 2, ((2, 3), (3, 2))),
    OpCase("addmm", lambda c, a, b: c.addmm(a, b, beta=0.5, alpha=2.0) ** 2, ((2,), (2, 3), (3, 2))),
    OpCase("lerp", lambda a, b: a.lerp(b, a.sigmoid()) ** 2, ((2, 3), (2, 3))),
    OpCase("nansum", lambda a: a.nansum(1) ** 2, ((2, 3),)),
    OpCase("nanmean", lambda a: a.nanmean(0) ** 2, ((2, 3),)),
    OpCase("diff", lambda a: a.diff(n=2, dim=1) ** 2, ((2, 4),)),
    OpCase("nan_to_num", lambda a: (a + _INFS).nan_to_num(posinf=2.0, neginf=-3.0) ** 2 * a, ((2, 3),)),
    # composed torch.nn.functional activations and distances (their rules are the ops' above)
    OpCase("selu", lambda a: F.selu(a) * a, ((2, 3),), "nonzero"),
    OpCase("celu", lambda a: F.celu(a, 0.6) * a, ((2, 3),), "nonzero"),  # 0.6: the float32-alpha gradient
    OpCase("mish", lambda a: F.mish(a), ((2, 3),)),
    OpCase("glu", lambda a: F.glu(a) ** 2, ((2, 4),)),
    OpCase("softmin", lambda a: F.softmin(a, dim=1), ((2, 3),)),
    # real domain: |a| near 0.3 (the middle branch), 0.9 and 1.5, all away from lambd = 0.5
    OpCase("softshrink", lambda a: F.softshrink(a) ** 3, ((2, 3),)),
    OpCase("cosine_similarity", lambda a, b: F.cosine_similarity(a, b), ((2, 3), (3,))),
    OpCase("pairwise_distance", lambda a, b: F.pairwise_distance(a, b), ((2, 3), (2, 3))),
    OpCase("pairwise_distance_p3", lambda a, b: F.pairwise_distance(a, b, p=3.0, keepdim=True) ** 2,
           ((2, 3), (3,)), "nonzero"),
]

from .op_cases_cnn import CNN_ROWS  # noqa: E402  (convolution, pooling, normalisation, resampling)

OP_CASES += [OpCase(*row) for row in CNN_ROWS]

"""Double backward of every row of the tensor op table (tests/tensor/op_table.py) against PyTorch.

The table's Hypothesis strategies draw shapes with broadcasting, size-0 and
size-1 dimensions, negative dims, keepdim...; for each drawn case both
libraries compute, in float64, the Hessian-vector product of
``L = sum_k <out_k, r_k>`` by double backward:

    g = dL/dx  (create_graph=True),   H v = d <g, v> / dx

with the same random ``r`` and ``v``.  The rows are written once against the
``Library`` adapter (``tests/tensor/helpers.py``), so the very same code runs
on both.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings

import taugrad

from tensor.helpers import HYPOTHESIS, TAUGRAD, TORCH, as_outputs, make_inputs
from tensor.op_table import OPS


def hessian_vector_product(L, grad, arrays, outputs_of, rs, vs):
    """H v of sum_k <out_k, r_k> for one library (``grad`` is its autograd.grad)."""
    xs = [L.tensor(a, requires_grad=True) for a in arrays]
    outs = as_outputs(outputs_of(L, xs))
    total = sum((o * L.tensor(r)).sum() for o, r in zip(outs, rs))
    if not getattr(total, "requires_grad", False):
        return [np.zeros_like(a) for a in arrays]
    gs = grad(total, xs, create_graph=True, allow_unused=True)
    terms = [(g * L.tensor(v)).sum() for g, v in zip(gs, vs) if g is not None]
    phi = sum(terms) if terms else 0.0
    if not getattr(phi, "requires_grad", False):  # the gradient is constant in x
        return [np.zeros_like(a) for a in arrays]
    hv = grad(phi, xs, allow_unused=True)
    return [np.zeros_like(a) if h is None else np.asarray(_numpy(h)) for h, a in zip(hv, arrays)]


def _numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True)  # force: torch returns lazy "zero tensors" for abs''
    return t.detach().numpy()


@pytest.mark.parametrize("op", OPS, ids=str)
def test_hessian_vector_product_matches_torch(op):
    @settings(HYPOTHESIS, max_examples=10)
    @given(op.cases)
    def check(case):
        arrays = make_inputs(op, case, seed=7)
        run = lambda L, xs: op.fn(L, *xs, **case.kwargs)  # noqa: E731
        rng = np.random.default_rng(3)
        shapes = [np.shape(_numpy(o)) for o in as_outputs(run(TAUGRAD, [taugrad.Tensor(a.copy()) for a in arrays]))]
        rs = [rng.uniform(0.5, 1.5, s) for s in shapes]
        vs = [rng.uniform(0.5, 1.5, a.shape) for a in arrays]
        ours = hessian_vector_product(TAUGRAD, taugrad.grad, arrays, run, rs, vs)
        theirs = hessian_vector_product(TORCH, torch.autograd.grad, arrays, run, rs, vs)
        for i, (o, t) in enumerate(zip(ours, theirs)):
            np.testing.assert_allclose(o, t, rtol=1e-8, atol=1e-10, err_msg=f"{op.name}, input {i}, {case}")

    check()

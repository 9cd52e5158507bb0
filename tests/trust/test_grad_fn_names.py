"""``grad_fn`` names and chains as PyTorch shows them, for the ops code inspects most.

Code written for torch reads ``y.grad_fn.name()`` and walks ``next_functions``
(graph printers, tutorials that show the graph, tests of custom layers).  Each
case builds the same expression in both libraries from the same values and
compares the chain of node names from the output to the leaf, before and
after ``backward()`` (which frees taugrad's graph but must keep the names).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad


def _name(fn, lib) -> str:
    return type(fn).__name__ if lib is torch else fn.name()


def chain(fn, lib) -> list:
    """Node names along the first input of each node, down to (not including) the leaf."""
    names = []
    while fn is not None and _name(fn, lib) not in ("AccumulateGrad",):
        names.append(_name(fn, lib))
        nexts = fn.next_functions
        fn = nexts[0][0] if nexts else None
    return names


A = np.random.default_rng(0).random((3, 4, 5)) + 0.5

CASES = {
    # basic indexing: one node per int / narrowing slice / None, as torch decomposes it
    "x[0]": lambda x: x[0],
    "x[:, 1]": lambda x: x[:, 1],
    "x[0:2]": lambda x: x[0:2],
    "x[0, 1:3]": lambda x: x[0, 1:3],
    "x[:]": lambda x: x[:],
    "x[:, :]": lambda x: x[:, :],
    "x[(slice(0, 10),)]": lambda x: x[(slice(0, 10),)],
    "x[...]": lambda x: x[...],
    "x[None]": lambda x: x[None],
    "x[..., 0]": lambda x: x[..., 0],
    "x[0, None, 1]": lambda x: x[0, None, 1],
    "x[::2, 0, 1:]": lambda x: x[::2, 0, 1:],
    "x[0:10]": lambda x: x[0:10],
    "x[-2:]": lambda x: x[-2:],
    "x[:, None, -1]": lambda x: x[:, None, -1],
    "x[[0, 1]]": lambda x: x[[0, 1]],
    # reductions over chosen dims are torch's overload 1
    "sum(1)": lambda x: x.sum(1),
    "sum()": lambda x: x.sum(),
    "sum((0, 2), keepdim)": lambda x: x.sum((0, 2), keepdim=True),
    "mean(0)": lambda x: x.mean(0),
    "mean()": lambda x: x.mean(),
    "prod(1)": lambda x: x.prod(1),
    "prod()": lambda x: x.prod(),
    "max(1)": lambda x: x.max(1)[0],
    "min(1)": lambda x: x.min(1).values,
    "norm()": lambda x: x.norm(),
    "vector_norm(dim=1)": lambda x: torch_or_taugrad(x).linalg.vector_norm(x, dim=1),
    "clamp(-1, 1)": lambda x: x.clamp(-1, 1),
    "clamp(min=0)": lambda x: x.clamp(min=0),
    "clamp(tensors)": lambda x: x.clamp(x.detach() * 0, x.detach() * 0 + 1),
    "clone().clamp_(-1, 1)": lambda x: x.clone().clamp_(-1, 1),
    # products and conversions
    "bmm": lambda x: x.bmm(x.transpose(1, 2)),
    "float()": lambda x: x.float(),
    "reciprocal": lambda x: x.reciprocal(),
    "square": lambda x: x.square(),
    "log1p": lambda x: x.log1p(),
    "deg2rad": lambda x: x.deg2rad(),
    # piecewise-constant ops are recorded with a zero gradient
    "floor": lambda x: x.floor(),
    "ceil": lambda x: x.ceil(),
    "round": lambda x: x.round(),
    "round(decimals=1)": lambda x: x.round(decimals=1),
    "trunc": lambda x: x.trunc(),
    "sign": lambda x: x.sign(),
    # in-place functions show the function's node, on top of what they overwrote
    "clone().sin_()": lambda x: x.clone().sin_(),
    "clone().log1p_()": lambda x: x.clone().log1p_(),
    "(x * 2).exp_()": lambda x: (x * 2).exp_(),
    "clone().pow_(2)": lambda x: x.clone().pow_(2),
    "clone().cumsum_(0)": lambda x: x.clone().cumsum_(0),
    "clone().square_()": lambda x: x.clone().square_(),
    "clone().atan2_(x)": lambda x: x.clone().atan2_(x.detach()),
}


def torch_or_taugrad(x):
    return torch if isinstance(x, torch.Tensor) else taugrad


@pytest.mark.parametrize("case", sorted(CASES))
def test_grad_fn_chain_is_torchs(case):
    f = CASES[case]
    tx = torch.tensor(A, requires_grad=True)
    gx = taugrad.tensor(A, requires_grad=True)
    ty, gy = f(tx), f(gx)
    assert chain(gy.grad_fn, taugrad) == chain(ty.grad_fn, torch)
    ty.sum().backward()
    gy.sum().backward()
    assert gy.grad_fn.name() == _name(ty.grad_fn, torch)  # kept after backward freed the graph
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("op", ["floor", "ceil", "round", "trunc", "sign"])
def test_piecewise_constant_results_need_a_gradient_that_is_zero(op):
    tx = torch.tensor(A, requires_grad=True)
    gx = taugrad.tensor(A, requires_grad=True)
    ty, gy = getattr(tx, op)(), getattr(gx, op)()
    assert gy.requires_grad is ty.requires_grad is True
    gy.backward(taugrad.ones_like(gy))
    ty.backward(torch.ones_like(ty))
    np.testing.assert_array_equal(gx.grad.numpy(), tx.grad.numpy())


def test_piecewise_constant_of_an_integer_tensor_is_a_constant():
    for lib in (torch, taugrad):
        y = lib.tensor([1, -2, 3]).sign()
        assert y.requires_grad is False and y.grad_fn is None

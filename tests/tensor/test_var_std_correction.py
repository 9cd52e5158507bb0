"""``var`` and ``std`` differentiate with the correction they were called with, to second order.

The forward value divides by ``n - correction``; so must the gradient
(``2 (x_i - mean) / (n - c)`` for ``var``) and the gradient of the gradient.
The op table calls both with the default correction only, where a rule that
always divides by ``n - 1`` is right by accident; here every spelling of the
correction (PyTorch's ``correction=`` and legacy ``unbiased=``, NumPy's
``ddof=``) is compared with torch float64, first and second order, over
``dim`` None / int / negative int / tuple, with and without ``keepdim``.
"""
import numpy as np
import pytest
import torch

import taugrad

#: (taugrad's keyword arguments, torch's for the same correction); torch has no ddof
CORRECTIONS = {
    "default": ({}, {}),
    "correction=0": ({"correction": 0}, {"correction": 0}),
    "correction=1": ({"correction": 1}, {"correction": 1}),
    "correction=2": ({"correction": 2}, {"correction": 2}),
    "unbiased=False": ({"unbiased": False}, {"unbiased": False}),
    "unbiased=True": ({"unbiased": True}, {"unbiased": True}),
    "ddof=0": ({"ddof": 0}, {"correction": 0}),
    "ddof=2": ({"ddof": 2}, {"correction": 2}),
}

#: every group has at least 3 elements, so n - 2 > 0 for every correction above
SHAPE = (3, 4, 5)
DIMS = {"None": None, "1": 1, "-1": -1, "(0,2)": (0, 2), "(-1,0)": (-1, 0)}

TOL = dict(rtol=1e-10, atol=1e-12)


def _call(x, name, dim, keepdim, kwargs):
    if dim is None and isinstance(x, torch.Tensor):  # torch spells "all dims" as a tuple here
        dim = tuple(range(x.ndim))
    return getattr(x, name)(dim=dim, keepdim=keepdim, **kwargs)


def _data(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(SHAPE)


def _first_and_second(name, dim, keepdim, ours, theirs):
    """(d<g, f(x)>/dx, d<h, d<g, f(x)>/dx>/dx) from taugrad and from torch, g and h random."""
    data = _data(7)
    rng = np.random.default_rng(8)
    want_out = _call(torch.tensor(data), name, dim, keepdim, theirs)
    g = rng.standard_normal(tuple(want_out.shape))
    h = rng.standard_normal(SHAPE)

    tx = torch.tensor(data, requires_grad=True)
    (t_first,) = torch.autograd.grad(_call(tx, name, dim, keepdim, theirs), tx, torch.tensor(g), create_graph=True)
    (t_second,) = torch.autograd.grad(t_first, tx, torch.tensor(h))

    x = taugrad.tensor(data, requires_grad=True)
    out = _call(x, name, dim, keepdim, ours)
    assert tuple(out.shape) == tuple(want_out.shape)
    np.testing.assert_allclose(out.data, want_out.numpy(), **TOL, err_msg="forward")
    (first,) = taugrad.grad(out, x, taugrad.tensor(g), create_graph=True)
    (second,) = taugrad.grad(first, x, taugrad.tensor(h))
    return (first.data, second.data), (t_first.detach().numpy(), t_second.numpy()), (data, g)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS.values(), ids=DIMS.keys())
@pytest.mark.parametrize("correction", CORRECTIONS, ids=str)
@pytest.mark.parametrize("name", ["var", "std"])
def test_first_and_second_derivative_match_torch(name, correction, dim, keepdim):
    ours, theirs = CORRECTIONS[correction]
    (first, second), (t_first, t_second), (data, g) = _first_and_second(name, dim, keepdim, ours, theirs)
    where = f"{name}(dim={dim}, keepdim={keepdim}, {ours})"
    np.testing.assert_allclose(first, t_first, **TOL, err_msg=f"{where}: first derivative (create_graph)")
    np.testing.assert_allclose(second, t_second, **TOL, err_msg=f"{where}: second derivative")

    # the plain first-order pass (raw arrays, not Tensors) gives the same numbers
    x = taugrad.tensor(data, requires_grad=True)
    _call(x, name, dim, keepdim, ours).backward(taugrad.tensor(g))
    np.testing.assert_allclose(x.grad.data, t_first, **TOL, err_msg=f"{where}: first derivative (backward)")


@pytest.mark.parametrize("name, power", [("var", 1.0), ("std", 0.5)])
def test_the_correction_changes_the_gradient_by_the_expected_factor(name, power):
    """var divides by n - c, std by sqrt(n - c): ignoring the correction would make these ratios 1."""
    data = _data(3)
    n = data.shape[1]
    grads = {}
    for c in (0, 1, 2):
        x = taugrad.tensor(data, requires_grad=True)
        getattr(x, name)(dim=1, correction=c).sum().backward()
        grads[c] = x.grad.data
    np.testing.assert_allclose(grads[0] / grads[1], ((n - 1) / n) ** power, rtol=1e-12)
    np.testing.assert_allclose(grads[2] / grads[1], ((n - 1) / (n - 2)) ** power, rtol=1e-12)

"""``backward(inputs=)``, ``detach_``, ``autograd.grad(materialize_grads=)`` and ``add``/``sub`` with ``alpha``, against torch.

The same calls run in taugrad and torch (float64 from the same NumPy values);
values, gradients and errors are compared.
"""
import numpy as np
import pytest
import torch

import taugrad

RNG = np.random.default_rng(0)
A, B, C = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=(2, 3))


def leaves(lib):
    return [lib.tensor(v.copy(), requires_grad=True) for v in (A, B, C)]


def grads(ts):
    return [None if t.grad is None else t.grad.detach().numpy().copy() for t in ts]


def assert_grads(ours, theirs):
    for g, h in zip(grads(ours), grads(theirs)):
        assert (g is None) == (h is None)
        if h is not None:
            np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-14)


def _loss(lib, a, b, c):
    return ((a * b).sum() * 2 + (c * a).sum() + (b ** 2).sum())


@pytest.mark.parametrize("pick", [[0], [1, 2], [2], [0, 1, 2]])
def test_backward_with_inputs_fills_only_those_grads(pick):
    results = []
    for lib in (taugrad, torch):
        ts = leaves(lib)
        _loss(lib, *ts).backward(inputs=[ts[i] for i in pick])
        results.append(ts)
    assert_grads(*results)


def test_backward_with_inputs_accumulates_and_reaches_a_non_leaf():
    results = []
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        h = a * 3
        (h * b).sum().backward(inputs=[h, b])
        (h * b).sum().backward(inputs=b)  # a single tensor, accumulated
        results.append([a, b, h])
    assert_grads(*results)


def test_backward_with_an_unreached_input_leaves_its_grad_alone():
    results = []
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        (a * 2).sum().backward(inputs=[a, c])
        results.append([a, b, c])
    assert_grads(*results)


def test_backward_with_empty_inputs_is_refused_as_torch():
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be empty"):
            (a * b).sum().backward(inputs=[])


def test_autograd_backward_with_inputs_matches_torch():
    results = []
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        lib.autograd.backward([(a * b).sum(), (c * a).sum()], inputs=[b, c])
        results.append([a, b, c])
    assert_grads(*results)


def test_materialize_grads_gives_zeros_for_unused_inputs():
    results = []
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        results.append(lib.autograd.grad((a * 2).sum(), [a, b, c], materialize_grads=True))
    for g, h in zip(*results):
        assert g is not None
        np.testing.assert_allclose(g.detach().numpy(), h.detach().numpy(), rtol=1e-12)
        assert tuple(g.shape) == tuple(h.shape)


def test_materialize_grads_with_allow_unused_false_is_refused_as_torch():
    messages = []
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        with pytest.raises(ValueError) as info:
            lib.autograd.grad((a * 2).sum(), [a, b], materialize_grads=True, allow_unused=False)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_detach_in_place_makes_a_leaf_outside_the_graph():
    results = []
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        h = a * b
        out = h.detach_()
        assert out is h and not h.requires_grad and h.is_leaf and h.grad_fn is None
        y = (h * c).sum()  # h is a constant now: only c gets a gradient
        y.backward()
        results.append([a, b, c, h])
    assert_grads(*results)


def test_detach_in_place_of_a_view_is_refused_as_torch():
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        for view in (c[0], c.view(6), a.detach().view(3)):
            with pytest.raises(RuntimeError, match="Can't detach views in-place"):
                view.detach_()
        a.detach().detach_()  # a detached tensor is not a view: allowed


CASES = [
    ("add", dict(alpha=2)), ("add", dict(alpha=-0.5)), ("sub", dict(alpha=3)), ("sub", dict(alpha=0.25)),
]


@pytest.mark.parametrize("name, kwargs", CASES)
@pytest.mark.parametrize("form", ["function", "method"])
def test_add_and_sub_with_alpha_match_torch_in_values_and_gradients(name, kwargs, form):
    results = []
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        out = getattr(lib, name)(c, a, **kwargs) if form == "function" else getattr(c, name)(a, **kwargs)
        (out * lib.tensor(C.copy())).sum().backward()
        results.append((out.detach().numpy(), [a, b, c]))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    assert_grads(results[0][1], results[1][1])


@pytest.mark.parametrize("name", ["add", "sub"])
def test_alpha_keeps_torchs_dtypes_and_refusals(name):
    pairs = [
        (np.array([1, 2], dtype=np.int64), np.array([3, 4], dtype=np.int64), 2),
        (np.array([1.5, 2], dtype=np.float32), np.array([3, 4], dtype=np.float64), 3),
        (np.array([1.5, 2], dtype=np.float32), 2.5, 2),
        (np.array([1, 2], dtype=np.int64), 2.5, 2),
        (np.array([1.5, 2], dtype=np.float32), np.array(0.5, dtype=np.float64), 0.5),
    ]
    for x, y, alpha in pairs:
        ours = getattr(taugrad, name)(taugrad.tensor(x), taugrad.tensor(y) if isinstance(y, np.ndarray) else y,
                                      alpha=alpha)
        theirs = getattr(torch, name)(torch.tensor(x), torch.tensor(y) if isinstance(y, np.ndarray) else y,
                                      alpha=alpha)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    for lib in (taugrad, torch):
        with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
            getattr(lib, name)(lib.tensor([1, 2]), lib.tensor([3, 4]), alpha=0.5)


def test_in_place_add_and_sub_with_alpha_match_torch():
    results = []
    for lib in (taugrad, torch):
        a, b, c = leaves(lib)
        h = c * 1
        h.add_(a, alpha=2).sub_(b, alpha=0.5)
        h.sum().backward()
        results.append((h.detach().numpy(), [a, b, c]))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    assert_grads(results[0][1], results[1][1])

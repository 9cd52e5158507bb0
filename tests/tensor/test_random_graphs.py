"""Random computation graphs with shared subexpressions, taugrad vs PyTorch.

The op table checks ops one at a time; bugs in the *engine* (accumulating
gradients of a node used several times, broadcasting gradients back, reusing
or stealing gradient buffers, views) show up when ops meet.  A program is a
list of steps ``(op, i, j)``: apply ``op`` to nodes ``i`` and ``j`` (indices
into the nodes made so far, so nodes are reused).  Every node broadcasts to
the shape (2, 3); the loss is a random weighting of the last nodes.
"""
import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from taugrad import Tensor

from .helpers import HYPOTHESIS

FULL = (2, 3)
LEAF_SHAPES = [(2, 3), (3,), (1, 3), (2, 1), ()]

# Smooth ops only (no kinks, no ties); every result broadcasts to FULL.
STEPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (1.5 + b * b),
    "tanh": lambda a, b: a.tanh(),
    "sigmoid": lambda a, b: a.sigmoid(),
    "sin": lambda a, b: a.sin(),
    "square": lambda a, b: a * a,
    "neg_scalar": lambda a, b: 2.0 - a * 0.5,
    "sum0": lambda a, b: a.sum(dim=0, keepdim=True) if a.ndim == 2 else a,
    "mean_last": lambda a, b: a.mean(dim=-1, keepdim=True) if a.ndim >= 1 else a,
    "expand": lambda a, b: a.expand(*FULL),
    "reshape_roundtrip": lambda a, b: a.reshape(-1).reshape(a.shape),
    "transpose_twice": lambda a, b: a.transpose(0, 1).transpose(0, 1) if a.ndim == 2 else a,
    "slice_cat": lambda a, b: a if a.ndim < 2 or a.shape[0] != 2 else _cat(a[:1], a[1:]),
    "index_repeat": lambda a, b: a[[1, 1]] if a.ndim == 2 and a.shape[0] == 2 else a,
}


def _cat(top, bottom):
    if isinstance(top, torch.Tensor):
        return torch.cat([top, bottom], dim=0)
    import taugrad

    return taugrad.cat([top, bottom], dim=0)


program = st.lists(st.tuples(st.sampled_from(sorted(STEPS)), st.integers(0, 99), st.integers(0, 99)),
                   min_size=1, max_size=12)


def run(make, leaves, steps, weights):
    nodes = [make(a) for a in leaves]
    leaf_nodes = list(nodes)
    for name, i, j in steps:
        nodes.append(STEPS[name](nodes[i % len(nodes)], nodes[j % len(nodes)]))
    outputs = nodes[len(leaves):][-3:]
    loss = None
    for out, w in zip(outputs, weights):
        term = (out * make(w, grad=False)).sum()
        loss = term if loss is None else loss + term
    return leaf_nodes, loss


def ours(array, grad=True):
    return Tensor(np.array(array), requires_grad=grad)


def theirs(array, grad=True):
    return torch.tensor(np.array(array), requires_grad=grad)


@settings(HYPOTHESIS, max_examples=80)  # cheap examples; the engine's integration test
@given(shapes=st.lists(st.sampled_from(LEAF_SHAPES), min_size=1, max_size=3), steps=program,
       seed=st.integers(0, 2**31 - 1), twice=st.booleans())
def test_random_graph_gradients_match_torch(shapes, steps, seed, twice):
    rng = np.random.default_rng(seed)
    leaves = [rng.uniform(-1.5, 1.5, s) for s in shapes]
    weights = [rng.standard_normal(FULL) for _ in range(3)]
    got_leaves, got_loss = run(ours, leaves, steps, weights)
    want_leaves, want_loss = run(theirs, leaves, steps, weights)
    np.testing.assert_allclose(np.asarray(got_loss.data), want_loss.detach().numpy(), rtol=1e-10, atol=1e-12)
    # twice: backward with retain_graph, then again: gradients accumulate to double
    got_loss.backward(retain_graph=twice)
    want_loss.backward(retain_graph=twice)
    if twice:
        got_loss.backward()
        want_loss.backward()
    for k, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        want = np.zeros(w.shape) if w.grad is None else w.grad.numpy()
        got = np.zeros(g.shape) if g.grad is None else np.asarray(g.grad.data)
        assert got.shape == want.shape, f"leaf {k}: grad shape {got.shape}, torch {want.shape}"
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11, err_msg=f"leaf {k}, steps {steps}")

"""The first-order pass writes in place only into arrays it alone holds.

``tensor_engine._first_order_pass`` lets a rule overwrite its incoming
gradient (ReLU masks in place) and adds a second gradient in place when the
array was made during the pass.  These tests build the graphs where that
would go wrong if ownership were misjudged -- the user's ``gradient=``, a
hook that keeps the array, ``retain_grad``, one array handed to two parents,
fan-out, mixed dtypes -- and compare every gradient with PyTorch.
"""
import numpy as np
import pytest
import torch

import taugrad
import taugrad.tensors.ops.elementwise as elementwise


def _pair(shape, seed, requires_grad=True):
    data = np.random.default_rng(seed).standard_normal(shape)
    return taugrad.tensor(data, requires_grad=requires_grad), torch.tensor(data, requires_grad=requires_grad)


def _close(ours, theirs):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_user_gradient_is_never_written():
    (x, tx), (w, tw) = _pair((4, 3), 0), _pair((3, 5), 1)
    y, ty = (x @ w).relu(), (tx @ tw).relu()
    gradient = np.random.default_rng(2).standard_normal((4, 5))
    kept = gradient.copy()
    y.backward(gradient)
    ty.backward(torch.tensor(gradient))
    np.testing.assert_array_equal(gradient, kept)
    _close(w.grad, tw.grad)


def test_array_seen_by_a_hook_is_not_overwritten_by_the_next_rule():
    (x, tx), (w1, tw1), (w2, tw2) = _pair((4, 3), 0), _pair((3, 6), 1), _pair((6, 2), 2)
    seen = []
    h = (x @ w1).relu()
    h.register_hook(lambda g: seen.append(g.detach().numpy()))  # keeps the very array
    ((h @ w2) ** 2).sum().backward()
    th = (tx @ tw1).relu()
    th.retain_grad()
    ((th @ tw2) ** 2).sum().backward()
    _close(taugrad.tensor(seen[0]), th.grad)
    _close(w1.grad, tw1.grad)


def test_retain_grad_of_a_relu_output_keeps_its_own_gradient():
    (x, tx), (w1, tw1), (w2, tw2) = _pair((5, 3), 3), _pair((3, 4), 4), _pair((4, 1), 5)
    r = (x @ w1).relu()
    r.retain_grad()
    (r @ w2).sum().backward()
    tr = (tx @ tw1).relu()
    tr.retain_grad()
    (tr @ tw2).sum().backward()
    _close(r.grad, tr.grad)
    _close(w1.grad, tw1.grad)


def test_one_array_handed_to_two_parents():
    (p, tp), (q, tq), (m, tm) = _pair((3, 4), 6), _pair((3, 4), 7), _pair((4, 2), 8)
    ((p + q).relu() @ m).relu().sum().backward()  # add gives the same g to p and q
    ((tp + tq).relu() @ tm).relu().sum().backward()
    _close(p.grad, tp.grad)
    _close(q.grad, tq.grad)
    assert not np.shares_memory(p.grad.numpy(), q.grad.numpy())
    p.grad += 1  # one leaf's gradient never aliases another's
    _close(q.grad, tq.grad)


def test_same_tensor_on_both_sides_and_fan_out():
    (x, tx), (w, tw) = _pair((4, 3), 9), _pair((3, 3), 10)
    h, th = x @ w, tx @ tw
    loss = ((h + h).relu() * 3.0 + h.relu() @ w + h * h).sum()
    tloss = ((th + th).relu() * 3.0 + th.relu() @ tw + th * th).sum()
    loss.backward()
    tloss.backward()
    _close(x.grad, tx.grad)
    _close(w.grad, tw.grad)


def test_in_place_accumulation_over_several_backward_calls():
    (x, tx), (w, tw) = _pair((4, 3), 11), _pair((3, 2), 12)
    for _ in range(3):
        ((x @ w).relu() @ w.T).relu().sum().backward()
        ((tx @ tw).relu() @ tw.T).relu().sum().backward()
    _close(x.grad, tx.grad)
    _close(w.grad, tw.grad)


def test_mixed_precision_parent_gets_its_own_dtype():
    x = taugrad.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    w = taugrad.tensor(np.linspace(-2, 2, 12).reshape(3, 4), requires_grad=True)  # float64
    # x @ w written elementwise: matmul refuses mixed dtypes (as torch), a product promotes to float64
    ((x.unsqueeze(-1) * w).sum(1).relu() @ w.T).relu().sum().backward()
    tx = torch.tensor(x.detach().numpy().astype(np.float64), requires_grad=True)
    tw = torch.tensor(w.detach().numpy(), requires_grad=True)
    ((tx @ tw).relu() @ tw.T).relu().sum().backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    _close(w.grad, tw.grad)


@pytest.mark.parametrize("value", [np.nan, 0.0, -0.0, np.inf, -np.inf])
def test_relu_in_place_rule_matches_pytorch_at_special_inputs(value):
    data = np.array([[value, 1.0, -1.0]])
    x, tx = taugrad.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    w = np.array([[2.0], [3.0], [4.0]])
    ((x.relu() @ taugrad.tensor(w)).relu() @ taugrad.tensor(w.T)).relu().sum().backward()
    ((tx.relu() @ torch.tensor(w)).relu() @ torch.tensor(w.T)).relu().sum().backward()
    np.testing.assert_array_equal(np.isnan(x.grad.numpy()), np.isnan(tx.grad.numpy()))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_mlp_uses_the_in_place_rule_and_agrees_with_the_plain_one(monkeypatch):
    rng = np.random.default_rng(13)
    x = taugrad.tensor(rng.standard_normal((8, 5)))
    weights = [rng.standard_normal(s) for s in ((5, 7), (7,), (7, 7), (7,), (7, 3), (3,))]
    targets = rng.integers(0, 3, 8)

    def gradients():
        params = [taugrad.tensor(w, requires_grad=True) for w in weights]
        h = (x @ params[0] + params[1]).relu()
        h = (h @ params[2] + params[3]).relu()
        taugrad.functional.cross_entropy(h @ params[4] + params[5], targets).backward()
        return [p.grad.numpy() for p in params]

    calls = []
    in_place = elementwise.relu_backward.overwrite
    monkeypatch.setattr(elementwise.relu_backward, "overwrite", lambda *a: calls.append(1) or in_place(*a))
    with_overwrite = gradients()
    assert len(calls) == 2  # both ReLUs masked their (owned) gradient in place
    monkeypatch.setattr(elementwise.relu_backward, "overwrite", None)
    for ours, plain in zip(with_overwrite, gradients()):
        np.testing.assert_array_equal(ours, plain)


def test_leaf_gradient_kept_by_a_hook_is_not_the_accumulating_grad():
    (x, tx), (w, tw) = _pair((4, 3), 14), _pair((3, 2), 15)
    seen = []
    w.register_hook(lambda g: seen.append(g.detach().numpy()))
    ((x @ w).relu() ** 2).sum().backward()
    first = seen[0].copy()
    ((x @ w).relu() ** 2).sum().backward()  # accumulates into w.grad in place
    np.testing.assert_array_equal(seen[0], first)
    ((tx @ tw).relu() ** 2).sum().backward()
    ((tx @ tw).relu() ** 2).sum().backward()
    _close(w.grad, tw.grad)


def test_in_place_relu_rule_on_a_zero_dimensional_gradient():
    (x, tx) = _pair((3,), 16)
    ((x.sum().relu() * 2.0).relu() * 3.0).backward()  # 0-d gradients, owned after the first mul
    ((tx.sum().relu() * 2.0).relu() * 3.0).backward()
    _close(x.grad, tx.grad)


def test_retain_graph_backward_twice_through_in_place_rules():
    (x, tx), (w1, tw1), (w2, tw2) = _pair((4, 3), 17), _pair((3, 5), 18), _pair((5, 2), 19)
    loss = (((x @ w1).relu() @ w2).relu() ** 2).sum()
    tloss = (((tx @ tw1).relu() @ tw2).relu() ** 2).sum()
    loss.backward(retain_graph=True)
    loss.backward()  # the saved values were only read, never overwritten, by the first pass
    tloss.backward(retain_graph=True)
    tloss.backward()
    for ours, theirs in ((x, tx), (w1, tw1), (w2, tw2)):
        _close(ours.grad, theirs.grad)

"""Quick checks of the tensor engine (the full oracle suite is tests/tensor/).

Expected values are worked out by hand or by PyTorch float64, never by taugrad.
"""
import gc
import weakref

import numpy as np
import pytest
import torch

import taugrad as tg


def _pair(shape, seed=0, requires_grad=True):
    data = np.random.default_rng(seed).standard_normal(shape)
    return tg.tensor(data, requires_grad=requires_grad), torch.tensor(data, requires_grad=requires_grad)


def test_add_mul_sum_by_hand():
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tg.tensor([4.0, 5.0, 6.0], requires_grad=True)
    (a * b + a).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [5.0, 6.0, 7.0])  # b + 1
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0, 3.0])  # a
    assert a.grad.dtype == np.float32


def test_python_floats_are_float32_and_scalars_do_not_upcast():
    t = tg.tensor([1.0, 2.0])
    assert t.dtype == np.float32
    assert (t * 2.5 + 1).dtype == np.float32
    assert (2.0 / t).dtype == np.float32
    assert (t**2).dtype == np.float32
    assert tg.tensor(np.zeros(2)).dtype == np.float64
    assert tg.tensor([1, 2]).dtype == np.int64


def test_mlp_like_chain_matches_torch():
    x, xt = _pair((8, 5), 1, requires_grad=False)
    w, wt = _pair((5, 4), 2)
    b, bt = _pair((4,), 3)
    out = ((x @ w + b).relu() * 3.0 - 1.0).tanh().mean()
    out_t = ((xt @ wt + bt).relu() * 3.0 - 1.0).tanh().mean()
    out.backward()
    out_t.backward()
    np.testing.assert_allclose(out.item(), out_t.item(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), bt.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, a, b: (a / (b * b + 1)).sum(),
        lambda m, a, b: (a.exp() * b.sigmoid()).sum(dim=1).sum(),
        lambda m, a, b: m.maximum(a, b).mean(),
        lambda m, a, b: (a.reshape(3, 8).T @ b.reshape(3, 8)).sum(),
        lambda m, a, b: (a.var(dim=0) + b.std(dim=(0, 1))).sum(),
        lambda m, a, b: a.logsumexp(dim=-1).sum() + a.amax(dim=0).sum(),
        lambda m, a, b: m.cat([a, b], dim=1).permute(1, 0).sum(dim=0).pow(2).sum(),
        lambda m, a, b: m.stack([a, b], dim=1)[:, 1, ::2].sum(),
        lambda m, a, b: a[[0, 0, 3, 1]].sum() + b[b > 0].sum(),
        lambda m, a, b: m.where(a > b, a, b * 2).abs().sqrt().sum(),
        lambda m, a, b: (a.unsqueeze(0) * b.unsqueeze(1)).sum() + a.flatten().sum(),
        lambda m, a, b: a.clamp(-0.5, 0.5).sum() + (b**3).sum() + (2.0**a).sum(),
    ],
)
def test_ops_against_torch(fn):
    a, at = _pair((4, 6), 10)
    b, bt = _pair((4, 6), 11)
    out = fn(tg, a, b)
    out_t = fn(torch, at, bt)
    out.backward()
    out_t.backward()
    np.testing.assert_allclose(out.item(), out_t.item(), rtol=1e-10)
    for mine, theirs in ((a, at), (b, bt)):
        if theirs.grad is None:
            assert mine.grad is None
        else:
            np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_broadcast_gradients_sum_back():
    a, at = _pair((3, 1, 5), 4)
    b, bt = _pair((4, 1), 5)
    (a * b).sum().backward()
    (at * bt).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), bt.grad.numpy(), rtol=1e-12)


def test_repeated_indices_accumulate():
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a[[0, 0, 2, 0]].sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 0.0, 1.0])


def test_grads_accumulate_across_backward_calls_and_leaves_do_not_alias():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    (a + b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0])
    a.grad.numpy()[0] = 100.0
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 2.0])


def test_non_scalar_backward_needs_gradient():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="gradient="):
        (a * 2).backward()
    (a * 2).backward(gradient=tg.tensor([1.0, 10.0]))
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 20.0])


def test_second_backward_without_retain_graph_raises():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (a * a).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()
    z = (a * a).sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0 + 4.0, 4.0 + 8.0])


def test_inplace_change_of_saved_input_raises():
    x = tg.tensor([1.0, 2.0])
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    y = (w * x).sum()
    x.add_(1.0)
    with pytest.raises(RuntimeError, match="'mul'.*in-place"):
        y.backward()


def test_inplace_change_through_a_view_is_seen():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    w = tg.tensor([1.0, 1.0], requires_grad=True)
    y = (x @ w).sum()
    view = x[0]
    view.mul_(2.0)
    with pytest.raises(RuntimeError, match="matmul"):
        y.backward()


def test_inplace_on_unused_value_is_fine():
    x = tg.tensor([1.0, 2.0])
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    y = (w + x).sum()  # add does not read its inputs
    x.add_(1.0)
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])


def test_inplace_on_leaf_requiring_grad_needs_no_grad():
    w = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        w += 1
    with tg.no_grad():
        w -= 0.5
    np.testing.assert_array_equal(w.detach().numpy(), [0.5])


def test_grad_function_leaves_dot_grad_alone():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    c = tg.tensor([5.0], requires_grad=True)
    y = (a * b).sum()
    ga, gb = tg.grad(y, [a, b], retain_graph=True)
    np.testing.assert_array_equal(ga.detach().numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(gb.detach().numpy(), [1.0, 2.0])
    assert a.grad is None and b.grad is None
    with pytest.raises(RuntimeError, match="allow_unused"):
        tg.grad(y, [a, c], retain_graph=True)
    assert tg.grad(y, [c], allow_unused=True) == (None,)


def test_no_grad_records_nothing():
    a = tg.tensor([1.0], requires_grad=True)
    with tg.no_grad():
        y = a * 2
    assert not y.requires_grad and y.is_leaf and y._prev == ()


def test_graph_is_freed_without_the_cycle_collector():
    gc.disable()
    try:
        a = tg.randn(10, requires_grad=True)
        h = a.exp()
        y = (h * h).sum()
        ref = weakref.ref(h)
        del h, y
        assert ref() is None
    finally:
        gc.enable()


def test_errors_name_shapes_and_op():
    with pytest.raises(ValueError, match=r"matmul: \(3, 4\) @ \(5, 6\)"):
        tg.zeros(3, 4) @ tg.zeros(5, 6)
    with pytest.raises(ValueError, match=r"add: shapes \(3,\) and \(4,\) cannot broadcast"):
        tg.zeros(3) + tg.zeros(4)
    with pytest.raises(IndexError, match="dim 2"):
        tg.zeros(3, 4).sum(dim=2)
    with pytest.raises(TypeError, match="floating"):
        tg.tensor([1, 2], requires_grad=True)


def test_create_graph_second_derivative():
    x = tg.tensor([2.0], dtype="float64", requires_grad=True)
    (g,) = tg.grad((x**3).sum(), [x], create_graph=True)
    (h,) = tg.grad(g.sum(), [x], create_graph=True)
    (k,) = tg.grad(h.sum(), [x])
    assert (g.item(), h.item(), k.item()) == (12.0, 12.0, 6.0)


def test_cross_entropy_matches_torch_and_is_stable():
    import taugrad.functional as F

    logits = np.random.default_rng(0).standard_normal((5, 4)) * 1e4
    target = np.array([0, 3, 1, 1, 2])
    x = tg.tensor(logits, requires_grad=True)
    xt = torch.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(x, tg.tensor(target))
    loss_t = torch.nn.functional.cross_entropy(xt, torch.tensor(target))
    loss.backward()
    loss_t.backward()
    assert np.isfinite(loss.item())
    np.testing.assert_allclose(loss.item(), loss_t.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), atol=1e-15)


def test_loss_errors():
    import taugrad.functional as F

    logits = tg.zeros(3, 4)
    with pytest.raises(TypeError, match="integer"):
        F.cross_entropy(logits, tg.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="target 7 .* 4 classes"):
        F.cross_entropy(logits, tg.tensor([0, 7, 1]))
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(2,\)"):
        F.cross_entropy(logits, tg.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"target size \(4, 3\) must broadcast with the input size \(3, 4\)"):
        F.mse_loss(logits, tg.zeros(4, 3))


class _Cube(tg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x**2


def test_custom_function():
    x = tg.tensor([1.0, -2.0], dtype="float64", requires_grad=True)
    _Cube.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 12.0])
    y = _Cube.apply(x).sum()
    with tg.no_grad():
        x.mul_(2.0)
    with pytest.raises(RuntimeError, match="_Cube"):
        y.backward()


def test_small_conveniences():
    t = tg.tensor([1.0, 2.0, 3.0])
    assert f"{t.sum():.2f}" == "6.00"
    assert (t == None) is False  # noqa: E711 (identity fallback, as PyTorch)
    t[1].add_(10.0)  # x[i] is a view, as in PyTorch
    np.testing.assert_array_equal(t.detach().numpy(), [1.0, 12.0, 3.0])
    assert [10, 20, 30][tg.tensor(2)] == 30


def test_every_rule_is_differentiable_twice_like_torch():
    data = np.random.default_rng(3).random((3, 4)) + 0.5
    for fn in (
        lambda m, a: (a.sigmoid() * a.log()).sum(),
        lambda m, a: (a @ a.T).logsumexp(dim=1).sum(),
        lambda m, a: m.stack([a.relu() ** 3, a.tanh()]).std(),
    ):
        x = tg.tensor(data, requires_grad=True)
        xt = torch.tensor(data, requires_grad=True)
        (g,) = tg.grad(fn(tg, x), [x], create_graph=True)
        (gt,) = torch.autograd.grad(fn(torch, xt), [xt], create_graph=True)
        (h,) = tg.grad((g * g).sum(), [x])
        (ht,) = torch.autograd.grad((gt * gt).sum(), [xt])
        np.testing.assert_allclose(h.detach().numpy(), ht.numpy(), rtol=1e-9, atol=1e-12)

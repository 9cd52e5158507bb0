"""Tensor.register_hook, Tensor.retain_grad and Module.register_forward_hook, against PyTorch."""
import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn


def _pair(values):
    """The same float64 leaf in taugrad and in torch."""
    array = np.asarray(values, dtype=np.float64)
    return taugrad.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def _close(ours, theirs):
    np.testing.assert_allclose(ours.detach().numpy() if hasattr(ours, "data") and not isinstance(ours, torch.Tensor) else ours,
                               theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_interior_hook_sees_the_gradient_and_can_replace_it():
    values = [0.5, -1.0, 2.0]
    seen = {}

    def build(lib, x):
        y = x * 3
        seen_key = lib
        y.register_hook(lambda g: seen.__setitem__(seen_key, np.array(g.tolist())))  # returns None
        z = y.tanh()
        z.register_hook(lambda g: g * 10)  # replaces dL/dz before it flows on
        return (z * z).sum()

    tx, px = _pair(values)
    build("taugrad", tx).backward()
    build("torch", px).backward()
    np.testing.assert_allclose(seen["taugrad"], seen["torch"], rtol=1e-12)
    _close(tx.grad, px.grad)
    np.testing.assert_allclose(px.grad.numpy(), 10 * 2 * np.tanh(3 * np.array(values))
                               * (1 - np.tanh(3 * np.array(values)) ** 2) * 3, rtol=1e-12)


def test_leaf_hook_replaces_what_is_accumulated_and_sees_each_call():
    tx, px = _pair([1.0, 2.0])
    calls = []
    for x in (tx, px):
        x.register_hook(lambda g: calls.append(g.tolist()) or g * 2)
    for _ in range(2):  # accumulation across two backward calls
        (tx * tx).sum().backward()
        (px * px).sum().backward()
    _close(tx.grad, px.grad)
    assert tx.grad.tolist() == [8.0, 16.0]
    assert calls == [[2.0, 4.0], [2.0, 4.0], [2.0, 4.0], [2.0, 4.0]]


def test_hooks_run_in_registration_order_each_seeing_the_previous_result():
    x = taugrad.tensor([1.0], requires_grad=True)
    order = []
    x.register_hook(lambda g: order.append(("first", g.item())) or g + 1)
    x.register_hook(lambda g: order.append(("second", g.item())) or g * 10)
    (x * 2).sum().backward()
    assert order == [("first", 2.0), ("second", 3.0)]
    assert x.grad.item() == 30.0


def test_handle_remove_unregisters_and_is_idempotent():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 0)
    handle.remove()
    handle.remove()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with x.register_hook(lambda g: g * 0):  # a handle is also a context manager
        x.grad = None
        (x * 3).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_retain_grad_matches_torch_and_accumulates():
    values = [[0.3, -0.2], [1.5, 0.7]]
    tx, px = _pair(values)
    outs = []
    for x in (tx, px):
        h = (x @ x).sigmoid()
        h.retain_grad()
        assert h.retains_grad and not x.retains_grad
        loss = (h * h).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        outs.append(h)
    _close(outs[0].grad, outs[1].grad)
    _close(tx.grad, px.grad)


def test_retained_grad_is_the_gradient_after_hooks():
    for lib in (taugrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 5)  # registered after retain_grad, still applied first
        (y * 3).sum().backward()
        assert y.grad.tolist() == [15.0, 15.0], lib.__name__
        assert x.grad.tolist() == [30.0, 30.0], lib.__name__


def test_intermediate_without_retain_grad_keeps_no_grad_and_leaf_retain_is_a_no_op():
    x = taugrad.tensor([1.0], requires_grad=True)
    x.retain_grad()
    y = x * 2
    (y * 3).sum().backward()
    assert y.grad is None
    assert x.grad.tolist() == [6.0]


def test_hooks_work_with_create_graph():
    tx, px = _pair([0.7, -0.4])
    ty = tx.sin()
    ty.register_hook(lambda g: g * g)  # the hook's result stays differentiable
    (tg,) = taugrad.grad(ty.sum() * 3, tx, create_graph=True)
    py = px.sin()
    py.register_hook(lambda g: g * g)
    (pg,) = torch.autograd.grad(py.sum() * 3, px, create_graph=True)
    _close(tg, pg)
    tg.sum().backward()
    pg.sum().backward()
    _close(tx.grad, px.grad)


def test_hook_errors():
    x = taugrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        x.register_hook(print)
    with pytest.raises(RuntimeError, match="does not require grad"):
        x.retain_grad()
    x.requires_grad_()
    with pytest.raises(TypeError, match="callable"):
        x.register_hook(3)
    x.register_hook(lambda g: g[:1])
    with pytest.raises(RuntimeError, match=r"shape \(1,\) for a tensor of shape \(2,\)"):
        (x * 2).sum().backward()


def test_hook_may_return_an_array_and_dtype_is_kept():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)  # float32
    x.register_hook(lambda g: np.array([7.0, 8.0]))  # float64 array
    (x * 2).sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [7.0, 8.0]


# ---------------------------------------------------------------------------
# Module.register_forward_hook
# ---------------------------------------------------------------------------


def test_forward_hook_sees_module_inputs_output_like_torch():
    weights = np.random.default_rng(0).standard_normal((3, 2))
    records = {}
    for lib, module in (("taugrad", nn.Linear(2, 3, dtype="float64")), ("torch", torch.nn.Linear(2, 3).double())):
        with torch.no_grad():
            module.weight.detach().numpy()[...] = torch.tensor(weights) if lib == "torch" else weights
            module.bias.detach().numpy()[...] = 0
        module.register_forward_hook(lambda m, inputs, output, lib=lib: records.setdefault(
            lib, (type(m).__name__, len(inputs), np.array(output.tolist()))))
        x = np.ones((4, 2))
        module(taugrad.tensor(x) if lib == "taugrad" else torch.tensor(x))
    assert records["taugrad"][:2] == records["torch"][:2] == ("Linear", 1)
    np.testing.assert_allclose(records["taugrad"][2], records["torch"][2], rtol=1e-12)


def test_forward_hook_can_replace_the_output_and_be_removed():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    first, relu, last = model.children()
    first.weight.detach().numpy()[...] = 0.5  # ReLU active: without the hook the output is not just the bias
    first.bias.detach().numpy()[...] = 0.5
    last.weight.detach().numpy()[...] = 1.0
    handle = relu.register_forward_hook(lambda m, inputs, output: output * 0)
    x = taugrad.ones(5, 2)
    out = model(x)
    bias = list(model.children())[2].bias
    np.testing.assert_allclose(out.detach().numpy(), np.broadcast_to(bias.detach().numpy(), (5, 1)))
    out.sum().backward()  # the replacement is part of the graph
    assert np.all(list(model.children())[0].weight.grad.numpy() == 0)
    handle.remove()
    assert not np.allclose(model(x).detach().numpy(), np.broadcast_to(bias.detach().numpy(), (5, 1)))


def test_forward_hooks_run_in_order_and_none_keeps_the_output():
    layer = nn.Identity()
    order = []
    layer.register_forward_hook(lambda m, i, o: order.append("a"))
    layer.register_forward_hook(lambda m, i, o: order.append("b") or o + 1)
    layer.register_forward_hook(lambda m, i, o: order.append(("c", o.item())))
    assert layer(taugrad.tensor(1.0)).item() == 2.0
    assert order == ["a", "b", ("c", 2.0)]


def test_register_forward_hook_rejects_non_callables():
    with pytest.raises(TypeError, match="callable"):
        nn.ReLU().register_forward_hook("not a function")

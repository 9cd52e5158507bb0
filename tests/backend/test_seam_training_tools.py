"""The training tools on the device backend equal the CPU's: every optimizer, clipping, losses, init, autograd helpers.

Each check runs a small program twice, on the CPU and on ``'cuda'`` (the
strict fake, or CuPy for the ``cuda``-marked run), and compares what comes
back: EQUAL on the fake (it computes with NumPy underneath, and refuses any
NumPy call that escaped the array module), float64 rounding on CuPy.  The
programs use float64 so one tolerance fits every check.
"""
from __future__ import annotations

import numpy as np
import pytest

import taugrad
import taugrad.autograd.functional as AF
import taugrad.func as tfunc
import taugrad.nn.functional as F
from taugrad import nn, optim
from taugrad.tensors.core import backend

OPTIMIZERS = {
    "SGD-nesterov": lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "SGD-maximize": lambda p: optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.1, maximize=True),
    "Adam": lambda p: optim.Adam(p, lr=1e-2, weight_decay=1e-2),
    "Adam-amsgrad": lambda p: optim.Adam(p, lr=1e-2, amsgrad=True),
    "AdamW": lambda p: optim.AdamW(p, lr=1e-2),
    "RMSprop": lambda p: optim.RMSprop(p, lr=1e-2, momentum=0.5, centered=True),
    "Adagrad": lambda p: optim.Adagrad(p, lr=0.1, lr_decay=1e-2),
    "Adadelta": lambda p: optim.Adadelta(p, weight_decay=1e-2),
    "Adamax": lambda p: optim.Adamax(p),
    "NAdam": lambda p: optim.NAdam(p),
}


def host(t):
    """A tensor's values as a NumPy array of their own (a CPU tensor's would share memory)."""
    return t.detach().cpu().numpy().copy()


def _assert_same(got, want, tolerance):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, f"result {k}: {g.shape} {g.dtype} vs {w.shape} {w.dtype}"
        if tolerance is None:
            np.testing.assert_array_equal(g, w, err_msg=f"result {k}: device != CPU")
        else:
            np.testing.assert_allclose(g, w, **tolerance, err_msg=f"result {k}: device vs CPU")


def _on_both(program, tolerance):
    _assert_same(program("cuda"), program("cpu"), tolerance)


def _optimizer_steps(make_optimizer, device):
    """Three steps of an MLP (clip_grad_norm_, a scheduler, a state_dict round trip), then its weights."""
    taugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).double().to(device)
    optimizer = make_optimizer(model.parameters())
    scheduler = optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)
    rng = np.random.default_rng(1)
    x = taugrad.tensor(rng.standard_normal((5, 6)), device=device)
    y = taugrad.tensor(rng.integers(0, 3, 5), device=device)
    results = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        results.append(host(nn.utils.clip_grad_norm_(model.parameters(), 0.5)))
        optimizer.step()
        scheduler.step()
        results.append(host(loss))
    optimizer.load_state_dict(optimizer.state_dict())
    optimizer.step()
    for state in optimizer.state.values():
        for value in state.values():
            value = value._data if isinstance(value, taugrad.Tensor) else value
            if backend.is_array(value) and value.ndim:
                assert backend.device_of(value).type == device, "optimizer state off the parameters' device"
    return results + [host(p) for p in model.parameters()]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_on_device_equal_cpu(device_backend, name):
    _, tolerance = device_backend
    _on_both(lambda device: _optimizer_steps(OPTIMIZERS[name], device), tolerance)


def _losses(device):
    rng = np.random.default_rng(3)
    x = taugrad.tensor(rng.standard_normal((4, 3)), device=device, requires_grad=True)
    p = taugrad.tensor(rng.uniform(0.1, 0.9, (4, 3)), device=device, requires_grad=True)
    y = taugrad.tensor(rng.uniform(0, 1, (4, 3)), device=device)
    t = taugrad.tensor(np.array([0, 2, 1, 2]), device=device)
    w = taugrad.tensor(np.array([1.0, 2.0, 0.5]), device=device)
    terms = [F.l1_loss(x, y), F.smooth_l1_loss(x, y), F.huber_loss(x, y, weight=w),
             F.binary_cross_entropy(p, y, weight=w), F.binary_cross_entropy_with_logits(x, y, pos_weight=w, weight=w),
             F.kl_div(F.log_softmax(x, 1), y, reduction="batchmean"), F.cross_entropy(x, t, weight=w),
             F.cross_entropy(x, t, label_smoothing=0.2, ignore_index=1), F.nll_loss(F.log_softmax(x, 1), t, weight=w),
             F.cross_entropy(x, F.softmax(y, 1)), F.cross_entropy(x, [1, 2, 0, 0]), F.mse_loss(x, np.ones((4, 3))),
             F.cross_entropy(x.reshape(2, 2, 3).permute(0, 2, 1), t.reshape(2, 2)),
             F.softplus(x, beta=2.0), F.hardtanh(x), F.layer_norm(x, 3), F.one_hot(t, 3) * 1.0, F.embedding(t, x),
             F.dropout(x, 0.3)]
    total = sum(v.sum() for v in terms)
    total.backward()
    return [host(v) for v in terms] + [host(x.grad), host(p.grad)]


def test_losses_on_device_equal_cpu(device_backend):
    _, tolerance = device_backend

    def program(device):
        taugrad.manual_seed(5)  # dropout's draw: the same seed gives the same mask on every device
        return _losses(device)

    _on_both(program, tolerance)


def _attention(device):
    taugrad.manual_seed(0)
    emb, att = nn.Embedding(11, 8).double(), nn.MultiheadAttention(8, 2, batch_first=True).double()
    emb.to(device), att.to(device)
    idx = taugrad.tensor(np.random.default_rng(2).integers(0, 11, (2, 5)), device=device)
    h = emb(idx)
    a, weights = att(h, h, h, attn_mask=taugrad.tensor(np.triu(np.ones((5, 5), bool), 1), device=device))
    out = F.scaled_dot_product_attention(a, a, a, is_causal=True)
    out.sum().backward()
    return [host(out), host(weights)] + [host(p.grad) for p in [*emb.parameters(), *att.parameters()]]


def test_attention_on_device_equals_cpu(device_backend):
    _, tolerance = device_backend
    _on_both(_attention, tolerance)


def _autograd_helpers(device):
    x = taugrad.tensor(np.random.default_rng(4).standard_normal(3), device=device)
    ones = taugrad.tensor(np.ones(3), device=device)

    def f(v):
        return (v * v).sum() * v[0]

    out = [AF.jacobian(lambda v: v * v, x), AF.hessian(f, x), AF.vjp(lambda v: v * 2, x, ones)[1],
           AF.jvp(lambda v: v.exp(), x, ones)[1], AF.hvp(f, x, ones)[1], tfunc.jacrev(lambda v: v.sin())(x),
           tfunc.grad(f)(x), tfunc.vjp(lambda v: v.exp(), x)[1](np.ones(3))[0], tfunc.hessian(f)(x)]
    xg = x.detach().requires_grad_()
    assert taugrad.gradcheck(lambda v: (v.exp() * v).sum(), [xg])
    assert taugrad.gradgradcheck(lambda v: v.exp() * v, [xg])
    return [host(o) for o in out]


def test_autograd_helpers_on_device_equal_cpu(device_backend):
    _, tolerance = device_backend
    _on_both(_autograd_helpers, tolerance)


class _TwoOutputs(taugrad.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a, a + 1

    @staticmethod
    def backward(ctx, g_square, g_shift):
        (a,) = ctx.saved_tensors
        return g_square * 2 * a + g_shift


def _function_and_hooks(device):
    a = taugrad.tensor(np.random.default_rng(5).standard_normal(4), device=device, requires_grad=True)
    square, shifted = _TwoOutputs.apply(a)
    h = square * 1.0
    h.register_hook(lambda g: g * 2)
    h.retain_grad()
    base = a * 2
    base[1:3].relu_()  # an in-place op on a view: the base is rebased through the view's positions
    (h.sum() + shifted.sum() * 3 + base.sum()).backward()
    return [host(square), host(shifted), host(a.grad), host(h.grad)]


def test_custom_function_hooks_and_views_on_device_equal_cpu(device_backend):
    _, tolerance = device_backend
    _on_both(_function_and_hooks, tolerance)


def _init_and_vectors(device):
    taugrad.manual_seed(7)
    w = taugrad.empty(4, 5, dtype=taugrad.float64).to(device)
    out = []
    for fill in (nn.init.xavier_uniform_, nn.init.kaiming_normal_, nn.init.trunc_normal_, nn.init.ones_):
        fill(w)
        out.append(host(w))
    out.append(host(nn.utils.parameters_to_vector([w, w])))
    nn.utils.vector_to_parameters(taugrad.tensor(np.arange(40.0), device=device), [w, w])
    w.grad = taugrad.tensor(np.linspace(-3, 3, 20).reshape(4, 5), device=device)
    nn.utils.clip_grad_value_([w], 1.5)
    total = nn.utils.clip_grad_norm_([w], 1.0, norm_type=float("inf"))
    return out + [host(w), host(w.grad), host(total)]


def test_init_and_clipping_on_device_equal_cpu(device_backend):
    _, tolerance = device_backend
    _on_both(_init_and_vectors, tolerance)


def test_device_tensor_prints_as_torch(fake_cuda):
    t = taugrad.tensor([1.0, 2.5], device="cuda", requires_grad=True)
    assert repr(t) == "tensor([1.0000, 2.5000], device='cuda:0', requires_grad=True)"
    assert repr(taugrad.tensor([1, 2], device="cuda") * 2) == "tensor([2, 4], device='cuda:0')"


@pytest.mark.parametrize("make_call, names", [
    (lambda x: F.cross_entropy(x, taugrad.tensor([0, 1])), "cross_entropy"),
    (lambda x: F.mse_loss(x, taugrad.ones(2, 3)), "mse_loss"),
    (lambda x: x.sum().backward(taugrad.tensor(1.0)), "backward: gradient 0"),
])
def test_a_cpu_tensor_beside_a_device_one_is_a_one_line_error(fake_cuda, make_call, names):
    x = taugrad.tensor(np.ones((2, 3), np.float32), device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"^{names}.*cuda:0.*cpu|^{names}.*cpu.*cuda:0") as info:
        make_call(x)
    assert "\n" not in str(info.value)

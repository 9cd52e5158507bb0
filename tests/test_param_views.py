"""A parameter's ``.data``, ``.grad`` and their views share memory with what the optimizer updates.

Pruning (``w.data.view(-1)[mask] = 0``) and gradient masks
(``w.grad.view(-1)[::3] = 0`` between ``backward`` and ``step``) are written
through views; they must reach the parameter and the step, so training gives
PyTorch's numbers.  Layers keep PyTorch's parameter layout (row-major).
"""
import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn.functional as F
from taugrad import nn, optim

OPTIMIZERS = {
    "SGD": (lambda p: optim.SGD(p, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    "SGD-momentum": (lambda p: optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
                     lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01)),
    "Adam": (lambda p: optim.Adam(p, lr=0.01), lambda p: torch.optim.Adam(p, lr=0.01)),
    "AdamW": (lambda p: optim.AdamW(p, lr=0.01), lambda p: torch.optim.AdamW(p, lr=0.01)),
}


def _models():
    taugrad.manual_seed(0)
    ours = nn.Sequential(nn.Conv2d(2, 3, 3), nn.Flatten(), nn.Linear(12, 5), nn.Tanh(), nn.Linear(5, 3)).double()
    theirs = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.Flatten(), torch.nn.Linear(12, 5), torch.nn.Tanh(),
                                 torch.nn.Linear(5, 3)).double()
    with torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))
    return ours, theirs


def _prune(p):
    flat = p.data.view(-1)
    flat[(np.arange(flat.shape[0]) % 4 == 1)] = 0.0


def _mask_grad(p):
    p.grad.view(-1)[::3] = 0.0


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_pruning_and_gradient_masks_through_views_train_as_torch(name):
    ours, theirs = _models()
    make_ours, make_theirs = OPTIMIZERS[name]
    opt, topt = make_ours(ours.parameters()), make_theirs(theirs.parameters())
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 2, 4, 4))
    y = rng.integers(0, 3, 6)
    for step in range(3):
        if step == 1:
            for p in ours.parameters():
                _prune(p)
            with torch.no_grad():
                for q in theirs.parameters():
                    _prune(q)
        opt.zero_grad()
        topt.zero_grad()
        F.cross_entropy(ours(taugrad.tensor(x)), taugrad.tensor(y)).backward()
        torch.nn.functional.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y)).backward()
        for p, q in zip(ours.parameters(), theirs.parameters()):
            _mask_grad(p)
            _mask_grad(q)
        opt.step()
        topt.step()
    for (key, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=key)


def test_a_pruning_mask_written_through_a_view_is_in_the_weight():
    layer = nn.Linear(4, 3)
    layer.weight.data.view(-1)[::2] = 0.0
    assert (layer.weight.detach().numpy().reshape(-1)[::2] == 0).all()
    layer.weight.detach().view(12)[1] = 5.0  # detach() shares memory too
    assert layer.weight.detach().numpy()[0, 1] == 5.0


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_views_taken_before_a_step_see_the_step(name):
    ours, _ = _models()
    opt = OPTIMIZERS[name][0](ours.parameters())
    x = taugrad.tensor(np.random.default_rng(2).standard_normal((6, 2, 4, 4)))
    F.cross_entropy(ours(x), taugrad.tensor(np.arange(6) % 3)).backward()
    views = [p.data.view(-1) for p in ours.parameters()]
    before = [v.numpy().copy() for v in views]
    opt.step()
    for p, v, b in zip(ours.parameters(), views, before):
        np.testing.assert_array_equal(v.numpy(), p.detach().numpy().reshape(-1))
        assert not np.array_equal(v.numpy(), b)


@pytest.mark.parametrize("layer", [lambda: nn.Linear(4, 3), lambda: nn.Conv1d(2, 3, 3), lambda: nn.Conv2d(2, 3, 3),
                                   lambda: nn.ConvTranspose2d(2, 3, 3), lambda: nn.Embedding(5, 3),
                                   lambda: nn.LayerNorm(4)])
def test_layers_keep_torch_parameter_layout(layer):
    for name, p in layer().named_parameters():
        assert p.is_contiguous(), name
        assert p.detach().numpy().flags.c_contiguous, name

"""InstanceNorm1d/2d and the norm layers' ``bias=`` argument, against torch: values, gradients, reprs, state dicts."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad


@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)),
                                         ("InstanceNorm2d", (2, 3, 4, 5)), ("InstanceNorm2d", (3, 4, 5))])
@pytest.mark.parametrize("kwargs", [{}, {"affine": True}, {"affine": True, "bias": False}, {"eps": 1e-3}])
def test_instance_norm_matches_torch(name, shape, kwargs):
    x = np.random.default_rng(0).standard_normal(shape) * 3 + 1
    theirs = getattr(torch.nn, name)(3, dtype=torch.float64, **kwargs)
    ours = getattr(taugrad.nn, name)(3, dtype=taugrad.float64, **kwargs)
    if kwargs.get("affine"):  # non-trivial affine parameters, the same in both
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor([0.5, -1.0, 2.0]))
            if theirs.bias is not None:
                theirs.bias.copy_(torch.tensor([0.1, 0.2, -0.3]))
        ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    a, b = torch.tensor(x, requires_grad=True), taugrad.tensor(x, requires_grad=True)
    out_a, out_b = theirs(a), ours(b)
    np.testing.assert_allclose(out_b.detach().numpy(), out_a.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = np.random.default_rng(1).standard_normal(shape)
    (out_a * torch.tensor(w)).sum().backward()
    (out_b * taugrad.tensor(w)).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-9, atol=1e-11)
    for p_ours, p_theirs in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p_ours.grad.numpy(), p_theirs.grad.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name, args", [("BatchNorm1d", (3,)), ("BatchNorm2d", (3,)), ("GroupNorm", (1, 3))])
@pytest.mark.parametrize("kwargs", [{}, {"bias": False}, {"affine": False}])
def test_norm_layers_take_torchs_bias_argument(name, args, kwargs):
    theirs, ours = getattr(torch.nn, name)(*args, **kwargs), getattr(taugrad.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_instance_norm_tracks_running_statistics_as_torch():
    x = np.random.default_rng(3).normal(size=(2, 3, 4, 4))
    ours = taugrad.nn.InstanceNorm2d(3, track_running_stats=True, affine=True, dtype=taugrad.float64)
    theirs = torch.nn.InstanceNorm2d(3, track_running_stats=True, affine=True).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for _ in range(3):
        out, ref = ours(taugrad.tensor(x)), theirs(torch.tensor(x))
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(ours, name).numpy(), getattr(theirs, name).numpy(), rtol=1e-12)
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(taugrad.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10, atol=1e-12)


def test_instance_norm_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="InstanceNorm2d: expected a 3-D or 4-D input"):
        taugrad.nn.InstanceNorm2d(3)(taugrad.zeros(2, 3))

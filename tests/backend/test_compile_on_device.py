"""``taugrad.compile`` on a device tensor: the step runs eagerly, with one warning, and gives the eager numbers."""
from __future__ import annotations

import warnings

import numpy as np

import taugrad
import taugrad.functional as F
from taugrad import nn, optim
from taugrad.compile import CompileWarning


def _trained(device, compiled: bool, steps: int = 4):
    taugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(2)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = taugrad.compile(step) if compiled else step
    losses = []
    for _ in range(steps):
        x = taugrad.tensor(rng.standard_normal((5, 6)).astype(np.float32), device=device)
        y = taugrad.tensor(rng.integers(0, 3, 5), device=device)
        losses.append(float(fn(x, y).cpu()))
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], fn


def test_compiled_device_step_runs_eagerly_with_one_warning(fake_cuda):
    expected, expected_params, _ = _trained("cuda", compiled=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        losses, params, fn = _trained("cuda", compiled=True)
    assert [w.category for w in caught] == [CompileWarning]
    assert "only NumPy arrays are recorded" in str(caught[0].message)
    assert fn.stats["replays"] == 0
    assert losses == expected
    assert all(np.array_equal(a, b) for a, b in zip(params, expected_params))

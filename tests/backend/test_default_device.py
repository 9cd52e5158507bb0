"""``set_default_device`` and ``with taugrad.device(...)``: where factory functions put tensors without ``device=``.

Run on the strict fake device registered as ``'cuda'``; every tensor a
factory function makes must land there, except where PyTorch keeps the CPU
(an explicit ``device='cpu'``, memory shared with NumPy, ``*_like`` of a CPU
tensor).
"""
from __future__ import annotations

import numpy as np
import pytest

import taugrad
import taugrad.functional as F
from taugrad import nn, optim
from taugrad.tensors.core.backend import CPU, DEFAULT_DEVICES

CUDA0 = taugrad.device("cuda", 0)

FACTORIES = {
    "tensor": lambda: taugrad.tensor([1.0, 2.0]),
    "as_tensor": lambda: taugrad.as_tensor(np.arange(3.0)),
    "zeros": lambda: taugrad.zeros(2, 3),
    "ones": lambda: taugrad.ones(2),
    "empty": lambda: taugrad.empty(4),
    "full": lambda: taugrad.full((2,), 3.0),
    "arange": lambda: taugrad.arange(5),
    "linspace": lambda: taugrad.linspace(0, 1, 5),
    "logspace": lambda: taugrad.logspace(0, 1, 3),
    "eye": lambda: taugrad.eye(3),
    "rand": lambda: taugrad.rand(3),
    "randn": lambda: taugrad.randn(2, 2),
    "randint": lambda: taugrad.randint(0, 5, (4,)),
    "randperm": lambda: taugrad.randperm(5),
    "normal": lambda: taugrad.normal(0.0, 1.0, size=(3,)),
}


@pytest.fixture
def restore_default():
    yield
    DEFAULT_DEVICES[:] = [CPU]


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_use_the_default_device(fake_cuda, restore_default, name):
    taugrad.set_default_device("cuda")
    assert taugrad.get_default_device() == CUDA0
    made = FACTORIES[name]()
    assert made.device == CUDA0
    taugrad.set_default_device(None)
    assert FACTORIES[name]().device == CPU


def test_what_the_default_does_not_move(fake_cuda, restore_default):
    host = taugrad.zeros(3)
    taugrad.set_default_device("cuda")
    assert taugrad.zeros(3, device="cpu").device == CPU
    assert taugrad.from_numpy(np.zeros(2)).device == CPU  # shares the NumPy memory
    assert taugrad.zeros_like(host).device == CPU  # follows its tensor
    assert taugrad.Generator().device == CPU  # torch's Generator(device='cpu') default


def test_with_device_block_sets_the_default_inside_only(fake_cuda, restore_default):
    with taugrad.device("cuda") as dev:
        assert dev == taugrad.device("cuda")
        assert taugrad.ones(2).device == CUDA0
        with taugrad.device("cpu"):
            assert taugrad.ones(2).device == CPU
        assert taugrad.randn(2).device == CUDA0
        layer = nn.Linear(3, 2)
    assert taugrad.ones(2).device == CPU
    assert taugrad.get_default_device() == CPU
    assert all(p.device == CUDA0 for p in layer.parameters())


def test_a_step_built_on_the_default_device_equals_the_cpu_step(fake_cuda, restore_default):
    def run():
        taugrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.BatchNorm1d(6), nn.Linear(6, 3))
        opt = optim.Adam(model.parameters(), lr=0.01)
        losses = []
        rng = np.random.default_rng(1)  # the batches: random draws on a device use that device's own generator
        for _ in range(3):
            x = taugrad.tensor(rng.standard_normal((8, 4)).astype(np.float32))
            y = taugrad.tensor(rng.integers(0, 3, 8))
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss)
        return model, losses

    cpu_model, cpu_losses = run()
    taugrad.set_default_device("cuda")
    dev_model, dev_losses = run()
    assert all(loss.device == CUDA0 for loss in dev_losses)
    assert all(t.device == CUDA0 for t in list(dev_model.parameters()) + list(dev_model.buffers()))
    assert [float(a) for a in cpu_losses] == [float(b.cpu()) for b in dev_losses]
    for a, b in zip(cpu_model.state_dict().values(), dev_model.state_dict().values()):
        assert np.array_equal(a.numpy(), b.cpu().numpy())


def test_type_as_takes_the_device_too(fake_cuda):
    """PyTorch's type names the device (``torch.cuda.DoubleTensor``): ``type_as`` a device tensor moves there."""
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    other = taugrad.zeros(1, dtype=taugrad.float64, device="cuda")
    y = x.type_as(other)
    assert y.device == CUDA0 and y.dtype == taugrad.float64
    (y * y).sum().backward()
    assert x.grad.device == CPU and x.grad.tolist() == [2.0, 4.0]

"""PyTorch's "learning by examples" polynomial scripts (fit sin(x) with a cubic) with ``import taugrad as torch``.

Each script runs with taugrad and torch from the same initial weights; the scripts' ``dtype`` variable
is set to float64 (losses to 1e-10) and, for one run, to float32 (1e-5).  Fewer steps than the scripts.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import taugrad

from ._compare import assert_close_steps, to_taugrad_state

INIT = [float(v) for v in np.random.default_rng(0).standard_normal(4) * 0.1]


def polynomial_autograd(torch, dtype, steps=30):
    x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
    y = torch.sin(x)
    a, b, c, d = (torch.tensor(v, dtype=dtype, requires_grad=True) for v in INIT)
    learning_rate = 1e-5
    losses = []
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return losses + [a.item(), b.item(), c.item(), d.item()]


def polynomial_custom_function(torch, dtype, steps=30):
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
    losses = []
    for t in range(steps):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= 5e-5 * p.grad
                p.grad = None
    return losses


def polynomial_nn(torch, dtype, state, optimizer_name=None, steps=30):
    x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)).to(dtype)
    model.load_state_dict(state)
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = None
    if optimizer_name == "RMSprop":
        optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    losses = []
    for t in range(steps):
        loss = loss_fn(model(xx), y)
        losses.append(loss.item())
        if optimizer is None:
            model.zero_grad()
            loss.backward()
            with torch.no_grad():
                for param in model.parameters():
                    param -= 1e-5 * param.grad
        else:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    linear_layer = model[0]
    return losses + [linear_layer.bias.item()] + [linear_layer.weight[:, i].item() for i in range(3)]


def polynomial_module(torch, dtype, steps=30, dynamic=None):
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d = (torch.nn.Parameter(torch.tensor(v, dtype=dtype)) for v in INIT)
            self.e = torch.nn.Parameter(torch.tensor(0.01, dtype=dtype))

        def forward(self, x, n_extra=0):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, 4 + n_extra):  # dynamic_net: a number of extra terms drawn each step
                y = y + self.e * x ** exp
            return y

        def string(self):
            return f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3"

    x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
    y = torch.sin(x)
    model = Polynomial3()
    criterion = torch.nn.MSELoss(reduction="sum")
    momentum = 0.9 if dynamic is not None else 0
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-7 if dynamic is not None else 1e-5, momentum=momentum)
    losses = []
    for t in range(steps):
        y_pred = model(x, 0 if dynamic is None else int(dynamic[t]))
        loss = criterion(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses + [model.string()]


@pytest.mark.parametrize("name", ["float64", "float32"])
def test_polynomial_autograd(name):
    ours, theirs = polynomial_autograd(taugrad, getattr(taugrad, name)), polynomial_autograd(torch, getattr(torch, name))
    assert_close_steps(ours, theirs, name)


def test_polynomial_custom_function():
    ours = polynomial_custom_function(taugrad, taugrad.float64)
    assert_close_steps(ours, polynomial_custom_function(torch, torch.float64), "float64")


@pytest.mark.parametrize("optimizer_name", [None, "RMSprop"])
def test_polynomial_nn_and_optim(optimizer_name):
    torch.manual_seed(0)
    state = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)).double().state_dict()
    ours = polynomial_nn(taugrad, taugrad.float64, to_taugrad_state(state), optimizer_name)
    assert_close_steps(ours, polynomial_nn(torch, torch.float64, state, optimizer_name), "float64")


@pytest.mark.parametrize("dynamic", [None, np.random.default_rng(1).integers(0, 3, 30)])
def test_polynomial_module_and_dynamic_net(dynamic):
    ours, theirs = polynomial_module(taugrad, taugrad.float64, dynamic=dynamic), polynomial_module(
        torch, torch.float64, dynamic=dynamic)
    assert ours[-1].replace(" ", "")[:12] == theirs[-1].replace(" ", "")[:12]
    assert_close_steps(ours[:-1], theirs[:-1], "float64")

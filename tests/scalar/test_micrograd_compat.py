"""Lecture and micrograd code runs unchanged on taugrad (only the import differs)."""
from __future__ import annotations

import math
import random

import micrograd.engine
import micrograd.nn
import pytest

from taugrad import Value
from taugrad.scalar import nn
from taugrad.scalar.moons import load_moons, train_step


def test_lecture_neuron_with_labels_and_manual_backward():
    # the lecture's single neuron: inputs x1, x2, weights w1, w2, bias b, tanh output
    x1 = Value(2.0, label="x1")
    x2 = Value(0.0, label="x2")
    w1 = Value(-3.0, label="w1")
    w2 = Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    x1w1 = x1 * w1; x1w1.label = "x1*w1"
    x2w2 = x2 * w2; x2w2.label = "x2*w2"
    x1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = "x1*w1 + x2*w2"
    n = x1w1x2w2 + b; n.label = "n"
    o = n.tanh(); o.label = "o"
    # by hand, node by node, as in the lecture
    o.grad = 1.0
    o._backward()
    n._backward()
    b._backward()
    x1w1x2w2._backward()
    x2w2._backward()
    x1w1._backward()
    manual = [x1.grad, w1.grad, x2.grad, w2.grad]
    assert manual == pytest.approx([-1.5, 1.0, 0.5, 0.0], abs=1e-6)
    for v in (x1, x2, w1, w2, b):
        v.grad = 0.0
    o.backward()
    assert [x1.grad, w1.grad, x2.grad, w2.grad] == pytest.approx(manual, abs=1e-12)
    assert o._op == "tanh" and n in o._prev


def test_lecture_tanh_from_exp_and_division():
    x = Value(0.8814)
    e = (2 * x).exp()
    o = (e - 1) / (e + 1)
    o.backward()
    assert o.data == pytest.approx(math.tanh(0.8814))
    assert x.grad == pytest.approx(1 - math.tanh(0.8814) ** 2)


def test_custom_op_written_micrograd_style():
    # user code that adds an op the micrograd way: out._backward = closure
    def cube(self):
        out = Value(self.data**3, (self,), "cube")

        def _backward():
            self.grad += 3 * self.data**2 * out.grad

        out._backward = _backward
        return out

    x = Value(2.0)
    y = cube(x) * 2
    y.backward()
    assert x.grad == 24.0


@pytest.mark.parametrize("fused", [True, False])
def test_mlp_has_micrograd_shape_and_behaviour(fused):
    random.seed(0)
    ours = nn.MLP(3, [4, 4, 1], fused=fused)
    random.seed(0)
    theirs = micrograd.nn.MLP(3, [4, 4, 1])
    assert len(ours.parameters()) == len(theirs.parameters()) == 41
    assert [p.data for p in ours.parameters()] == [p.data for p in theirs.parameters()]
    assert repr(ours) == repr(theirs)
    x = [2.0, 3.0, -1.0]
    out, ref = ours(x), theirs(x)
    assert isinstance(out, Value)  # a one-output layer returns a Value
    assert out.data == pytest.approx(ref.data, rel=1e-12)
    out.backward()
    ref.backward()
    assert [p.grad for p in ours.parameters()] == pytest.approx([p.grad for p in theirs.parameters()], rel=1e-9, abs=1e-12)
    ours.zero_grad()
    assert all(p.grad == 0 for p in ours.parameters())


def test_layer_with_several_outputs_returns_a_list():
    layer = nn.Layer(2, 3)
    out = layer([1.0, 2.0])
    assert isinstance(out, list) and len(out) == 3


def test_tanh_neurons_as_in_the_lecture():
    random.seed(1)
    model = nn.MLP(3, [4, 4, 1], nonlin="tanh")
    granular = nn.MLP(3, [4, 4, 1], nonlin="tanh", fused=False)
    for p, q in zip(model.parameters(), granular.parameters()):
        q.data = p.data
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    losses = []
    for net in (model, granular):
        loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, [net(x) for x in xs]))
        loss.backward()
        losses.append(loss.data)
        assert -1 < net(xs[0]).data < 1  # tanh on the last layer too
    assert losses[0] == pytest.approx(losses[1], rel=1e-12)
    assert [p.grad for p in model.parameters()] == pytest.approx([q.grad for q in granular.parameters()], rel=1e-9, abs=1e-12)
    assert repr(model.layers[0].neurons[0]) == "TanhNeuron(3)"


def test_bad_nonlin_and_wrong_input_length():
    with pytest.raises(ValueError, match="nonlin"):
        nn.Neuron(2, nonlin="swish")
    with pytest.raises(ValueError, match="expects 2 inputs, got 3"):
        nn.MLP(2, [3, 1])([1.0, 2.0, 3.0])


def test_moons_loss_curve_equals_micrograd():
    X, y = load_moons()
    random.seed(1337)
    ours = nn.MLP(2, [16, 16, 1])
    random.seed(1337)
    theirs = micrograd.nn.MLP(2, [16, 16, 1])
    for k in range(3):
        ours_loss, ours_acc = train_step(ours, X, y, k)
        their_loss, their_acc = train_step(theirs, X, y, k, value=micrograd.engine.Value)
        assert ours_loss == pytest.approx(their_loss, rel=1e-10)
        assert ours_acc == their_acc


def test_moons_demo_reaches_full_training_accuracy():
    X, y = load_moons()
    random.seed(1337)
    model = nn.MLP(2, [16, 16, 1])
    history = [train_step(model, X, y, k) for k in range(100)]
    assert history[-1][1] == 1.0
    assert history[-1][0] < history[0][0] / 10


def test_moons_points_are_scikit_learns():
    import numpy as np
    from sklearn.datasets import make_moons

    for n, seed in ((100, 1337), (7, 0), (250, 42)):
        np.random.seed(seed)
        want_X, want_y = make_moons(n_samples=n, noise=0.1)
        X, y = load_moons(n_samples=n, noise=0.1, seed=seed)
        assert np.array_equal(np.array(X), want_X)
        assert y == [int(v) * 2 - 1 for v in want_y]

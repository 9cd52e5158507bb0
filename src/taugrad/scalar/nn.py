"""micrograd's neural-network library on taugrad's ``Value``.

Same signatures and behaviour as ``micrograd.nn``: ``Neuron(nin, nonlin=True)``,
``Layer(nin, nout, **kwargs)``, ``MLP(nin, nouts)`` with ReLU on every layer but
the last, ``parameters()``, ``zero_grad()``, weights drawn from
``random.uniform(-1, 1)`` (so ``random.seed`` reproduces micrograd's network) and
a one-output layer returning a ``Value``.

Two additions:

* ``nonlin='tanh'`` neurons, as in the lecture code; ``MLP(nin, nouts,
  nonlin='tanh')`` puts tanh on every layer, the last included, like the lecture's MLP.
* ``fused=True`` (default) computes each neuron as one graph node
  (:mod:`taugrad.scalar.fused`), many times faster; ``fused=False`` builds
  micrograd's granular graph of ``*`` and ``+`` nodes, for tracing and drawing.
"""
from __future__ import annotations

import random
from typing import List, Sequence, Union

from taugrad.scalar import fused
from taugrad.scalar.value import Value

Nonlin = Union[bool, str]


def _activation(nonlin: Nonlin) -> str:
    if nonlin is True or nonlin == "relu":
        return fused.RELU
    if nonlin is False or nonlin == "linear":
        return fused.LINEAR
    if nonlin == "tanh":
        return fused.TANH
    raise ValueError(f"nonlin must be True/'relu', False/'linear' or 'tanh', got {nonlin!r}")


def _as_values(x: Sequence) -> List[Value]:
    return [xi if isinstance(xi, Value) else Value(xi) for xi in x]


class Module:
    """Base class: ``parameters()`` and ``zero_grad()``."""

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> List[Value]:
        return []


class Neuron(Module):
    """``act(b + sum_i w_i * x_i)`` with ``act`` ReLU (``nonlin=True``), tanh or identity."""

    def __init__(self, nin: int, nonlin: Nonlin = True, fused: bool = True):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.activation = _activation(nonlin)
        self.nonlin = nonlin
        self.fused = fused

    def __call__(self, x: Sequence) -> Value:
        if len(x) != len(self.w):
            raise ValueError(f"Neuron expects {len(self.w)} inputs, got {len(x)}")
        if self.fused:
            xs = _as_values(x)
            return fused.neuron(self.b, self.w, xs, [xi.data for xi in xs], self.activation)
        return self._granular(x)

    def _granular(self, x: Sequence) -> Value:
        """micrograd's graph: one ``*`` and one ``+`` node per input, then the activation."""
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        if self.activation == fused.RELU:
            return act.relu()
        if self.activation == fused.TANH:
            return act.tanh()
        return act

    def parameters(self) -> List[Value]:
        return self.w + [self.b]

    def __repr__(self) -> str:
        kind = {fused.RELU: "ReLU", fused.TANH: "Tanh", fused.LINEAR: "Linear"}[self.activation]
        return f"{kind}Neuron({len(self.w)})"


class Layer(Module):
    """``nout`` neurons reading the same inputs."""

    def __init__(self, nin: int, nout: int, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x: Sequence) -> Union[Value, List[Value]]:
        first = self.neurons[0]
        if first.fused and all(n.fused for n in self.neurons):
            if len(x) != len(first.w):
                raise ValueError(f"Layer expects {len(first.w)} inputs, got {len(x)}")
            xs = _as_values(x)
            xd = [xi.data for xi in xs]  # read the inputs once for all neurons
            out = [fused.neuron(n.b, n.w, xs, xd, n.activation) for n in self.neurons]
        else:
            out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self) -> List[Value]:
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """Layers of sizes ``nin -> nouts[0] -> ... -> nouts[-1]``.

    ``nonlin=True`` (micrograd): ReLU on every layer but the last, which is linear.
    ``nonlin='tanh'`` (lecture): tanh on every layer, the last included.
    """

    def __init__(self, nin: int, nouts: List[int], nonlin: Nonlin = True, fused: bool = True):
        sizes = [nin] + list(nouts)
        tanh_everywhere = nonlin == "tanh"
        self.layers = [
            Layer(sizes[i], sizes[i + 1], nonlin=nonlin if tanh_everywhere or i != len(nouts) - 1 else False, fused=fused)
            for i in range(len(nouts))
        ]

    def __call__(self, x: Sequence) -> Union[Value, List[Value]]:
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self) -> List[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"

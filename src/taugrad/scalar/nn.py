"""micrograd's neural-network library on taugrad's ``Value``.

Same signatures and behaviour as ``micrograd.nn``: ``Neuron(nin, nonlin=True)``,
``Layer(nin, nout, **kwargs)``, ``MLP(nin, nouts)`` with ReLU on every layer but
the last, ``parameters()``, ``zero_grad()``, weights drawn from
``random.uniform(-1, 1)`` (so ``random.seed`` reproduces micrograd's network) and
a one-output layer returning a ``Value``.

Three additions:

* ``nonlin='tanh'`` neurons, as in the lecture code; ``MLP(nin, nouts,
  nonlin='tanh')`` puts tanh on every layer, the last included, like the lecture's MLP.
* By default the graph is the lecture's: one ``*`` and one ``+`` node per input,
  then the activation, exactly micrograd's.  ``fused=True`` computes each neuron
  as one graph node instead (:mod:`taugrad.scalar.fused`): the same numbers,
  many times faster, for training rather than drawing.
* ``value=MyValue`` builds the network from another scalar class, such as the
  one a learner writes in the chapter's exercise 5 (it needs ``+``, ``*``,
  ``relu()`` or ``tanh()`` and ``backward()``; a number on the left is never
  used): ``MLP(2, [16, 16, 1], value=MyValue)``.
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


def _as_values(x: Sequence, value: type = Value) -> list:
    return [xi if isinstance(xi, value) else value(xi) for xi in x]


def _check_value(value: type, fused_graph: bool) -> None:
    if not isinstance(value, type):
        raise TypeError(f"value must be a scalar class such as taugrad.Value, got {value!r}")
    if fused_graph and value is not Value:
        raise ValueError(f"fused=True needs taugrad's Value (its fused neuron node); {value.__name__} builds the "
                         f"granular graph: leave fused=False")


class Module:
    """Base class: ``parameters()`` and ``zero_grad()``."""

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> List[Value]:
        return []


class Neuron(Module):
    """``act(b + sum_i w_i * x_i)`` with ``act`` ReLU (``nonlin=True``), tanh or identity.

    ``fused=False`` (default): micrograd's graph of ``*`` and ``+`` nodes;
    ``fused=True``: one node per neuron (taugrad's ``Value`` only).  ``value``:
    the scalar class of the weights and of the graph.
    """

    def __init__(self, nin: int, nonlin: Nonlin = True, fused: bool = False, value: type = Value):
        _check_value(value, fused)
        self.w = [value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = value(0.0)
        self.activation = _activation(nonlin)
        self.nonlin = nonlin
        self.fused = fused
        self.value = value

    def __call__(self, x: Sequence) -> Value:
        if len(x) != len(self.w):
            raise ValueError(f"Neuron expects {len(self.w)} inputs, got {len(x)}")
        if self.fused:
            xs = _as_values(x)
            return fused.neuron(self.b, self.w, xs, [xi.data for xi in xs], self.activation)
        return self._granular(_as_values(x, self.value))

    def _granular(self, x: Sequence) -> Value:
        """micrograd's graph: one ``*`` and one ``+`` node per input, then the activation.

        Summed from the bias, Values only (``b + w0*x0 + w1*x1 ...``): a class
        without ``__radd__`` works too.
        """
        act = self.b
        for wi, xi in zip(self.w, x):
            act = act + wi * xi
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
    """``nout`` neurons reading the same inputs (keyword arguments go to each :class:`Neuron`)."""

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
    """Layers of sizes ``nin -> nouts[0] -> ... -> nouts[-1]``; ``fused`` and ``value`` as for :class:`Neuron`.

    ``nonlin=True`` (micrograd): ReLU on every layer but the last, which is linear.
    ``nonlin='tanh'`` (lecture): tanh on every layer, the last included.
    """

    def __init__(self, nin: int, nouts: List[int], nonlin: Nonlin = True, fused: bool = False, value: type = Value):
        _check_value(value, fused)
        sizes = [nin] + list(nouts)
        tanh_everywhere = nonlin == "tanh"
        self.layers = [
            Layer(sizes[i], sizes[i + 1], nonlin=nonlin if tanh_everywhere or i != len(nouts) - 1 else False,
                  fused=fused, value=value)
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

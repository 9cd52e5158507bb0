"""A whole neuron as one graph node: the speed trick of ``taugrad.scalar.nn``.

micrograd builds ``act(b + w0*x0 + w1*x1 + ...)`` from ``2n + 1`` separate nodes.
The maths of the fused node is exactly the same chain of local rules, collapsed:

    s = b + sum_i w_i * x_i          (summed left to right, as micrograd does)
    out = act(s)
    g_s = act'(s) * out.grad
    b.grad += g_s;   w_i.grad += x_i * g_s;   x_i.grad += w_i * g_s

so the results equal micrograd's up to float rounding, with one node instead of
``2n + 1``.  The rules are that chain rule over the one-op definitions in
:mod:`taugrad.scalar.derivatives`, not a second copy.  Parents are stored flat
as ``(b, w_0 .. w_{n-1}, x_0 .. x_{n-1})`` so the shared traversal sees an
ordinary node.  ``nn`` modules built with
``fused=False`` produce the granular graph instead, for tracing and drawing.
"""
from __future__ import annotations

import math
from operator import mul
from typing import Sequence

from taugrad.scalar import derivatives
from taugrad.scalar.value import Value, _node

LINEAR, RELU, TANH = "linear", "relu", "tanh"


def neuron(bias: Value, weights: Sequence[Value], inputs: Sequence[Value], input_data: Sequence[float], activation: str) -> Value:
    """One node for ``activation(bias + sum(w * x))``; ``input_data[i] == inputs[i].data``."""
    s = sum(map(mul, [w.data for w in weights], input_data), bias.data)
    if activation == RELU:
        return _node(0.0 if s < 0.0 else s, (bias, *weights, *inputs), "neuron:ReLU", _relu_neuron_rule)
    if activation == TANH:
        return _node(math.tanh(s), (bias, *weights, *inputs), "neuron:tanh", _tanh_neuron_rule)
    return _node(s, (bias, *weights, *inputs), "neuron", _linear_neuron_rule)


# generated from their definitions (derivatives.LINEAR_NEURON ...): the activation's
# own term gives g_s = d out / d s * g, then the sum's and products' terms spread it
_linear_neuron_rule = derivatives.LINEAR_NEURON.rule
_relu_neuron_rule = derivatives.RELU_NEURON.rule
_tanh_neuron_rule = derivatives.TANH_NEURON.rule

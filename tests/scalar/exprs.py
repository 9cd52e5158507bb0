"""Random scalar programs with reused subexpressions, evaluated by several engines.

A program is a list of instructions ``(op, i, j)``; instruction k computes node
``n_inputs + k`` from earlier nodes ``i`` and ``j``, so later nodes can reuse any
earlier one (shared subexpressions, diamonds, ``a * a``).  Each op is written once
per engine below; every op keeps its arguments inside its domain by construction
(``log`` of ``a*a + 0.5``, ...), so finite differences are well defined.
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

# op name -> function(a, b, lib) where lib supplies relu/tanh/exp/log/sigmoid for the engine
OPS = {
    "add": lambda a, b, L: a + b,
    "sub": lambda a, b, L: a - b,
    "mul": lambda a, b, L: a * b,
    "div": lambda a, b, L: a / (b * b + 1.0),
    "rsub": lambda a, b, L: 2.0 - a,
    "rdiv": lambda a, b, L: 1.5 / (a * a + 0.5),
    "radd_rmul": lambda a, b, L: 3.0 * a + 1.0,
    "neg": lambda a, b, L: -a,
    "square": lambda a, b, L: a**2,
    "cube": lambda a, b, L: a**3,
    "rsqrt": lambda a, b, L: (a * a + 1.0) ** -0.5,
    "vpow": lambda a, b, L: (a * a + 0.5) ** L.tanh(b),
    "rpow": lambda a, b, L: 2.0 ** L.tanh(a),
    "relu": lambda a, b, L: L.relu(a),
    "tanh": lambda a, b, L: L.tanh(a),
    "exp": lambda a, b, L: L.exp(L.tanh(a)),
    "log": lambda a, b, L: L.log(a * a + 0.5),
    "sigmoid": lambda a, b, L: L.sigmoid(a),
}


class ValueLib:
    """Unary functions as methods of a taugrad/micrograd-style Value."""

    relu = staticmethod(lambda v: v.relu())
    tanh = staticmethod(lambda v: v.tanh())
    exp = staticmethod(lambda v: v.exp())
    log = staticmethod(lambda v: v.log())
    sigmoid = staticmethod(lambda v: v.sigmoid())


class FloatLib:
    """The same functions on Python floats (for finite differences)."""

    relu = staticmethod(lambda x: max(0.0, x))
    tanh = staticmethod(math.tanh)
    exp = staticmethod(math.exp)
    log = staticmethod(math.log)
    sigmoid = staticmethod(lambda x: 1.0 / (1.0 + math.exp(-x)))


class TorchLib:
    import torch as _t

    relu = staticmethod(_t.relu)
    tanh = staticmethod(_t.tanh)
    exp = staticmethod(_t.exp)
    log = staticmethod(_t.log)
    sigmoid = staticmethod(_t.sigmoid)


def run(program, inputs, lib):
    """Evaluate ``program`` on ``inputs`` (any engine); returns every node."""
    nodes = list(inputs)
    for op, i, j in program:
        nodes.append(OPS[op](nodes[i], nodes[j], lib))
    return nodes


def relu_margins(program, inputs):
    """Smallest |argument| of any relu in the program (finite differences fail near 0)."""
    nodes = list(inputs)
    margin = math.inf
    for op, i, j in program:
        if op == "relu":
            margin = min(margin, abs(nodes[i]))
        nodes.append(OPS[op](nodes[i], nodes[j], FloatLib))
    return margin


@st.composite
def programs(draw, max_inputs=4, max_len=12):
    n_inputs = draw(st.integers(1, max_inputs))
    length = draw(st.integers(1, max_len))
    program = []
    for k in range(length):
        available = n_inputs + k
        op = draw(st.sampled_from(sorted(OPS)))
        # bias towards recent nodes so the output depends on most of the program
        i = draw(st.integers(max(0, available - 4), available - 1) | st.integers(0, available - 1))
        j = draw(st.integers(0, available - 1))
        program.append((op, i, j))
    values = draw(st.lists(st.floats(-2.0, 2.0), min_size=n_inputs, max_size=n_inputs))
    return program, values

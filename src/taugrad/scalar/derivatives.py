"""The scalar engine's local derivatives, each written exactly once.

One entry per op: the gradient each parent receives, ``d out / d parent * g``
with ``g = dL / d out``, as a formula (see :mod:`taugrad.scalar.formula` for the
notation and the masks).  Everything else is built from these entries:
``Value.backward()``'s first-order rules (``add_rule`` ... in
:mod:`taugrad.scalar.value`), the ``create_graph=True`` rules of
:mod:`taugrad.scalar.higher`, the fused neurons of :mod:`taugrad.scalar.fused`
and the rule lines ``taugrad trace`` prints.  To change a derivative, change its
line here; ``tests/scalar/test_derivatives.py`` checks every entry against
finite differences and every consumer against the entry.

Each formula is written as the engine should evaluate it in float64: which is
why ``a / b`` sends ``-g * (out / b)`` to ``b`` (two IEEE divisions, never
``b * b``), and why the masked terms follow PyTorch exactly.
"""
from __future__ import annotations

from taugrad.scalar.rulegen import Derivative, Term, neuron

ADD = Derivative(
    "add_rule", "out = a + b",
    a="g",
    b="g",
    doc="d(a + b)/da = d(a + b)/db = 1: a sum passes its gradient unchanged to both terms.",
)

MUL = Derivative(
    "mul_rule", "out = a * b",
    a="b * g",
    b="a * g",
    doc="d(a b)/da = b, d(a b)/db = a: each factor gets the other factor times g.",
)

DIV = Derivative(
    "div_rule", "out = a / b",
    a="g / b",
    b="-g * (out / b)",
    doc="""d(a/b)/da = 1/b, d(a/b)/db = -a/b^2 = -(a/b)/b.

    PyTorch's float64 rules: dividing twice never squares b, so the gradient is
    finite wherever (a/b)/b is (b*b over/underflows beyond about 1e+-154).""",
)

POW_CONST = Derivative(
    "pow_const_rule", "out = a ** k", constant="k",
    a=Term("k * a ** (k - 1) * g", none_where="k == 0"),
    doc="""d(a^k)/da = k a^(k-1), for a number k.

    a^(k-1) is evaluated as the forward pass evaluates a power (sqrt for 0.5),
    so (-inf)^1.5 has PyTorch's gradient nan; for k = 0 nothing passes, as PyTorch.""",
)

POW = Derivative(
    "pow_rule", "out = a ** b",
    a=Term("b * a ** (b - 1) * g", none_where="b == 0"),
    b=Term("out * log(a) * g", zero_where="a == 0 and b >= 0"),
    doc="""d(a^b)/da = b a^(b-1), d(a^b)/db = a^b ln(a), both Values.

    As PyTorch: the base gets nothing where b = 0, and the exponent's factor
    a^b ln(a) is its limit 0 where a = 0 and b >= 0, still times g (inf g: nan).""",
)

RPOW_CONST = Derivative(
    "rpow_const_rule", "out = k ** b", constant="k",
    b=Term("out * log(k) * g", zero_where="k == 0 and b >= 0"),
    doc="d(k^b)/db = k^b ln(k), for a number k; masked as the exponent of a ** b.",
)

RELU = Derivative(
    "relu_rule", "out = relu(a)",
    a=Term("g", none_where="out <= 0"),
    doc="""d relu(a)/da = 1 where relu(a) > 0, else 0.

    As PyTorch, nothing passes where out <= 0 (not even 0 * g), and a nan out
    passes g.""",
)

TANH = Derivative(
    "tanh_rule", "out = tanh(a)",
    a="(1 - out**2) * g",
    doc="d tanh(a)/da = 1 - tanh(a)^2, from the output (math.tanh is exact even for |a| = 1e4).",
)

EXP = Derivative(
    "exp_rule", "out = exp(a)",
    a="out * g",
    doc="d e^a/da = e^a: the output itself.",
)

LOG = Derivative(
    "log_rule", "out = log(a)",
    a="g / a",
    doc="d ln(a)/da = 1/a, as an IEEE division: g / 0 is +-inf or nan.",
)

SIGMOID = Derivative(
    "sigmoid_rule", "out = sigmoid(a)",
    a="out * (1 - out) * g",
    doc="d s(a)/da = s(a) (1 - s(a)), from the output.",
)

OPS = (ADD, MUL, DIV, POW_CONST, POW, RPOW_CONST, RELU, TANH, EXP, LOG, SIGMOID)

LINEAR_NEURON = neuron(
    "_linear_neuron_rule", None, ADD, MUL,
    doc="out = b + sum_i w_i x_i:  db += g;  dw_i += x_i g;  dx_i += w_i g (the sum's and products' rules).",
)

RELU_NEURON = neuron(
    "_relu_neuron_rule", RELU, ADD, MUL,
    doc="out = relu(s), s = b + sum_i w_i x_i:  g_s = relu's term (g where out > 0), then the linear neuron's.",
)

TANH_NEURON = neuron(
    "_tanh_neuron_rule", TANH, ADD, MUL,
    doc="out = tanh(s), s = b + sum_i w_i x_i:  g_s = (1 - out^2) g, then the linear neuron's.",
)

NEURONS = (LINEAR_NEURON, RELU_NEURON, TANH_NEURON)

ALL = OPS + NEURONS
"""Every definition; ``definition.rule`` is the function a node stores in ``_rule``."""

"""taugrad.nn.init: the deterministic initializers and helpers compared exactly.

The random initializers are compared by contract in db_random.py (taugrad's stream is its own).
"""
from __future__ import annotations

from .scenarios import arr, raises, scenario

ENTRIES: list = []

NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                  "sigmoid", "tanh", "relu", "leaky_relu", "selu"]


def _param(L, *shape, key="p"):
    return L.nn.Parameter(L.root.tensor(arr(key, *shape)))


@scenario(ENTRIES, "calculate_gain", "every_nonlinearity", ("nonlinearity", "param"))
def _(L):
    gains = [L.init.calculate_gain(n) for n in NONLINEARITIES]
    return gains, L.init.calculate_gain("leaky_relu", 0.2), L.init.calculate_gain(nonlinearity="leaky_relu", param=0.3), \
        raises(lambda: L.init.calculate_gain("nope"))


@scenario(ENTRIES, "calculate_fan_in_and_fan_out", "shapes")
def _(L):
    fn = getattr(L.init, "calculate_fan_in_and_fan_out" if L.name == "taugrad" else "_calculate_fan_in_and_fan_out")
    return [fn(L.root.zeros(*shape)) for shape in [(3, 4), (5, 3, 2), (4, 2, 3, 3), (2, 2, 1, 1, 2)]], \
        raises(lambda: fn(L.root.zeros(3)))


@scenario(ENTRIES, "_calculate_fan_in_and_fan_out", "torch_private_name", ("tensor",))
def _(L):
    """torch code calls the private name (timm, lecture notebooks); taugrad offers it too."""
    return L.init._calculate_fan_in_and_fan_out(tensor=L.root.zeros(4, 2, 3, 3))


for _name, _args, _kw in [("constant_", (0.3,), {}), ("ones_", (), {}), ("zeros_", (), {})]:
    @scenario(ENTRIES, _name, "in_place_on_parameter", ("tensor",) + (("val",) if _args else ()))
    def _(L, name=_name, args=_args):
        p = _param(L, 3, 4)
        out = getattr(L.init, name)(p, *args)
        q = _param(L, 2, key="q")
        out2 = getattr(L.init, name)(tensor=q, **({"val": 1.5} if args else {}))
        return out is p, out2 is q, p, q, p.requires_grad, p.grad_fn is None


@scenario(ENTRIES, "eye_", "matrix", ("tensor",))
def _(L):
    p = _param(L, 3, 5)
    return L.init.eye_(p) is p, p, L.init.eye_(tensor=_param(L, 4, 2)), raises(lambda: L.init.eye_(L.root.zeros(2, 2, 2)))


@scenario(ENTRIES, "dirac_", "conv_weights", ("tensor", "groups"))
def _(L):
    return L.init.dirac_(_param(L, 4, 3, 3, 3)), L.init.dirac_(tensor=_param(L, 4, 2, 3), groups=2), \
        L.init.dirac_(_param(L, 2, 3, 1, 3, 3))

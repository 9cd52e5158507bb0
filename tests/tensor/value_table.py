"""Registered ops without a gradient to check: comparisons, logic, indices, in-place updates, sampling.

A row is ``ValueOp(name, fn)``: ``fn(L, x, y)`` gets two float64 tensors of
shape (3, 4) that need no grad (``y`` has no zeros) and returns a tensor (or
None when the op changes ``x`` in place, then ``x`` is compared).  It runs on
torch and on taugrad and both results must match exactly, dtype kind included.
Ops whose results are random are checked for shape, dtype and range instead
(``exact=False``): torch's random stream is not reproduced.
"""
from __future__ import annotations

from .helpers import ValueOp
from .value_table_api import API_VALUE_OPS
from .value_table_methods import METHOD_VALUE_OPS


def _in_place(method: str, *args, **kwargs):
    def fn(L, x, y):
        getattr(x, method)(*(y if a == "y" else a for a in args), **kwargs)

    return fn


def _augmented(op: str):
    def fn(L, x, y):
        if op == "+=":
            x += y
        elif op == "-=":
            x -= y
        elif op == "*=":
            x *= y
        else:
            x /= y

    return fn


def _seeded(L):
    """A generator with a fixed seed, so a random row cannot fail by chance (e.g. all draws equal)."""
    return L.Generator().manual_seed(3)


def _setitem(L, x, y):
    x[1:, ::2] = y[:2, :2]


VALUE_OPS = [
    ValueOp("sign", lambda L, x, y: x.sign()),
    ValueOp("sgn", lambda L, x, y: L.sgn(x)),
    ValueOp("sgn_", _in_place("sgn_")),
    ValueOp("asinh_", _in_place("asinh_")),
    ValueOp("acosh_", lambda L, x, y: L.acosh_(y + 1.0)),
    ValueOp("atanh_", lambda L, x, y: (x * 0).arctanh_()),  # exact values only here; atanh's own row has the rest
    ValueOp("floor", lambda L, x, y: (x * 3).floor()),
    ValueOp("ceil", lambda L, x, y: L.ceil(x * 3)),
    ValueOp("trunc", lambda L, x, y: (x * 3).trunc()),
    ValueOp("round", lambda L, x, y: L.round(x * 3, decimals=1)),
    ValueOp("float", lambda L, x, y: x.float()),
    ValueOp("half", lambda L, x, y: x.half()),
    ValueOp("long", lambda L, x, y: (x * 10).long()),
    ValueOp("int", lambda L, x, y: (x * 10).int()),
    ValueOp("bool", lambda L, x, y: x.clamp(min=0).bool()),
    ValueOp("type", lambda L, x, y: x.type(L.float16)),
    ValueOp("lt", lambda L, x, y: x < y),
    ValueOp("le", lambda L, x, y: x <= 0.5),
    ValueOp("gt", lambda L, x, y: x > y),
    ValueOp("ge", lambda L, x, y: x >= 0.0),
    ValueOp("eq", lambda L, x, y: x == x.clamp(max=0.0)),
    ValueOp("ne", lambda L, x, y: x != x.clamp(max=0.0)),
    ValueOp("logical_and", lambda L, x, y: (x > 0).logical_and(y > 0)),
    ValueOp("logical_or", lambda L, x, y: (x > 0).logical_or(y > 0)),
    ValueOp("logical_xor", lambda L, x, y: (x > 0).logical_xor(y > 0)),
    ValueOp("logical_not", lambda L, x, y: L.logical_not(x.clamp(min=0))),
    ValueOp("bitwise_not", lambda L, x, y: (~(x > 0)).long() * 100 + (x * 10).long().bitwise_not()),
    ValueOp("bitwise_and", lambda L, x, y: (x > 0) & (y > 0)),
    ValueOp("bitwise_or", lambda L, x, y: (x > 0) | (y > 0)),
    ValueOp("bitwise_xor", lambda L, x, y: (x > 0) ^ (y > 0)),
    ValueOp("argmax", lambda L, x, y: x.argmax(dim=1)),
    ValueOp("argmin", lambda L, x, y: x.argmin()),
    ValueOp("all", lambda L, x, y: (x > -1).all()),
    ValueOp("any", lambda L, x, y: (x > 1).any(dim=0)),
    ValueOp("setitem", _setitem),
    ValueOp("add_", _in_place("add_", "y", alpha=2.0)),
    ValueOp("sub_", _in_place("sub_", "y")),
    ValueOp("mul_", _in_place("mul_", "y")),
    ValueOp("div_", _in_place("div_", "y")),
    ValueOp("iadd", _augmented("+=")),
    ValueOp("isub", _augmented("-=")),
    ValueOp("imul", _augmented("*=")),
    ValueOp("itruediv", _augmented("/=")),
    ValueOp("fill_", _in_place("fill_", 1.5)),
    ValueOp("zero_", _in_place("zero_")),
    ValueOp("copy_", _in_place("copy_", "y")),
    ValueOp("clamp_", _in_place("clamp_", -0.5, 0.5)),
    ValueOp("dropout", lambda L, x, y: L.F.dropout(x, p=0.3, training=False) + L.F.dropout(x, p=1.0)),
    ValueOp("normal_", _in_place("normal_", 2.0, 0.5), exact=False),
    ValueOp("uniform_", _in_place("uniform_", -1.0, 1.0), exact=False),
    ValueOp("to", lambda L, x, y: x.to("cpu", L.float32)),
    ValueOp("to_other_tensor", lambda L, x, y: x.to(y.float(), copy=True)),
    ValueOp("cpu", lambda L, x, y: x.cpu()),
    ValueOp("multinomial", lambda L, x, y: x.abs().multinomial(3, generator=_seeded(L)), exact=False),
    ValueOp("multinomial_replacement", lambda L, x, y: L.multinomial(x.abs()[0], 8, True, generator=_seeded(L)),
            exact=False),
    ValueOp("bernoulli", lambda L, x, y: L.bernoulli(x.abs() / 2 + 0.25, generator=_seeded(L)), exact=False),
    ValueOp("poisson", lambda L, x, y: L.poisson(x.abs() * 5, generator=_seeded(L)), exact=False),
    ValueOp("normal", lambda L, x, y: L.normal(x, y.abs(), generator=_seeded(L)), exact=False),
    ValueOp("random_", lambda L, x, y: x.random_(2, 10, generator=_seeded(L)), exact=False),
    ValueOp("bernoulli_", lambda L, x, y: x.bernoulli_(0.5, generator=_seeded(L)), exact=False),
    ValueOp("exponential_", lambda L, x, y: x.exponential_(2.0, generator=_seeded(L)), exact=False),
]

VALUE_OPS += API_VALUE_OPS  # sorting, counting, testing values (value_table_api.py)
VALUE_OPS += METHOD_VALUE_OPS  # new_*, nonzero, floor_divide... (value_table_methods.py)

#: registered ops that no table row calls directly, with where they are tested instead
COVERED_ELSEWHERE = {
    "index_scatter": "the backward of getitem on Tensors: tests/tensor_higher (second order of getitem)",
    "index_numpy": "the rules' NumPy-order indexing on Tensors: tests/tensor_higher (second order of gather, setitem)",
    "cuda": "moves to the CUDA backend: tests/backend/test_devices.py (fake device) and the cuda-marked GPU suite",
    "get_device": "a device index, not a tensor: tests/backend/test_devices.py",
    "device": "a property, not a tensor: tests/tensor/test_torch_device.py",
    "is_cuda": "a property, not a tensor: tests/tensor/test_torch_device.py",
    "is_cpu": "a property, not a tensor: tests/tensor/test_torch_device.py",
    "is_other_backend": "properties, not tensors: tests/plumbing/test_tensor_reach.py",
    "is_view_flag": "flags, not tensors: tests/plumbing/test_tensor_reach.py",
    "is_signed": "a flag, not a tensor: tests/plumbing/test_tensor_reach.py",
    "is_same_size": "a flag, not a tensor: tests/plumbing/test_tensor_reach.py",
    "is_nonzero": "a flag, not a tensor: tests/plumbing/test_tensor_reach.py",
    "share_memory_": "moves the storage between processes: tests/plumbing/test_multiprocessing.py",
    "is_shared": "a flag, not a tensor: tests/plumbing/test_multiprocessing.py",
}
# torch's in-place methods built from an out-of-place op (values and gradients against torch for each)
COVERED_ELSEWHERE.update({name: "in place through its out-of-place op: tests/plumbing/test_inplace_variants.py"
                          for name in (
    "sin_", "cos_", "tan_", "asin_", "acos_", "atan_", "sinh_", "cosh_", "atan2_", "hypot_", "exp2_", "expm1_",
    "log2_", "log10_", "log1p_", "rsqrt_", "reciprocal_", "erf_", "xlogy_", "lerp_", "deg2rad_", "rad2deg_",
    "frac_", "square_", "ceil_", "trunc_", "sign_", "pow_", "fmod_", "remainder_", "floor_divide_", "nan_to_num_",
    "divide_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_", "logical_and_", "logical_or_",
    "logical_xor_", "logical_not_", "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "tril_", "triu_", "cumsum_",
    "cumprod_", "addmm_", "unsqueeze_", "squeeze_", "t_", "transpose_")})

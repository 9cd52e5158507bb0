"""The ops without a gradient on the device equal the CPU: tests, casts, integer arithmetic, sorting, sampling.

The op table's seam test runs every differentiable op; these are the others
(a comparison, ``argmax``, ``unique``, a random draw, an in-place update), each
with code of its own that only a run on the device backend can show free of
NumPy calls.  Inputs hold nan and infinities where an op must treat them.
Random draws are compared by value: every device draws the host's stream from
the same seed.
"""
import numpy as np
import pytest

import taugrad
import taugrad.nn.functional as F


def _seeded(make):
    """``make`` run right after seeding the default generators (so both devices draw the same numbers)."""
    def run(x, i, b, d):
        taugrad.manual_seed(5)
        return make(x, i, b, d)
    return run


def _on(d, values, **kwargs):
    return taugrad.tensor(values, device=d, **kwargs)


#: name -> f(x, i, b, device): x float64 (3, 4) with nan/inf, i int64 (3, 4) with negatives, b = x > 0
OPS = {
    # tests of values
    "isnan": lambda x, i, b, d: x.isnan(),
    "isinf": lambda x, i, b, d: taugrad.isinf(x),
    "isfinite": lambda x, i, b, d: x.isfinite(),
    "isposinf": lambda x, i, b, d: taugrad.isposinf(x),
    "isneginf": lambda x, i, b, d: taugrad.isneginf(x),
    "signbit": lambda x, i, b, d: taugrad.signbit(x),
    "isclose": lambda x, i, b, d: taugrad.isclose(x, x + 1e-9, equal_nan=True),
    "allclose": lambda x, i, b, d: taugrad.allclose(x, x, equal_nan=True),
    "equal": lambda x, i, b, d: taugrad.equal(i, i.clone()),
    "isin": lambda x, i, b, d: taugrad.isin(i, _on(d, [1, 2])),
    "eq": lambda x, i, b, d: x == x,
    "logical_and": lambda x, i, b, d: taugrad.logical_and(b, i > 0),
    "logical_or": lambda x, i, b, d: taugrad.logical_or(b, i > 0),
    "logical_xor": lambda x, i, b, d: taugrad.logical_xor(b, i > 0),
    "logical_not": lambda x, i, b, d: taugrad.logical_not(b),
    # rounding and casts
    "sign": lambda x, i, b, d: x.sign(),
    "floor": lambda x, i, b, d: x.floor(),
    "ceil": lambda x, i, b, d: x.ceil(),
    "trunc": lambda x, i, b, d: x.trunc(),
    "round": lambda x, i, b, d: (x * 7).round(decimals=1),
    "nan_to_num": lambda x, i, b, d: x.nan_to_num(),
    "float": lambda x, i, b, d: i.float(),
    "half": lambda x, i, b, d: x.half(),
    "long": lambda x, i, b, d: x.nan_to_num(posinf=9.0, neginf=-9.0).long(),
    "int": lambda x, i, b, d: i.int(),
    "bool": lambda x, i, b, d: i.bool(),
    "type": lambda x, i, b, d: x.type(taugrad.float32),
    # integer arithmetic
    "floor_divide": lambda x, i, b, d: taugrad.floor_divide(i, 2),
    "int_floordiv": lambda x, i, b, d: i // -3,
    "remainder": lambda x, i, b, d: i % 3,
    "fmod": lambda x, i, b, d: taugrad.fmod(i, 3),
    "true_divide_ints": lambda x, i, b, d: i / 2,
    "bitwise_not": lambda x, i, b, d: taugrad.bitwise_not(i),
    "bitwise_and_or_xor": lambda x, i, b, d: (i & 3) | (i ^ 5),
    "int_power": lambda x, i, b, d: i ** 2,
    "int_clamp": lambda x, i, b, d: i.clamp(-1, 2),
    "int_maximum": lambda x, i, b, d: taugrad.maximum(i, i.flip(0)),
    "int_sum": lambda x, i, b, d: i.sum(),
    "bool_sum": lambda x, i, b, d: b.sum(dim=1),
    "int_prod": lambda x, i, b, d: i.prod(dim=1),
    "int_cumsum": lambda x, i, b, d: i.cumsum(1),
    "one_hot": lambda x, i, b, d: F.one_hot(i.abs(), 5),
    "bincount": lambda x, i, b, d: taugrad.bincount(i.abs().flatten()),
    # reductions to indices and booleans
    "argmax": lambda x, i, b, d: i.argmax(),
    "argmax_dim": lambda x, i, b, d: x.argmax(dim=1),
    "argmin_keepdim": lambda x, i, b, d: x.argmin(dim=0, keepdim=True),
    "all": lambda x, i, b, d: b.all(),
    "all_dim": lambda x, i, b, d: b.all(dim=1),
    "any_dim": lambda x, i, b, d: b.any(dim=0),
    "count_nonzero": lambda x, i, b, d: taugrad.count_nonzero(i, dim=1),
    "max_dim": lambda x, i, b, d: i.max(dim=1),
    # sorting and searching
    "sort": lambda x, i, b, d: taugrad.sort(i, dim=1, stable=True),
    "argsort": lambda x, i, b, d: i.argsort(dim=1, stable=True),
    "unique": lambda x, i, b, d: taugrad.unique(i, return_inverse=True, return_counts=True),
    "unique_dim": lambda x, i, b, d: taugrad.unique(i, dim=0),
    "searchsorted": lambda x, i, b, d: taugrad.searchsorted(_on(d, [-1.0, 0.0, 1.0]), x),
    "bucketize": lambda x, i, b, d: taugrad.bucketize(x, _on(d, [-1.0, 0.0, 1.0]), right=True),
    "histc": lambda x, i, b, d: taugrad.histc(x.nan_to_num(), bins=4, min=-2, max=2),
    "histogram": lambda x, i, b, d: taugrad.histogram(x.nan_to_num().clamp(-2, 2), bins=4),
    # results whose size depends on the values
    "nonzero": lambda x, i, b, d: i.nonzero(),
    "nonzero_tuple": lambda x, i, b, d: i.nonzero(as_tuple=True),
    "argwhere": lambda x, i, b, d: taugrad.argwhere(i),
    "where_one_argument": lambda x, i, b, d: taugrad.where(b),
    "masked_select": lambda x, i, b, d: x.masked_select(b),
    "repeat_interleave": lambda x, i, b, d: taugrad.repeat_interleave(_on(d, [1, 2]), _on(d, [2, 3])),
    # creation on a tensor's device
    "full_like": lambda x, i, b, d: taugrad.full_like(x, 3.0),
    "new_zeros": lambda x, i, b, d: x.new_zeros(2, 3),
    "new_ones": lambda x, i, b, d: i.new_ones((2,)),
    "new_full": lambda x, i, b, d: x.new_full((2,), 7),
    "new_tensor": lambda x, i, b, d: x.new_tensor([1, 2]),
    "scalar_tensor": lambda x, i, b, d: taugrad.scalar_tensor(3.0, device=d),
    "tril_indices": lambda x, i, b, d: taugrad.tril_indices(3, 3, device=d),
    "triu_indices": lambda x, i, b, d: taugrad.triu_indices(3, 4, 1, device=d),
    "linspace": lambda x, i, b, d: taugrad.linspace(0, 1, 5, device=d),
    "logspace": lambda x, i, b, d: taugrad.logspace(0, 1, 5, device=d),
    "eye": lambda x, i, b, d: taugrad.eye(3, 2, device=d),
    "meshgrid": lambda x, i, b, d: taugrad.meshgrid(taugrad.arange(3, device=d), taugrad.arange(2, device=d),
                                                    indexing="ij"),
    # in-place updates
    "sub_mul_div_": lambda x, i, b, d: x.clone().sub_(1).mul_(2).div_(4),
    "iadd": lambda x, i, b, d: x.clone().__iadd__(i),
    "round_": lambda x, i, b, d: (x * 3).round_(),
    "fill_": lambda x, i, b, d: x.clone().fill_(2),
    "zero_": lambda x, i, b, d: x.clone().zero_(),
    "copy_": lambda x, i, b, d: x.clone().copy_(i),
    "masked_fill_": lambda x, i, b, d: x.clone().masked_fill_(b, 0),
    "clamp_": lambda x, i, b, d: x.clone().clamp_(0, 1),
    # random draws, the same seed on both devices
    "bernoulli": _seeded(lambda x, i, b, d: taugrad.bernoulli(taugrad.full((3, 4), 0.5, device=d))),
    "poisson": _seeded(lambda x, i, b, d: taugrad.poisson(taugrad.full((3, 4), 2.0, device=d))),
    "normal_": _seeded(lambda x, i, b, d: x.clone().normal_(1.0, 2.0)),
    "uniform_": _seeded(lambda x, i, b, d: x.clone().uniform_(-1, 1)),
    "random_": _seeded(lambda x, i, b, d: i.clone().random_(0, 5)),
    "bernoulli_": _seeded(lambda x, i, b, d: x.clone().bernoulli_(0.3)),
    "exponential_": _seeded(lambda x, i, b, d: x.clone().exponential_()),
    "randint_like": _seeded(lambda x, i, b, d: taugrad.randint_like(x, 5)),
    "randperm": _seeded(lambda x, i, b, d: taugrad.randperm(5, device=d)),
    "multinomial": _seeded(lambda x, i, b, d: taugrad.multinomial(_on(d, [0.1, 0.5, 0.4]), 4, replacement=True)),
    "multinomial_without_replacement": _seeded(
        lambda x, i, b, d: taugrad.multinomial(_on(d, [[0.1, 0.5, 0.4]]), 2)),
    "dropout": _seeded(lambda x, i, b, d: F.dropout(x.nan_to_num(posinf=3.0, neginf=-3.0), 0.5)),
}


def _inputs(device):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4))
    x[0, 0], x[1, 1], x[2, 2] = np.nan, np.inf, -np.inf
    i = rng.integers(-3, 5, size=(3, 4))
    xt, it = taugrad.tensor(x, device=device), taugrad.tensor(i, device=device)
    return xt, it, xt > 0, device


def _host(result, device: str):
    """The result's values on the host, each tensor checked to be on ``device``; tuples element by element."""
    if isinstance(result, (tuple, list)):
        return [_host(r, device) for r in result]
    if isinstance(result, taugrad.Tensor):
        assert result.device.type == device, f"result on {result.device}, expected {device}"
        return result.cpu().numpy()
    return result  # a Python bool (allclose, equal)


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_without_gradient_on_the_device_equals_the_cpu(device_backend, name):
    _, tolerance = device_backend
    want = _host(OPS[name](*_inputs("cpu")), "cpu")
    got = _host(OPS[name](*_inputs("cuda")), "cuda")
    wanted = want if isinstance(want, list) else [want]
    gotten = got if isinstance(got, list) else [got]
    assert len(gotten) == len(wanted), name
    for k, (g, w) in enumerate(zip(gotten, wanted)):
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype and g.shape == w.shape, f"{name}, result {k}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        if tolerance is None or not (isinstance(w, np.ndarray) and w.dtype.kind == "f"):
            np.testing.assert_array_equal(g, w, err_msg=f"{name}, result {k}")
        else:
            np.testing.assert_allclose(g, w, err_msg=f"{name}, result {k}", **tolerance)

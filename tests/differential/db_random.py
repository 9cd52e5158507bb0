"""Random callables compared by contract: taugrad's random stream is its own, so the numbers differ.

A case draws once per library under ``manual_seed``; ``props`` are exact properties (shape, range,
which elements are zero, a permutation) that must equal torch's; ``stats`` are sample statistics
that must agree with torch's within ``tol`` (the draws are large enough that 5 standard errors
stay below it). taugrad must also repeat itself under the same seed and differ under another.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from .common import to_numpy


@dataclasses.dataclass
class RandomCase:
    family: str
    name: str
    id: str
    draw: Callable[[Any, int], Any]
    props: Callable[[Any], Any] = lambda v: None
    stats: Callable[[Any], dict] = lambda v: {}
    tol: float = 0.05
    keywords: tuple = ()


ENTRIES: list = []


def case(family, name, id, props=None, stats=None, tol=0.05, keywords=()):
    def register(draw):
        ENTRIES.append(RandomCase(family, name, id, draw, props or (lambda v: None), stats or (lambda v: {}), tol, keywords))
        return draw
    return register


def _moments(v, bounded=True):
    """Scale-free moments: the mean in units of the spread, the log of the spread (a relative
    difference), and for bounded distributions the extremes in units of the spread."""
    a = np.asarray(v, dtype=float)
    s = a.std()
    out = {"mean/std": a.mean() / s, "log std": np.log(s)}
    if bounded:
        out.update({"min/std": a.min() / s, "max/std": a.max() / s})
    return out


def _init(L, name, shape, seed, *args, **kwargs):
    L.root.manual_seed(seed)
    t = L.nn.Parameter(L.root.zeros(*shape, dtype=L.root.float64))
    out = getattr(L.init, name)(t, *args, **kwargs)
    return {"same_object": out is t, "shape": tuple(t.shape), "values": to_numpy(t).copy()}


def _init_props(v):
    return v["same_object"], v["shape"]


for _name, _args, _kw, _kws, _bounded in [
    ("uniform_", (-0.5, 2.0), {}, ("a", "b"), True),
    ("normal_", (), dict(mean=0.3, std=2.0), ("mean", "std"), False),
    ("trunc_normal_", (), dict(mean=0.1, std=1.0, a=-1.0, b=1.5), ("mean", "std", "a", "b"), True),
    ("xavier_uniform_", (), dict(gain=2.0), ("gain",), True),
    ("xavier_normal_", (), dict(gain=0.5), ("gain",), False),
    ("kaiming_uniform_", (), dict(a=0.1, mode="fan_out", nonlinearity="leaky_relu"), ("a", "mode", "nonlinearity"), True),
    ("kaiming_normal_", (), dict(mode="fan_in", nonlinearity="relu"), ("mode", "nonlinearity"), False),
]:
    @case("init", _name, "distribution", props=_init_props, stats=lambda v, b=_bounded: _moments(v["values"], b),
          keywords=("tensor",) + _kws)
    def _(L, seed, name=_name, args=_args, kw=_kw):
        return _init(L, name, (200, 120), seed, *args, **kw)


@case("init", "orthogonal_", "orthonormal_rows",
      props=lambda v: (v["same_object"], v["shape"], np.round(v["gram"], 10).tolist()), keywords=("tensor", "gain"))
def _(L, seed):
    v = _init(L, "orthogonal_", (4, 6), seed, gain=1.5)
    v["gram"] = v["values"] @ v["values"].T
    return v


def _sparse_props(v):
    values = v["values"]
    return v["same_object"], v["shape"], (values == 0).sum(axis=0).tolist()


@case("init", "sparse_", "zeros_per_column", props=_sparse_props, stats=lambda v: _moments(v["values"][v["values"] != 0], False),
      keywords=("tensor", "sparsity", "std"))
def _(L, seed):
    return _init(L, "sparse_", (200, 30), seed, 0.3, std=0.5)


@case("init", "kaiming_uniform_", "conv_weight_generator", props=_init_props, stats=lambda v: _moments(v["values"]),
      keywords=("generator",))
def _(L, seed):
    g = L.root.Generator().manual_seed(seed)
    t = L.nn.Parameter(L.root.zeros(64, 16, 5, 5, dtype=L.root.float64))
    out = L.init.kaiming_uniform_(t, generator=g)
    return {"same_object": out is t, "shape": tuple(t.shape), "values": to_numpy(t).copy()}


# ----- dropout and rrelu ---------------------------------------------------------------------------

X = np.random.default_rng(11).uniform(0.5, 1.5, size=(100, 200))


def _dropout_props(v):
    out, x, p = v["out"], v["x"], v["p"]
    kept = out != 0
    return bool(np.allclose(out[kept], x[kept] / (1 - p), rtol=1e-12)), bool(np.allclose(v["grad"], kept / (1 - p)))


@case("functional", "dropout", "training", props=_dropout_props, stats=lambda v: {"zero_fraction": np.mean(v["out"] == 0)},
      keywords=("p", "training"))
def _(L, seed):
    L.root.manual_seed(seed)
    x = L.root.tensor(X, requires_grad=True)
    out = L.F.dropout(x, p=0.3, training=True)
    out.sum().backward()
    return {"out": to_numpy(out).copy(), "x": X, "p": 0.3, "grad": to_numpy(x.grad).copy()}


@case("modules", "Dropout", "training", props=_dropout_props, stats=lambda v: {"zero_fraction": np.mean(v["out"] == 0)})
def _(L, seed):
    L.root.manual_seed(seed)
    x = L.root.tensor(X, requires_grad=True)
    out = L.nn.Dropout(0.4)(x)
    out.sum().backward()
    return {"out": to_numpy(out).copy(), "x": X, "p": 0.4, "grad": to_numpy(x.grad).copy()}


def _channels_props(v):
    out = v["out"].reshape(v["out"].shape[0] * v["out"].shape[1], -1)
    whole = np.all((out == 0).all(axis=1) | (out != 0).all(axis=1))
    return bool(whole), _dropout_props(v)


X4 = np.random.default_rng(12).uniform(0.5, 1.5, size=(40, 50, 2, 2))


@case("functional", "dropout2d", "training", props=_channels_props,
      stats=lambda v: {"zero_fraction": np.mean(v["out"] == 0)}, tol=0.07)
def _(L, seed):
    L.root.manual_seed(seed)
    x = L.root.tensor(X4, requires_grad=True)
    out = L.F.dropout2d(x, p=0.25, training=True)
    out.sum().backward()
    return {"out": to_numpy(out).copy(), "x": X4, "p": 0.25, "grad": to_numpy(x.grad).copy()}


@case("modules", "Dropout2d", "training", props=_channels_props,
      stats=lambda v: {"zero_fraction": np.mean(v["out"] == 0)}, tol=0.07)
def _(L, seed):
    L.root.manual_seed(seed)
    x = L.root.tensor(X4, requires_grad=True)
    out = L.nn.Dropout2d(p=0.5)(x)
    out.sum().backward()
    return {"out": to_numpy(out).copy(), "x": X4, "p": 0.5, "grad": to_numpy(x.grad).copy()}


XN = -np.random.default_rng(13).uniform(0.5, 1.5, size=(100, 100))


def _rrelu_props(v):
    slopes = v["out"] / v["x"]
    return bool(slopes.min() >= 0.1 - 1e-12 and slopes.max() <= 0.3 + 1e-12), bool(np.allclose(v["grad"], slopes))


@case("functional", "rrelu", "training", props=_rrelu_props,
      stats=lambda v: _moments(v["out"] / v["x"]), keywords=("lower", "upper", "training"))
def _(L, seed):
    L.root.manual_seed(seed)
    x = L.root.tensor(XN, requires_grad=True)
    out = L.F.rrelu(x, lower=0.1, upper=0.3, training=True)
    out.sum().backward()
    return {"out": to_numpy(out).copy(), "x": XN, "grad": to_numpy(x.grad).copy()}


@case("modules", "RReLU", "training", props=_rrelu_props, stats=lambda v: _moments(v["out"] / v["x"]))
def _(L, seed):
    L.root.manual_seed(seed)
    x = L.root.tensor(XN, requires_grad=True)
    out = L.nn.RReLU(0.1, 0.3)(x)
    out.sum().backward()
    return {"out": to_numpy(out).copy(), "x": XN, "grad": to_numpy(x.grad).copy()}


# ----- samplers and splits --------------------------------------------------------------------------

N = 2000


def _perm_props(v):
    return sorted(v) == list(range(len(v))), len(v)


def _position_stats(v):
    a = np.asarray(v, dtype=float)
    return {"first_half_mean": a[: len(a) // 2].mean() / N, "corr_with_position": np.corrcoef(a, np.arange(len(a)))[0, 1]}


@case("data", "RandomSampler", "permutation", props=_perm_props, stats=_position_stats, tol=0.15, keywords=("data_source",))
def _(L, seed):
    L.root.manual_seed(seed)
    return list(L.data.RandomSampler(range(N)))


@case("data", "RandomSampler", "replacement_num_samples", props=lambda v: (len(v), min(v) >= 0, max(v) < 50),
      stats=lambda v: {"mean": np.mean(v) / 50, "distinct": len(set(v)) / len(v)},
      keywords=("replacement", "num_samples", "generator"))
def _(L, seed):
    g = L.root.Generator().manual_seed(seed)
    return list(L.data.RandomSampler(range(50), replacement=True, num_samples=3000, generator=g))


@case("data", "SubsetRandomSampler", "permutation_of_indices", props=lambda v: (sorted(v), len(v)),
      stats=lambda v: {"corr": np.corrcoef(v, np.arange(len(v)))[0, 1]}, tol=0.15, keywords=("indices", "generator"))
def _(L, seed):
    g = L.root.Generator().manual_seed(seed)
    return [int(i) for i in L.data.SubsetRandomSampler(list(range(0, 2 * N, 2)), generator=g)]


@case("data", "WeightedRandomSampler", "frequencies", props=lambda v: (len(v), set(v) <= {0, 1, 2, 3}),
      stats=lambda v: {f"freq{k}": np.mean(np.asarray(v) == k) for k in range(4)},
      keywords=("weights", "num_samples", "replacement", "generator"))
def _(L, seed):
    g = L.root.Generator().manual_seed(seed)
    return [int(i) for i in L.data.WeightedRandomSampler([0.1, 0.2, 0.3, 0.4], num_samples=5000, replacement=True,
                                                         generator=g)]


@case("data", "random_split", "lengths_and_fractions",
      props=lambda v: (v["sizes"], v["fraction_sizes"], sorted(v["union"]) == list(range(10))),
      stats=lambda v: {}, keywords=("dataset", "lengths", "generator"))
def _(L, seed):
    L.root.manual_seed(seed)
    parts = L.data.random_split(range(10), [3, 7])
    g = L.root.Generator().manual_seed(seed)
    fractions = L.data.random_split(dataset=range(10), lengths=[0.3, 0.3, 0.4], generator=g)
    return {"sizes": [len(p) for p in parts], "fraction_sizes": [len(p) for p in fractions],
            "union": [int(i) for p in parts for i in p]}


@case("data", "DataLoader", "shuffle_epochs", props=lambda v: (sorted(v["epoch0"]) == list(range(N)), v["epoch0"] != v["epoch1"]),
      stats=lambda v: _position_stats(v["epoch0"]), tol=0.15, keywords=("generator",))
def _(L, seed):
    g = L.root.Generator().manual_seed(seed)
    loader = L.data.DataLoader(range(N), batch_size=100, shuffle=True, generator=g)
    epochs = [[int(i) for batch in loader for i in batch] for _ in range(2)]
    return {"epoch0": epochs[0], "epoch1": epochs[1]}


@case("data", "DistributedSampler", "shuffled_shards",
      props=lambda v: (sorted(i for shard in v["epoch0"] for i in shard) == list(range(N)), v["epoch0"] != v["epoch1"],
                       [len(shard) for shard in v["epoch0"]]),
      stats=lambda v: _position_stats([i for shard in v["epoch0"] for i in shard]), tol=0.15, keywords=("seed",))
def _(L, seed):
    def shards(epoch):
        out = []
        for rank in range(2):
            sampler = L.data.DistributedSampler(range(N), num_replicas=2, rank=rank, shuffle=True, seed=seed)
            sampler.set_epoch(epoch)
            out.append([int(i) for i in sampler])
        return out

    return {"epoch0": shards(0), "epoch1": shards(1)}

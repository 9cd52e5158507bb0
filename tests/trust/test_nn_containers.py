"""Container API of ``Sequential``, ``ModuleList``, ``ParameterList`` and ``ParameterDict``, against torch."""
from collections import OrderedDict

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn


def _lib(name):
    return torch.nn if name == "torch" else nn


def _keys(module):
    return list(module.state_dict().keys())


def _layers(lib):
    return [lib.Linear(2, 3), lib.ReLU(), lib.Linear(3, 4), lib.Tanh(), lib.Linear(4, 1)]


def _names(seq):
    return [type(m).__name__ for m in seq]


def _same(ops):
    """Run ``ops(lib)`` on both libraries; compare state-dict keys and layer kinds."""
    results = []
    for lib in (torch.nn, nn):
        seq = ops(lib)
        results.append((_keys(seq), _names(seq), len(seq)))
    assert results[0] == results[1]


def test_sequential_setitem_del_slice_insert_extend_append_pop():
    def edit(lib):
        s = lib.Sequential(*_layers(lib))
        s[1] = lib.Sigmoid()
        s[-1] = lib.Linear(4, 2)
        del s[0]
        s.insert(0, lib.Linear(2, 3))
        s.insert(-1, lib.Identity())
        s.extend([lib.ReLU(), lib.Linear(2, 2)])
        s.append(lib.Tanh())
        popped = s.pop(2)
        assert type(popped).__name__ == "Linear"
        del s[1:3]
        return s
    _same(edit)


def test_sequential_slice_keeps_names_and_add_mul():
    for lib in (torch.nn, nn):
        s = lib.Sequential(OrderedDict([("a", lib.Linear(2, 2)), ("b", lib.ReLU()), ("c", lib.Linear(2, 1))]))
        assert list(s[1:]._modules) == ["b", "c"]
        both = s + lib.Sequential(lib.Tanh())
        assert list(both._modules) == ["0", "1", "2", "3"] and both[0] is s[0]
        tripled = s * 2
        assert len(tripled) == 6 and tripled[3] is s[0] and list(tripled._modules)[-1] == "5"
        assert len(2 * s) == 6
        s += lib.Sequential(lib.Sigmoid())
        assert list(s._modules) == ["a", "b", "c", "3"]
        del s[0]
        assert list(s._modules) == ["0", "1", "2"]  # renumbered after a deletion, as torch
        with pytest.raises(ValueError):
            s + [lib.ReLU()]
        with pytest.raises(TypeError):
            s * 1.5
        with pytest.raises(ValueError):
            s * 0
        with pytest.raises(IndexError):
            s[7]
        with pytest.raises(IndexError):
            s.insert(9, lib.ReLU())


def test_sequential_after_edits_computes_what_torch_computes():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 2))
    outs = []
    for lib, tensor in ((torch.nn, torch.from_numpy), (nn, taugrad.tensor)):
        lib_seed = lib.Sequential(lib.Linear(2, 3), lib.ReLU(), lib.Linear(3, 1)).double()
        with (torch.no_grad() if lib is torch.nn else taugrad.no_grad()):
            for i, p in enumerate(lib_seed.parameters()):
                p.copy_(tensor(np.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1)))
        lib_seed[1] = lib.Tanh()
        lib_seed.insert(2, lib.Sigmoid())
        outs.append(lib_seed(tensor(x)).detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)


def test_module_list_editing():
    def edit(lib):
        ml = lib.ModuleList(_layers(lib))
        ml[0] = lib.Linear(2, 5)
        del ml[1]
        ml.insert(1, lib.Sigmoid())
        ml.extend(m for m in [lib.Linear(1, 1), lib.Tanh()])  # a generator, taken once
        ml += [lib.ReLU()]
        ml.append(lib.Linear(7, 7))
        ml.pop(-2)
        del ml[::3]
        sliced = ml[1:3]
        assert type(sliced) is lib.ModuleList and list(sliced._modules) == ["0", "1"]
        combined = ml + [lib.Identity()]
        assert type(combined) is lib.ModuleList and combined[0] is ml[0]
        return ml
    _same(edit)


def test_parameter_list_slicing_and_extend():
    for lib, tensor in ((torch.nn, torch.ones), (nn, taugrad.ones)):
        pl = lib.ParameterList(lib.Parameter(tensor(i + 1)) for i in range(5))
        part = pl[1:4:2]
        assert type(part) is lib.ParameterList and len(part) == 2 and part[0] is pl[1] and part[1] is pl[3]
        assert [k for k, _ in part.named_parameters()] == ["0", "1"]
        pl += [tensor(2)]
        assert len(pl) == 6 and isinstance(pl[5], lib.Parameter)
        with pytest.raises(TypeError):
            pl.extend(tensor(3))


@pytest.mark.parametrize("build", ["dict", "ordered", "pairs", "generator"])
def test_parameter_dict_order_is_torch_order(build):
    rng = np.random.default_rng(2)
    values = {k: rng.normal(size=2) for k in ["zeta", "alpha", "mu", "beta"]}
    made = []
    for lib, tensor in ((torch.nn, torch.from_numpy), (nn, taugrad.tensor)):
        items = [(k, lib.Parameter(tensor(v))) for k, v in values.items()]
        arg = {"dict": lambda: dict(items), "ordered": lambda: OrderedDict(items), "pairs": lambda: list(items),
               "generator": lambda: (kv for kv in items)}[build]()
        pd = lib.ParameterDict(arg)
        made.append(([k for k, _ in pd.named_parameters()], list(pd.keys()), _keys(pd)))
    assert made[0] == made[1]


def test_parameter_dict_api():
    results = []
    for lib, tensor in ((torch.nn, torch.zeros), (nn, taugrad.zeros)):
        pd = lib.ParameterDict({"b": lib.Parameter(tensor(1)), "a": lib.Parameter(tensor(2))})
        log = [pd.get("a").shape[0], pd.get("nope"), pd.get("nope", 7)]
        log.append(pd.setdefault("c", tensor(3)).shape[0])
        log.append(pd.setdefault("c", tensor(9)).shape[0])
        pd.update([("e", tensor(4)), ("d", tensor(5))])
        pd.update({"g": tensor(1), "f": tensor(1)})
        log.append(pd.pop("b").shape[0])
        log.append(pd.popitem()[0])
        copy = pd.copy()
        log.append(list(copy.keys()))
        log.append(list(reversed(pd)))
        log.append(list(pd.fromkeys(["x", "y"], tensor(2)).keys()))
        merged = pd | lib.ParameterDict(OrderedDict([("z", tensor(1))]))
        log.append(list(merged.keys()))
        log.append([k for k, v in pd.items()])
        log.append([v.shape[0] for v in pd.values()])
        log.append("a" in pd)
        pd.clear()
        log.append(len(pd))
        with pytest.raises(TypeError):
            pd[3] = tensor(1)
        results.append(log)
    assert results[0] == results[1]

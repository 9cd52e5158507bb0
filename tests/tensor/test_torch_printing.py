"""``str(t)``/``repr(t)``, ``grad_fn`` and the Python protocols, checked against PyTorch's output."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import taugrad


def _both(make):
    """``make(L)`` run in both libraries: (taugrad's str, torch's str with 'torch.' -> 'taugrad.')."""
    return str(make(taugrad)), str(make(torch)).replace("torch.", "taugrad.")


CASES = {
    "float32 1-d": lambda L: L.tensor([1.0, 2.5, -3.25]),
    "whole floats": lambda L: L.tensor([1.0, 2.0, -3.0]),
    "float64": lambda L: L.tensor([0.1, 0.2], dtype=L.float64),
    "float16": lambda L: L.tensor([0.1, 2.0], dtype=L.float16),
    "0-d float": lambda L: L.tensor(3.14159),
    "0-d whole": lambda L: L.tensor(3.0),
    "0-d int": lambda L: L.tensor(7),
    "0-d bool": lambda L: L.tensor(True),
    "int64": lambda L: L.tensor([1, -20, 300]),
    "int32": lambda L: L.tensor([1, 2], dtype=L.int32),
    "uint8": lambda L: L.tensor([1, 2], dtype=L.uint8),
    "bool": lambda L: L.tensor([True, False]),
    "2-d": lambda L: L.tensor([[1.5, -2.0], [3.0, 4.125]]),
    "3-d": lambda L: L.from_numpy(np.arange(12, dtype=np.float32).reshape(2, 3, 2) / 7),
    "4-d int": lambda L: L.from_numpy(np.arange(16).reshape(2, 2, 2, 2)),
    "small": lambda L: L.tensor([1e-5, 1.0]),
    "large": lambda L: L.tensor([1e10, 1.0]),
    "wide range": lambda L: L.tensor([0.5, 2000.0]),
    "whole wide": lambda L: L.tensor([1.0, 1e9]),
    "nan inf": lambda L: L.tensor([float("nan"), float("inf"), -float("inf"), 1.5]),
    "only nan": lambda L: L.tensor([float("nan"), 0.0]),
    "zeros": lambda L: L.zeros(3),
    "negative zero": lambda L: L.tensor([-0.0, 1.5]),
    "empty": lambda L: L.tensor([]),
    "empty 2-d": lambda L: L.zeros(0, 3),
    "empty int": lambda L: L.zeros(0, dtype=L.int32),
    "long row wraps": lambda L: L.from_numpy(np.linspace(-1, 1, 30, dtype=np.float32)),
    "long int row": lambda L: L.arange(40),
    "summarised 1-d": lambda L: L.arange(2000.0),
    "summarised 2-d": lambda L: L.from_numpy(np.arange(4000, dtype=np.float32).reshape(40, 100) / 3),
    "summarised int": lambda L: L.arange(1200).reshape(30, 40),
    "requires_grad": lambda L: L.tensor([1.0, 2.0], requires_grad=True),
    "requires_grad float64": lambda L: L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True),
    "requires_grad 0-d": lambda L: L.tensor(2.0, requires_grad=True),
    "grad_fn mul": lambda L: L.tensor([1.0, 2.0], requires_grad=True) * 2,
    "grad_fn sum": lambda L: (L.tensor([1.0, 2.0], requires_grad=True) * 2).sum(),
    "grad_fn add 0-d": lambda L: L.tensor(1.5, requires_grad=True) + 2.0,
    "grad_fn exp": lambda L: L.tensor([[0.5, 1.0]], requires_grad=True).exp(),
    "grad_fn mean float64": lambda L: L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True).mean(),
    "grad_fn long suffix": lambda L: L.from_numpy(np.linspace(-1, 1, 13)).requires_grad_() * 3,
    "detached": lambda L: (L.tensor([1.0, 2.0], requires_grad=True) * 2).detach(),
    "data": lambda L: L.tensor([1.0, 2.0], requires_grad=True).data,
}


@pytest.mark.parametrize("name", CASES)
def test_str_matches_torch(name):
    got, expected = _both(CASES[name])
    assert got == expected


def test_repr_is_str_and_formats_as_str():
    t = taugrad.tensor([1.0, 2.0])
    assert repr(t) == str(t) == "tensor([1., 2.])" == f"{t}"
    print(t)  # print() of a tensor works (no exception)


def test_grad_fn_names_follow_the_op():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    assert (x * 2).grad_fn.name() == "MulBackward0"
    assert x.relu().grad_fn.name() == "ReluBackward0"
    assert taugrad.functional.log_softmax(x, dim=0).grad_fn.name() == "LogSoftmaxBackward0"
    y = (x * x).sum()
    name = y.grad_fn.name()
    y.backward()
    assert y.grad_fn.name() == name  # the name survives backward freeing the graph
    assert str(y) == "tensor(5., grad_fn=<SumBackward0>)"


def test_grad_fn_structure_matches_torch():
    def graph(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        c = L.tensor([3.0, 4.0])
        y = x * 2
        w = (y * x).sum()
        z = x * c
        return x, y, w, z

    x, y, w, z = graph(taugrad)
    tx, ty, tw, tz = graph(torch)
    assert x.grad_fn is None and tx.grad_fn is None and x.is_leaf and not y.is_leaf
    assert y.grad_fn == y.grad_fn and ty.grad_fn == ty.grad_fn
    assert [f.name() for f, _ in tw.grad_fn.next_functions] == [f.name() for f, _ in w.grad_fn.next_functions]
    (mul,), (tmul,) = [f for f, _ in w.grad_fn.next_functions], [f for f, _ in tw.grad_fn.next_functions]
    assert [type(f).__name__ for f, _ in mul.next_functions] == ["GradFn", "AccumulateGrad"]
    assert [type(f).__name__ for f, _ in tmul.next_functions] == ["MulBackward0", "AccumulateGrad"]
    assert mul.next_functions[0][0] == y.grad_fn and mul.next_functions[1][0].variable is x
    assert tmul.next_functions[1][0].variable is tx
    assert [n for _, n in mul.next_functions] == [n for _, n in tmul.next_functions] == [0, 0]
    # a constant input needs no gradient: None in its place, as torch
    assert [None if f is None else f.name() for f, _ in z.grad_fn.next_functions] == [
        None if f is None else f.name().rsplit("::", 1)[-1] for f, _ in tz.grad_fn.next_functions]


def test_grad_is_none_until_backward():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad is None
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


# ---------------------------------------------------------------------------
# Python protocols
# ---------------------------------------------------------------------------


def test_number_protocols_match_torch():
    for L in (taugrad, torch):
        t = L.tensor(3.14159)
        assert f"{t:.2f}" == "3.14" and f"{t:8.3f}" == "   3.142" and f"{L.tensor(7):03d}" == "007"
        assert int(L.tensor(2.7)) == 2 and float(L.tensor([2])) == 2.0
        assert bool(L.tensor([0.0])) is False and bool(L.tensor(1)) is True
        assert math.isclose(float(t), 3.14159, rel_tol=1e-6)
        with pytest.raises(TypeError):
            round(t, 2)  # torch.Tensor has no __round__: round(t.item(), 2) is the way
        with pytest.raises(TypeError):
            f"{L.tensor([1.5, 2.0]):.2f}"
        with pytest.raises((ValueError, RuntimeError)):
            bool(L.tensor([1.0, 2.0]))


def test_sequence_protocols_match_torch():
    for L in (taugrad, torch):
        m = L.tensor([[1, 2], [3, 4], [5, 6]])
        assert len(m) == 3 and m.tolist() == [[1, 2], [3, 4], [5, 6]]
        assert [row.tolist() for row in m] == [[1, 2], [3, 4], [5, 6]]
        assert m.numel() == m.nelement() == 6 and m.dim() == 2 and m.size(-1) == 2 and tuple(m.shape) == (3, 2)
        assert m.stride() == (2, 1) and m.T.stride() == (1, 2) and m.stride(0) == 2
        assert L.tensor(2.5).tolist() == 2.5
        with pytest.raises(TypeError):
            len(L.tensor(1.0))


def test_stride_counts_elements_for_every_dtype():
    for dtype in ("float64", "int8", "float16"):
        a = np.zeros((4, 5, 6), dtype=dtype)
        assert taugrad.from_numpy(a).stride() == torch.from_numpy(a).stride() == (30, 6, 1)
        assert taugrad.from_numpy(a).permute(2, 0, 1).stride() == torch.from_numpy(a).permute(2, 0, 1).stride()

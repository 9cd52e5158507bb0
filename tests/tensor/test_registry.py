"""Every registered tensor op has a test row; ops without gradients match torch on values."""
from __future__ import annotations

import numpy as np
import pytest

import taugrad
from taugrad.tensors.core.rule import OPS, Rule

from .helpers import TAUGRAD, TORCH
from .op_table import OPS as OP_TABLE
from .value_table import COVERED_ELSEWHERE, VALUE_OPS


def rows_for(op_name: str) -> list:
    """The rows that test a registered op: named after it, or ``<op>_<variant>``, or ``fn_<op>``."""
    names = [row.name for row in OP_TABLE] + [row.name for row in VALUE_OPS]
    return [n for n in names if n == op_name or n.startswith(op_name + "_") or n == "fn_" + op_name]


def test_every_registered_op_has_a_test_row():
    missing = [name for name in OPS if not rows_for(name) and name not in COVERED_ELSEWHERE]
    assert not missing, f"registered ops with no row in tests/tensor/op_table.py or value_table.py: {missing}"


def test_the_coverage_check_sees_a_new_op():
    """Registering an op without a row makes the check above fail."""
    from taugrad.tensors.core.rule import register

    register("made_up_op")(lambda x: x)
    try:
        assert not rows_for("made_up_op")
        assert "made_up_op" in OPS
    finally:
        del OPS["made_up_op"]


def test_every_rule_is_a_rule_record():
    """Rules are Rule records, not loose function attributes; methods come from the registry."""
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2.0 - 1.0).exp().sum()
    node = y
    while node._prev:
        assert isinstance(node._rule, Rule)
        node = node._prev[0]
    for entry in OPS.values():
        for method in entry.methods:
            assert getattr(taugrad.Tensor, method) is entry.forward, (entry.name, method)


def _inputs(L):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.0, 1.0, size=(3, 4))
    y = rng.uniform(0.5, 1.5, size=(3, 4)) * np.where(rng.uniform(size=(3, 4)) < 0.5, -1.0, 1.0)
    return L.tensor(x), L.tensor(y)


def _run(L, row):
    x, y = _inputs(L)
    out = row.fn(L, x, y)
    return np.asarray((x if out is None else out).detach())


@pytest.mark.parametrize("row", VALUE_OPS, ids=str)
def test_value_op_matches_torch(row):
    got, want = _run(TAUGRAD, row), _run(TORCH, row)
    assert got.shape == want.shape
    assert got.dtype.kind == want.dtype.kind, (got.dtype, want.dtype)
    if row.exact:
        np.testing.assert_array_equal(got, want)
    else:  # random fills: same shape and dtype, values in the distribution's range
        assert np.isfinite(got).all() and got.std() > 0
        if row.name == "uniform_":
            assert got.min() >= -1.0 and got.max() <= 1.0

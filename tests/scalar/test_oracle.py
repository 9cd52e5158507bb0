"""Value's results and gradients against PyTorch float64, finite differences and micrograd."""
from __future__ import annotations

import math

import micrograd.engine
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings

from taugrad import Value, gradcheck

from .exprs import FloatLib, TorchLib, ValueLib, programs, relu_margins, run

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def taugrad_grads(program, values):
    inputs = [Value(v) for v in values]
    out = run(program, inputs, ValueLib)[-1]
    out.backward()
    return out.data, [x.grad for x in inputs]


def torch_grads(program, values):
    inputs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = run(program, inputs, TorchLib)[-1]
    if not out.requires_grad:  # the output does not depend on any input
        return out.item(), [0.0 for _ in inputs]
    out.backward()
    return out.item(), [0.0 if x.grad is None else x.grad.item() for x in inputs]


def finite(program, values):
    return all(math.isfinite(v) and abs(v) < 1e6 for v in run(program, values, FloatLib))


@SETTINGS
@given(programs())
def test_values_and_gradients_match_pytorch_float64(case):
    program, values = case
    assume(finite(program, values))
    data, grads = taugrad_grads(program, values)
    want_data, want_grads = torch_grads(program, values)
    assert data == pytest.approx(want_data, rel=1e-12, abs=1e-12)
    assert grads == pytest.approx(want_grads, rel=1e-9, abs=1e-9)


@SETTINGS
@given(programs())
def test_gradients_match_finite_differences(case):
    program, values = case
    assume(finite(program, values) and relu_margins(program, values) > 1e-3)
    inputs = [Value(v) for v in values]
    assert gradcheck(lambda *xs: run(program, xs, ValueLib)[-1], inputs, eps=1e-6, atol=1e-5, rtol=1e-4)


@SETTINGS
@given(programs())
def test_same_numbers_as_micrograd(case):
    """Code written for micrograd gives the same data and gradients on taugrad."""
    program, values = case
    # micrograd 0.1.0 (PyPI) has +, *, ** with number exponents and relu only
    assume(all(op not in {"log", "sigmoid", "vpow", "rpow", "exp", "tanh"} for op, _, _ in program))
    assume(finite(program, values))
    ours = [Value(v) for v in values]
    theirs = [micrograd.engine.Value(v) for v in values]
    out_ours = run(program, ours, ValueLib)[-1]
    out_theirs = run(program, theirs, ValueLib)[-1]
    out_ours.backward()
    out_theirs.backward()
    assert out_ours.data == pytest.approx(out_theirs.data, rel=1e-12, abs=1e-12)
    assert [x.grad for x in ours] == pytest.approx([x.grad for x in theirs], rel=1e-9, abs=1e-12)

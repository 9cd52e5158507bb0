"""Registered ops without a gradient to check: comparisons, logic, indices, in-place updates, sampling.

A row is ``ValueOp(name, fn)``: ``fn(L, x, y)`` gets two float64 tensors of
shape (3, 4) that need no grad (``y`` has no zeros) and returns a tensor (or
None when the op changes ``x`` in place, then ``x`` is compared).  It runs on
torch and on taugrad and both results must match exactly, dtype kind included.
Ops whose results are random are checked for shape, dtype and range instead
(``exact=False``): torch's random stream is not reproduced.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np


@dataclasses.dataclass(frozen=True)
class ValueOp:
    name: str
    fn: Callable[..., Any]
    exact: bool = True

    def __str__(self) -> str:
        return self.name


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


def _setitem(L, x, y):
    x[1:, ::2] = y[:2, :2]


VALUE_OPS = [
    ValueOp("sign", lambda L, x, y: x.sign()),
    ValueOp("float", lambda L, x, y: x.float()),
    ValueOp("lt", lambda L, x, y: x < y),
    ValueOp("le", lambda L, x, y: x <= 0.5),
    ValueOp("gt", lambda L, x, y: x > y),
    ValueOp("ge", lambda L, x, y: x >= 0.0),
    ValueOp("eq", lambda L, x, y: x == x.clamp(max=0.0)),
    ValueOp("ne", lambda L, x, y: x != x.clamp(max=0.0)),
    ValueOp("logical_and", lambda L, x, y: (x > 0).logical_and(y > 0)),
    ValueOp("logical_or", lambda L, x, y: (x > 0).logical_or(y > 0)),
    ValueOp("logical_xor", lambda L, x, y: (x > 0).logical_xor(y > 0)),
    ValueOp("logical_not", lambda L, x, y: ~(x > 0)),
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
]

#: registered ops that no table row calls directly, with where they are tested instead
COVERED_ELSEWHERE = {
    "index_scatter": "the backward of getitem on Tensors: tests/tensor_higher (second order of getitem)",
}

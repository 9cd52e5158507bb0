"""The records of the database: a callable's sample calls, and how they are run."""
from __future__ import annotations

import dataclasses

import numpy as np

from .common import Arr, ByLib

_RNG = np.random.default_rng(2024)


@dataclasses.dataclass
class Call:
    """One call: positional and keyword arguments as described in common.build.

    ``error``: both libraries must raise (torch's refusal is part of the contract).
    ``grad``: compare the gradients of a random projection of the output.
    ``exact_kw``: this call is already in keyword form (no keyword variant is derived from it).
    """

    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)
    id: str = ""
    error: bool = False
    grad: bool = True


@dataclasses.dataclass
class FnInfo:
    """A function of a family with its sample calls.

    ``uncovered`` maps a keyword of torch's signature that no call passes to the reason.
    ``keyword_form``: derive, from the first call, the call with every argument given by keyword.
    """

    name: str
    calls: list
    uncovered: dict = dataclasses.field(default_factory=dict)
    keyword_form: bool = True
    torch_name: str | None = None
    params: list | None = None  # torch's parameter names where its docstring names them otherwise


def C(*args, id: str = "", error: bool = False, grad: bool = True, **kwargs) -> Call:
    return Call(args, kwargs, id, error, grad)


def x(*shape, lo=-1.0, hi=1.0, grad=None, leaf=False) -> Arr:
    """A float64 tensor argument with uniform values in [lo, hi]."""
    return Arr(_RNG.uniform(lo, hi, size=shape), grad=grad, leaf=leaf)


def pos(*shape, lo=0.1, hi=1.0, **kw) -> Arr:
    return x(*shape, lo=lo, hi=hi, **kw)


def ints(high, *shape, low=0) -> Arr:
    return Arr(_RNG.integers(low, high, size=shape).astype(np.int64), grad=False)


def const(value, grad=False) -> Arr:
    return Arr(np.asarray(value), grad=grad)


def signs(*shape) -> Arr:
    return Arr(np.where(_RNG.uniform(size=shape) < 0.5, -1.0, 1.0), grad=False)


def probs(*shape, grad=False) -> Arr:
    return Arr(_RNG.uniform(0.05, 0.95, size=shape), grad=grad)


F64 = ByLib(lambda L: L.root.float64)


@dataclasses.dataclass
class ModCall:
    """A module built from ``ctor`` (args, kwargs) and called on ``inputs`` with ``forward`` kwargs.

    ``modes``: the modes the forward runs in, one after the other on the same module.
    """

    ctor: tuple = ()
    ctor_kwargs: dict = dataclasses.field(default_factory=dict)
    inputs: tuple = ()
    forward: dict = dataclasses.field(default_factory=dict)
    id: str = ""
    modes: tuple = ("train", "eval")
    error: bool = False


@dataclasses.dataclass
class ModInfo:
    name: str
    calls: list
    uncovered: dict = dataclasses.field(default_factory=dict)
    keyword_form: bool = True


def M(*ctor, inputs=(), forward=None, id="", modes=("train", "eval"), error=False, **ctor_kwargs) -> ModCall:
    return ModCall(ctor, ctor_kwargs, tuple(inputs), forward or {}, id, modes, error)

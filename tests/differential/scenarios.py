"""Scenario entries: a function of the library that returns what to compare (names, tensors, numbers).

Used where a callable is not one call on tensors: containers, Module methods, nn.utils, init,
utils.data and autograd. The scenario runs once with each library; the results must agree to
1e-10 (strings, bools and structure exactly).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable


from .common import rng_for


@dataclasses.dataclass
class Scenario:
    name: str  # the public name it covers
    id: str
    fn: Callable[[Any], Any]
    keywords: tuple = ()  # keywords of torch's callable this scenario passes (coverage check)


def scenario(table: list, name: str, id: str, keywords: tuple = ()):
    def register(fn):
        table.append(Scenario(name, id, fn, keywords))
        return fn

    return register


def fill(L, module, key="fill"):
    """Give every parameter NumPy values chosen by its name, the same in both libraries."""
    with L.root.no_grad():
        for name, p in module.named_parameters():
            p.copy_(L.root.tensor(rng_for(key + name).normal(size=tuple(p.shape))))
    return module


def arr(key, *shape):
    return rng_for(key).normal(size=shape)


def raises(fn) -> str:
    """'raises' when fn raises, else 'returns': both libraries must refuse the same things."""
    try:
        fn()
    except Exception:  # noqa: BLE001 - only whether it refuses is compared
        return "raises"
    return "returns"


def kinds(modules) -> list:
    return [type(m).__name__ for m in modules]

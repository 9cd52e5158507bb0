"""Random initializers, dropout, samplers and splits against torch by contract (see db_random)."""
from __future__ import annotations

import warnings

import pytest

from .common import TAUGRAD, TORCH, assert_close, float64_default
from .db_random import ENTRIES
from .known_failures import param


def _draw(L, case, seed):
    with float64_default(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return case.draw(L, seed)


@pytest.mark.parametrize("case", [param("random", f"{c.family}.{c.name}-{c.id}", c) for c in ENTRIES])
def test_random_callable_keeps_torchs_contract(case):
    want, got = _draw(TORCH, case, 0), _draw(TAUGRAD, case, 0)
    assert case.props(got) == case.props(want), f"{case.name}: properties {case.props(got)}, torch {case.props(want)}"
    g_stats, w_stats = case.stats(got), case.stats(want)
    for key, value in w_stats.items():
        assert abs(g_stats[key] - value) <= case.tol, f"{case.name} {key}: {g_stats[key]:.4f}, torch {value:.4f}"
    again, other = _draw(TAUGRAD, case, 0), _draw(TAUGRAD, case, 1)
    assert_close(again, got, f"{case.name} under the same seed")
    assert not _same(other, got), f"{case.name}: another seed gives the same draw"


def _same(a, b) -> bool:
    try:
        assert_close(a, b, "draw")
    except AssertionError:
        return False
    return True

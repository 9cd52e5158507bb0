"""The scenario families (containers and Module, nn.utils, nn.init, utils.data, autograd) against torch."""
from __future__ import annotations

import warnings

import pytest

from . import db_autograd, db_containers, db_data, db_init, db_nn_utils
from .common import TAUGRAD, TORCH, assert_close, float64_default
from .known_failures import param

FAMILIES = {"containers": db_containers, "nn_utils": db_nn_utils, "init": db_init, "data": db_data,
            "autograd": db_autograd}


def _params():
    for family, db in FAMILIES.items():
        for s in db.ENTRIES:
            yield param(family, f"{s.name}-{s.id}", s)


@pytest.mark.parametrize("entry", list(_params()))
def test_scenario_matches_torch(entry):
    with float64_default(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = entry.fn(TORCH)
        got = entry.fn(TAUGRAD)
    assert_close(got, want, f"{entry.name} {entry.id}")

"""taugrad.nn.functional against torch.nn.functional: every entry of db_functional, every call."""
from __future__ import annotations

import pytest
import torch

from .db_functional import ENTRIES
from .drivers import compare_call, keyword_form
from .known_failures import param


def _params():
    for info in ENTRIES:
        for i, call in enumerate(info.calls):
            yield param("functional", f"{info.name}-{call.id or i}", info, call)
        if info.keyword_form:
            yield param("functional", f"{info.name}-kw", info, keyword_form(info, info.calls[0], torch.nn.functional))


@pytest.mark.parametrize("info, call", list(_params()))
def test_functional_matches_torch(info, call):
    compare_call("F", info.name, call, f"{info.name}-{call.id}")

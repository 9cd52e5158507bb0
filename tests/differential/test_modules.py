"""taugrad.nn layers against torch.nn: every entry of db_modules, every constructor form, both modes."""
from __future__ import annotations

import pytest

from .db_modules import ENTRIES
from .drivers import compare_module, module_keyword_form
from .known_failures import param


def _params():
    for info in ENTRIES:
        for i, call in enumerate(info.calls):
            yield param("modules", f"{info.name}-{call.id or i}", info, call)
        if info.keyword_form and info.calls[0].ctor:
            yield param("modules", f"{info.name}-kw", info, module_keyword_form(info, info.calls[0]))


@pytest.mark.parametrize("info, call", list(_params()))
def test_module_matches_torch(info, call):
    compare_module(info, call, f"{info.name}-{call.id}")

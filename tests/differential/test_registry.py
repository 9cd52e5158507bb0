"""Every public callable of the covered taugrad modules has an entry in the differential database.

A public name is a name of the module not starting with ``_`` whose object is callable and defined
by taugrad (``__module__`` starts with ``taugrad``). It is covered by an entry of a db_* table, or
listed in EXCLUDED with the reason it is not compared with torch directly. Each entry also passes
every keyword torch's callable takes, or names the keyword in its ``uncovered`` dict with a reason.
"""
from __future__ import annotations

import importlib

import torch

from . import db_autograd, db_containers, db_data, db_functional, db_init, db_modules, db_nn_utils, db_optim
from . import db_random, db_schedulers
from .common import torch_parameters
from .known_failures import KNOWN_FAILURES, SEEN

HELPER = "an internal helper imported into the module's namespace; not part of torch's API"

EXCLUDED = {
    "taugrad.nn.MLP": "no torch.nn counterpart (a taugrad convenience); tested in tests/test_nn.py",
    "taugrad.optim.lr_scheduler.check_number": HELPER,
    "taugrad.nn.RNNBase": "the base class of RNN/LSTM/GRU (built through them, each with its entry)",
    "taugrad.nn.RNNCellBase": "the base class of RNNCell/LSTMCell/GRUCell (built through them, each with its entry)",
    "taugrad.optim.lr_scheduler.Optimizer": "the optimizer base class re-exported; its entry is under taugrad.optim",
    "taugrad.optim.lr_scheduler.LRScheduler": "the abstract base class; every concrete scheduler derives from it",
    "taugrad.autograd.Tensor": "taugrad.Tensor re-exported; covered by the op tables",
    "taugrad.nn.init.Tensor": "taugrad.Tensor re-exported; covered by the op tables",
    "taugrad.autograd.Value": "the scalar engine's Value: no torch counterpart; tested in tests/scalar",
    "taugrad.autograd.value_grad": "gradients of the scalar engine: no torch counterpart; tested in tests/scalar",
    "taugrad.autograd.topological_order": "graph order of the learner tools: no torch counterpart; tested in tests/test_trace.py",
    "taugrad.nn.init.manual_seed": "taugrad.manual_seed re-exported; the random contracts use it",
    "taugrad.autograd.detect_anomaly": "PyTorch's anomaly mode: tested against torch in tests/trust/test_anomaly_mode.py",
    "taugrad.autograd.set_detect_anomaly": "tested against torch in tests/trust/test_anomaly_mode.py",
    "taugrad.autograd.gradcheck": "taugrad.gradcheck re-exported; tested in tests/test_gradcheck_and_function.py",
    "taugrad.autograd.gradgradcheck": "taugrad.gradgradcheck re-exported; tested in tests/test_gradcheck_and_function.py",
    "taugrad.autograd.inference_mode": "taugrad.inference_mode re-exported; tested in tests/test_api_gaps2.py",
    **{f"taugrad.nn.init.{n}": HELPER for n in ["bump_version", "device_of", "get_generator", "move_like"]},
}

MODULES = {
    "taugrad.nn": torch.nn, "taugrad.nn.functional": torch.nn.functional, "taugrad.optim": torch.optim,
    "taugrad.optim.lr_scheduler": torch.optim.lr_scheduler, "taugrad.nn.utils": torch.nn.utils,
    "taugrad.nn.init": torch.nn.init, "taugrad.utils.data": torch.utils.data, "taugrad.autograd": torch.autograd,
}


def covered() -> dict:
    """Names with an entry, per module."""
    scen = lambda db: {s.name for s in db.ENTRIES}  # noqa: E731
    rand = lambda fam: {c.name for c in db_random.ENTRIES if c.family == fam}  # noqa: E731
    return {
        "taugrad.nn": {i.name for i in db_modules.ENTRIES} | scen(db_containers) | rand("modules"),
        "taugrad.nn.functional": {i.name for i in db_functional.ENTRIES} | rand("functional"),
        "taugrad.optim": {i.name for i in db_optim.ENTRIES} | {"Optimizer"},  # Optimizer: the user-written subclass
        "taugrad.optim.lr_scheduler": {i.name for i in db_schedulers.ENTRIES},
        "taugrad.nn.utils": scen(db_nn_utils),
        "taugrad.nn.init": scen(db_init) | rand("init"),
        "taugrad.utils.data": scen(db_data) | rand("data"),
        "taugrad.autograd": scen(db_autograd),
    }


def public_names(module_name: str) -> list:
    module = importlib.import_module(module_name)
    names = []
    for name in dir(module):
        obj = getattr(module, name)
        if name.startswith("_") or not callable(obj) or isinstance(obj, type(importlib)):
            continue
        if (getattr(obj, "__module__", "") or "").startswith("taugrad"):
            names.append(name)
    return names


def test_every_public_name_has_an_entry():
    entries = covered()
    missing = [f"{m}.{n}" for m in MODULES for n in public_names(m)
               if n not in entries[m] and f"{m}.{n}" not in EXCLUDED]
    assert not missing, f"public names with no entry in tests/differential/db_*.py and not in EXCLUDED: {missing}"


def test_excluded_names_are_still_public():
    public = {f"{m}.{n}" for m in MODULES for n in public_names(m)}
    stale = sorted(set(EXCLUDED) - public)
    assert not stale, f"EXCLUDED names that are no longer public names (remove them): {stale}"


def test_the_registry_sees_a_new_public_name():
    """Adding a public callable to a covered module without an entry makes the check above fail."""
    import taugrad.nn.functional as F

    F.made_up_function = lambda x: x
    F.made_up_function.__module__ = "taugrad.nn.functional"
    try:
        assert "made_up_function" in public_names("taugrad.nn.functional")
        assert "made_up_function" not in covered()["taugrad.nn.functional"]
    finally:
        del F.made_up_function


def test_known_failures_name_existing_tests():
    from . import test_functional, test_modules, test_optim_loops, test_random_contracts, test_scenarios  # noqa: F401
    from . import test_schedulers  # noqa: F401

    stale = sorted(set(KNOWN_FAILURES) - SEEN)
    assert not stale, f"KNOWN_FAILURES entries that name no test (remove them): {stale}"


# ---------------------------------------------------------------------------
# every keyword torch takes
# ---------------------------------------------------------------------------


def _missing(torch_names, used, uncovered, skip=()):
    return sorted(set(torch_names) - set(used) - set(uncovered) - set(skip))


def test_functional_entries_pass_every_keyword_torch_takes():
    gaps = {}
    for info in db_functional.ENTRIES:
        names = info.params or torch_parameters(getattr(torch.nn.functional, info.torch_name or info.name))
        used = {k for c in info.calls for k in c.kwargs}
        if info.keyword_form:
            used |= set(names[: len(info.calls[0].args)])
        used |= {k for c in db_random.ENTRIES if c.family == "functional" and c.name == info.name for k in c.keywords}
        if _missing(names, used, info.uncovered):
            gaps[info.name] = _missing(names, used, info.uncovered)
    assert not gaps, f"torch keywords no call passes: {gaps}"


def test_module_entries_pass_every_keyword_torch_takes():
    gaps = {}
    for info in db_modules.ENTRIES:
        cls = getattr(torch.nn, info.name)
        names = torch_parameters(cls.__init__)
        used = {k for c in info.calls for k in c.ctor_kwargs} | set(names[: len(info.calls[0].ctor)])
        import inspect

        forward = [p.name for p in inspect.signature(cls.forward).parameters.values() if p.default is not p.empty]
        used_fwd = {k for c in info.calls for k in c.forward}
        missing = _missing(names, used, info.uncovered) + _missing(forward, used_fwd, info.uncovered)
        if missing:
            gaps[info.name] = missing
    assert not gaps, f"torch keywords no call passes: {gaps}"


def test_optimizer_and_scheduler_entries_pass_every_keyword_torch_takes():
    gaps = {}
    for info in db_optim.ENTRIES:
        names = torch_parameters(getattr(torch.optim, info.name).__init__)
        used = {k for options in info.option_sets for k in options}
        if _missing(names, used, info.uncovered, skip=("params",)):
            gaps[info.name] = _missing(names, used, info.uncovered, skip=("params",))
    for info in db_schedulers.ENTRIES:
        names = torch_parameters(getattr(torch.optim.lr_scheduler, info.name).__init__)
        used = {k for config in info.configs for k in config}
        if _missing(names, used, info.uncovered, skip=("optimizer",)):
            gaps[info.name] = _missing(names, used, info.uncovered, skip=("optimizer",))
    assert not gaps, f"torch keywords no option set passes: {gaps}"


SCENARIO_TORCH = {
    db_nn_utils: torch.nn.utils, db_init: torch.nn.init, db_data: torch.utils.data, db_autograd: torch.autograd,
}
SCENARIO_UNCOVERED = {
    "backward": {"grad_variables": "deprecated alias of grad_tensors"},
}


def test_scenario_entries_pass_every_keyword_torch_takes():
    gaps = {}
    for db, torch_module in SCENARIO_TORCH.items():
        for name in {s.name for s in db.ENTRIES}:
            target = getattr(torch_module, name, None)
            if target is None or not callable(target):
                continue
            target = target.__init__ if isinstance(target, type) else target
            try:
                names = torch_parameters(target)
            except AssertionError:
                continue
            used = {k for s in db.ENTRIES if s.name == name for k in s.keywords}
            used |= {k for c in db_random.ENTRIES if c.name == name for k in c.keywords}
            missing = _missing(names, used, SCENARIO_UNCOVERED.get(name, {}))
            if missing:
                gaps[name] = missing
    assert not gaps, f"torch keywords no scenario passes: {gaps}"

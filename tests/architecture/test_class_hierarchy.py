"""Classes inherit as torch's do: for every class taugrad.nn, taugrad.optim, taugrad.optim.lr_scheduler and
taugrad.utils.data export that torch also has, the public bases in its MRO are the same-named torch class's.

A module that reuses another's code by inheriting from it (``class Mish(SELU)``) makes ``isinstance(m, SELU)``
answer differently from torch; code is shared through private bases instead, which torch-facing checks
do not see.
"""
from __future__ import annotations

import importlib
import inspect

import pytest
import torch  # noqa: F401  (the oracle's submodules below are imported by name)

import taugrad

FAMILIES = [("taugrad.nn", "torch.nn"), ("taugrad.optim", "torch.optim"),
            ("taugrad.optim.lr_scheduler", "torch.optim.lr_scheduler"), ("taugrad.utils.data", "torch.utils.data")]


def public_bases(cls: type, root: str) -> set:
    """Names of the public classes of package ``root`` in ``cls``'s MRO, ``cls`` itself left out."""
    return {base.__name__ for base in cls.__mro__[1:]
            if base.__module__.split(".")[0] == root and not base.__name__.startswith("_")}


def known_to_taugrad(name: str, family) -> bool:
    """torch's bases that taugrad has no class for (``TensorBase``) are not compared."""
    return inspect.isclass(getattr(family, name, None)) or inspect.isclass(getattr(taugrad, name, None))


def pairs():
    found = []
    for ours_name, theirs_name in FAMILIES:
        ours, theirs = importlib.import_module(ours_name), importlib.import_module(theirs_name)
        for name in sorted(vars(ours)):
            cls, twin = getattr(ours, name), getattr(theirs, name, None)
            if (not name.startswith("_") and inspect.isclass(cls) and cls.__module__.startswith("taugrad")
                    and inspect.isclass(twin)):
                found.append(pytest.param(ours, cls, twin, id=f"{ours_name}.{name}"))
    return found


def bases_differ(family, cls: type, twin: type):
    ours = public_bases(cls, "taugrad")
    theirs = {name for name in public_bases(twin, "torch") if known_to_taugrad(name, family)}
    return (sorted(ours), sorted(theirs)) if ours != theirs else None


def test_the_comparison_sees_the_families():
    names = {param.id for param in pairs()}
    assert {"taugrad.nn.Linear", "taugrad.optim.Adam", "taugrad.optim.lr_scheduler.StepLR",
            "taugrad.utils.data.RandomSampler"} <= names


@pytest.mark.parametrize("family, cls, twin", pairs())
def test_public_bases_are_torchs(family, cls, twin):
    differ = bases_differ(family, cls, twin)
    assert not differ, f"{cls.__name__}: public bases {differ[0]}, torch's {differ[1]}"


def test_a_class_reusing_an_unrelated_class_is_found():
    """Inheriting from a sibling for its code (as Mish once did from SELU) is reported; a private base is not."""
    class Mish(taugrad.nn.SELU):
        pass

    class Shared(taugrad.nn.Module):
        pass

    class Quiet(Shared):
        pass

    Shared.__module__ = "taugrad.nn.activation"  # as if it were the package's own base
    assert bases_differ(taugrad.nn, Mish, torch.nn.Mish) == (["Module", "SELU"], ["Module"])
    assert bases_differ(taugrad.nn, Quiet, torch.nn.Mish) == (["Module", "Shared"], ["Module"])
    Shared.__name__ = "_Shared"  # the same base, private
    assert bases_differ(taugrad.nn, Quiet, torch.nn.Mish) is None

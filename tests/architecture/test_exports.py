"""``taugrad.__all__`` is complete: every registered op that torch offers as a top-level function, and every
public module of the package, is exported, so adding one cannot silently miss its export."""
from __future__ import annotations

import pkgutil
import types

import pytest
import torch

import taugrad
import taugrad.data
import taugrad.datasets
import taugrad.functional
import taugrad.nn.functional
import taugrad.utils.data
from taugrad.tensors.core.rule import OPS

#: modules of the package that are not exported, each with its reason
INTERNAL = {
    "cli": "the `taugrad` command's program, run with `python -m taugrad.cli` or the console script",
    "grad_mode": "the grad-mode state; its functions (no_grad, enable_grad...) are exported",
    "graph": "the graph walk both engines share; used through backward() and taugrad.autograd",
    "tensors": "the tensor engine; its functions and Tensor are exported one by one",
    "run": "a program to run (torch.distributed.run's counterpart), not a library module",
    "onnx": "ONNX export needs the optional onnx package, so `import taugrad` leaves it out: `import taugrad.onnx`",
    "vision": "torchvision's counterpart, a package of its own beside torch: `import taugrad.vision` (or, under "
              "`taugrad run`, `import torchvision`)",
}
#: registered ops torch has as top-level functions whose torch form takes other arguments
NOT_EXPORTED = {
    "batch_norm": "torch.batch_norm takes (input, weight, bias, running_mean, running_var, ...): "
                  "F.batch_norm's order, which the op has, would read the arguments wrongly",
    "binary_cross_entropy_with_logits": "torch.binary_cross_entropy_with_logits takes weight third and "
                                        "reduction as an integer enum; the op has F's signature",
}


def torch_functions_registered():
    return sorted(name for name in OPS if not name.startswith("_") and callable(getattr(torch, name, None)))


def public_modules():
    return sorted(m.name for m in pkgutil.iter_modules(taugrad.__path__) if not m.name.startswith("_"))


def test_all_names_exist_once():
    assert len(taugrad.__all__) == len(set(taugrad.__all__))
    missing = [name for name in taugrad.__all__ if not hasattr(taugrad, name)]
    assert not missing, f"names in taugrad.__all__ that taugrad does not have: {missing}"


def test_every_registered_torch_function_is_exported():
    names = torch_functions_registered()
    assert len(names) > 200  # the registry is read
    missing = [name for name in names if name not in taugrad.__all__ and name not in NOT_EXPORTED]
    assert not missing, f"registered ops that torch has as functions, missing from taugrad.__all__: {missing}"
    assert not set(NOT_EXPORTED) & set(taugrad.__all__)


def test_every_public_module_is_exported_or_internal():
    modules = public_modules()
    assert {"nn", "optim", "autograd", "utils", "tensors"} <= set(modules)  # the scan sees the package
    missing = [m for m in modules if m not in taugrad.__all__ and m not in INTERNAL]
    assert not missing, f"modules of taugrad neither in __all__ nor listed as internal: {missing}"
    assert all(isinstance(getattr(taugrad, m), types.ModuleType) for m in modules if m in taugrad.__all__
               and m != "compile")  # taugrad.compile is the function, as torch.compile


def test_every_public_name_is_in_all():
    """A function, class or constant bound in taugrad is listed (modules are checked above)."""
    names = [name for name, value in vars(taugrad).items()
             if not name.startswith("_") and not isinstance(value, types.ModuleType)]
    missing = sorted(set(names) - set(taugrad.__all__))
    assert not missing, f"public names of taugrad missing from __all__: {missing}"


def test_the_check_sees_a_new_op():
    """Registering an op torch has as a function, without exporting it, makes the check fail."""
    from taugrad.tensors.core.rule import register

    assert "kron" not in OPS and callable(torch.kron)
    register("kron")(lambda a, b: a)
    try:
        assert "kron" in torch_functions_registered() and "kron" not in taugrad.__all__
    finally:
        del OPS["kron"]


def test_star_import_gives_the_exports():
    namespace: dict = {}
    exec("from taugrad import *", namespace)
    assert namespace["tensor"] is taugrad.tensor and namespace["nn"] is taugrad.nn
    assert "grad_mode" not in namespace and "tensors" not in namespace


@pytest.mark.parametrize("alias, package", [(taugrad.functional, taugrad.nn.functional)])
def test_taugrad_functional_is_nn_functional(alias, package):
    assert alias.__all__ == package.__all__
    assert all(getattr(alias, name) is getattr(package, name) for name in package.__all__)


def test_data_is_datasets_and_its_loader_is_the_one_dataloader():
    assert all(getattr(taugrad.data, name) is getattr(taugrad.datasets, name) for name in taugrad.datasets.__all__)
    assert taugrad.data.DataLoader is taugrad.datasets.array_loader
    X, y = taugrad.datasets.moons(10, seed=0)
    loader = taugrad.data.DataLoader((X, y), batch_size=4, shuffle=True, seed=0)
    assert isinstance(loader, taugrad.utils.data.DataLoader)
    order = torch.from_numpy(__import__("numpy").random.default_rng(0).permutation(10)).tolist()
    batches = list(loader)
    assert [len(b[1]) for b in batches] == [4, 4, 2]
    assert [row for xb, yb in batches for row in xb.tolist()] == X[order].tolist()  # the seeded order

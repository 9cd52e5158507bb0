"""The package's public surface: names, the typed marker, no import of torch."""
import importlib
import pathlib
import subprocess
import sys

import taugrad


def test_tensor_function_is_not_shadowed_by_a_module():
    importlib.import_module("taugrad.tensors.core.node")
    importlib.import_module("taugrad.tensors.engine")
    t = taugrad.tensor([1.0, 2.0])
    assert isinstance(t, taugrad.Tensor) and t.dtype == taugrad.float32


def test_public_names():
    for name in ("Value", "Tensor", "tensor", "grad", "gradcheck", "gradgradcheck", "no_grad", "enable_grad",
                 "GradcheckError", "draw_dot", "detect_anomaly", "save", "load", "nn", "optim", "data", "func",
                 "functional", "Function", "manual_seed"):
        assert hasattr(taugrad, name), name


def test_py_typed_marker_ships():
    assert (pathlib.Path(taugrad.__file__).parent / "py.typed").exists()


def test_importing_taugrad_never_imports_torch():
    code = "import sys, taugrad, taugrad.nn, taugrad.optim, taugrad.func, taugrad.cli; print('torch' in sys.modules)"
    src = str(pathlib.Path(taugrad.__file__).parents[1])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": src})
    assert out.stdout.strip() == "False", out.stderr

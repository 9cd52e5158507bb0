"""`taugrad run script.py`: an unmodified PyTorch script runs on taugrad with torch's printed numbers."""
import subprocess
import sys
from pathlib import Path

import pytest

from taugrad.cli import main as cli_main
from taugrad.run import run_script, torch_is_taugrad

SCRIPTS = Path(__file__).parent / "scripts"
TAUGRAD = [sys.executable, "-m", "taugrad.cli"]


def _run(cmd, cwd=SCRIPTS):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_training_script_prints_torchs_numbers():
    with_torch = _run([sys.executable, "train_tiny.py", "--steps", "6"])
    with_taugrad = _run(TAUGRAD + ["run", "train_tiny.py", "--steps", "6"])
    assert with_torch.returncode == 0, with_torch.stderr
    assert with_taugrad.returncode == 0, with_taugrad.stderr
    assert with_taugrad.stdout == with_torch.stdout
    assert with_taugrad.stdout.count("step ") == 6


def test_python_dash_m_taugrad_run_is_the_same_command():
    out = _run([sys.executable, "-m", "taugrad.run", "train_tiny.py", "--steps", "2"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("step 0: loss 1.5058532790")


def test_a_module_taugrad_lacks_fails_with_one_line(tmp_path):
    script = tmp_path / "uses_fx.py"
    script.write_text("import torch\nimport torch.fx\nprint('unreachable')\n")
    out = _run(TAUGRAD + ["run", str(script)], cwd=tmp_path)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "taugrad run: error: the script imports torch.fx, and taugrad has no taugrad.fx"]


def test_exit_status_and_argv_are_the_scripts(tmp_path, capsys):
    script = tmp_path / "exits.py"
    script.write_text("import sys, torch\nprint(sys.argv[1:], torch.__name__)\nsys.exit(3)\n")
    assert cli_main(["run", str(script), "a", "--flag"]) == 3
    assert capsys.readouterr().out == "['a', '--flag'] taugrad\n"


def test_missing_script_is_one_line(capsys):
    assert cli_main(["run", "no_such_script.py"]) == 2
    assert "no such script: no_such_script.py" in capsys.readouterr().err


def test_torch_modules_are_taugrads_and_are_put_back_afterwards(tmp_path):
    import torch as real_torch

    script = tmp_path / "probe.py"
    script.write_text(
        "import torch, torch.nn.functional as F, torch.utils.data, taugrad\n"
        "assert torch is taugrad and F is taugrad.nn.functional\n"
        "assert torch.utils.data.DataLoader is taugrad.utils.data.DataLoader\n")
    run_script(str(script))
    assert sys.modules["torch"] is real_torch
    import torch.nn.functional as again
    assert again is real_torch.nn.functional


def test_an_import_error_inside_taugrad_is_not_disguised(monkeypatch):
    with torch_is_taugrad():
        with pytest.raises(ModuleNotFoundError, match="taugrad has no taugrad.no_such_module"):
            __import__("torch.no_such_module")


def test_processes_a_script_spawns_import_taugrad_as_torch_too():
    """mnist_hogwild's pattern: spawned children train the shared model, under taugrad run as under torch."""
    with_torch = _run([sys.executable, "hogwild_tiny.py"])
    with_taugrad = _run(TAUGRAD + ["run", "hogwild_tiny.py"])
    assert with_torch.returncode == 0 and with_taugrad.returncode == 0, with_taugrad.stderr
    assert with_taugrad.stdout == with_torch.stdout == "exit codes [0, 0]\nweight [[1.0, -2.0, 0.5]]\n"
    assert "Traceback" not in with_taugrad.stderr

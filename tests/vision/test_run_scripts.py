"""``taugrad run`` gives scripts torchvision as taugrad.vision: scripts in pytorch/examples' idiom, on tiny data."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from taugrad.run import run_script

from .files import write_mnist
from .png_reader import read_png

SCRIPTS = Path(__file__).parent / "scripts"
TAUGRAD = [sys.executable, "-m", "taugrad.cli", "run"]


def _run(args, cwd=SCRIPTS):
    return subprocess.run(TAUGRAD + args, cwd=cwd, capture_output=True, text=True, timeout=300)


def _digits(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8), rng.integers(0, 10, size=n).astype(np.uint8)


def test_an_mnist_convnet_trains_from_idx_files_and_saves_a_grid(tmp_path):
    images, labels = _digits(10, 0)
    test_images, test_labels = _digits(5, 1)
    write_mnist(tmp_path, images, labels, test_images, test_labels)
    out = _run(["mnist_convnet.py", "--data", str(tmp_path), "--out", str(tmp_path)])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    mean = (images[:4] / np.float32(255) - np.float32(0.1307)) / np.float32(0.3081)
    assert lines[0] == f"batch (4, 1, 28, 28) taugrad.float32 taugrad.int64 mean {mean.mean():.6f}"
    assert lines[1:3] == ["train batch 0 loss finite True", "train batch 1 loss finite True"]
    assert lines[3].startswith("tested 5 images, ")
    grid = read_png((tmp_path / "test_batch.png").read_bytes())
    assert grid.shape == (2 + 28 + 2, 2 + 3 * 30, 3)  # three images in a row, 2-pixel frames
    # the first image, un-normalized, in its cell: the file's bytes back within a rounding step
    cell = grid[2:30, 2:30, 0].astype(int)
    assert np.abs(cell - test_images[0].astype(int)).max() <= 1


def test_spawned_processes_import_torchvision_as_taugrad_vision(tmp_path):
    images, labels = _digits(8, 2)
    write_mnist(tmp_path, images, labels)
    out = _run(["hogwild_mnist.py", "--data", str(tmp_path)])
    assert out.returncode == 0, out.stderr
    assert sorted(line for line in out.stdout.splitlines() if line.startswith("rank")) == [
        "rank 0 trained on 8 images", "rank 1 trained on 8 images"]
    assert "exit codes [0, 0]" in out.stdout and "shared weights changed True" in out.stdout


def test_dcgan_data_path_on_fake_data(tmp_path):
    out = _run(["fake_gan_step.py", str(tmp_path)])
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["0 (4, 3, 8, 8) (4,) True True", "1 (2, 3, 8, 8) (2,) True True"]
    pixels = read_png((tmp_path / "real_0.png").read_bytes())
    assert pixels.shape == (2 + 8 + 2, 2 + 4 * 10, 3)
    assert pixels.max() == 255  # normalize=True maps the batch maximum to 1.0


def test_a_torchvision_module_taugrad_lacks_fails_with_one_line(tmp_path):
    script = tmp_path / "uses_models.py"
    script.write_text("import torchvision\nimport torchvision.models\nprint('unreachable')\n")
    out = _run([str(script)], cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "taugrad run: error: the script imports torchvision.models, and taugrad has no taugrad.vision.models"]


def test_torchvision_names_are_put_back_after_the_script(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text("import torchvision, torchvision.transforms as T, taugrad.vision\n"
                      "assert torchvision is taugrad.vision and T is taugrad.vision.transforms\n")
    before = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "torchvision"}
    run_script(str(script))
    assert {k: v for k, v in sys.modules.items() if k.split(".")[0] == "torchvision"} == before

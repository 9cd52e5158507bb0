"""examples/cifar_resnet.py: ResNet-20 as torch builds it, the example's run and claims, reading CIFAR-10 from a folder."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import taugrad

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cifar_resnet.py"


def load_example():
    spec = importlib.util.spec_from_file_location("cifar_resnet_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = load_example()


def close(actual, expected, name):
    """Equal to float64 rounding: entries are sums of many terms, so one near 0 carries its array's scale's rounding."""
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-11 * max(np.abs(expected).max(), 1.0),
                               err_msg=name)


def test_resnet20_has_torchs_parameters_and_float64_forward_loss_and_gradients():
    torch.manual_seed(0)
    theirs = example.resnet20(torch.nn).double()
    ours = example.resnet20(taugrad.nn).double()
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((4, 3, 32, 32)), rng.integers(0, 10, 4)
    loss_t = torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y))
    loss_g = taugrad.nn.functional.cross_entropy(ours(taugrad.from_numpy(x)), taugrad.from_numpy(y))
    loss_t.backward()
    loss_g.backward()
    np.testing.assert_allclose(loss_g.item(), loss_t.item(), rtol=1e-12)
    grads_t = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        close(p.grad.numpy(), grads_t[name].grad.numpy(), name)
    # the training-mode forward updated BatchNorm's running statistics as torch's did
    buffers_t = dict(theirs.named_buffers())
    for name, b in ours.named_buffers():
        close(b.numpy(), buffers_t[name].numpy(), name)


def test_two_steps_on_random_data_report_both_engines_and_agreeing_losses(tmp_path, capsys):
    import matplotlib  # noqa: F401  (optional dependency: --plot needs it)
    plot = tmp_path / "loss.png"
    assert example.main(["--steps", "2", "--batch-size", "4", "--train-size", "8", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "ResNet-20 (projection shortcuts), 272,474 parameters; random CIFAR-shaped data: 8 images" in out
    assert re.search(r"^step 1/2  loss \d\.\d{4}", out, re.M) and re.search(r"^step 2/2  loss", out, re.M)
    rates = dict(re.findall(r"^(taugrad|torch):\s+([\d,.]+) images/s", out, re.M))
    assert set(rates) == {"taugrad", "torch"} and all(float(r.replace(",", "")) > 0 for r in rates.values())
    first = re.search(r"^loss: taugrad (\d\.\d{4}) -> \d\.\d{4}, torch (\d\.\d{4}) -> ", out, re.M)
    assert first.group(1) == first.group(2)  # the same weights and batch give the same first loss
    worst = float(re.search(r"largest loss difference over the first 2 step\(s\): (\S+)", out).group(1))
    assert worst < 1e-4
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def cifar_records(labels, seed=0):
    """Bytes of CIFAR-10 binary records with these labels, and the (n, 3, 32, 32) pixels they hold."""
    pixels = np.random.default_rng(seed).integers(0, 256, (len(labels), 3, 32, 32), dtype=np.uint8)
    raw = b"".join(bytes([label]) + image.tobytes() for label, image in zip(labels, pixels))
    return raw, pixels


def write_binary_cifar(root):
    """A tiny cifar-10-batches-bin/ (two images per training batch, three test images); returns all the pixels."""
    folder = root / "cifar-10-batches-bin"
    folder.mkdir()
    train = []
    for i in range(1, 6):
        raw, pixels = cifar_records([i, i + 1], seed=i)
        (folder / f"data_batch_{i}.bin").write_bytes(raw)
        train.append(pixels)
    raw, test = cifar_records([7, 2, 5], seed=9)
    (folder / "test_batch.bin").write_bytes(raw)
    (folder / "batches.meta.txt").write_text("\n".join(f"class{i}" for i in range(10)) + "\n")
    return np.concatenate(train), test


def test_data_dir_gives_channel_planes_and_labels_then_trains_and_scores_the_test_images(tmp_path, capsys):
    train, test = write_binary_cifar(tmp_path)
    images, labels = example.load_cifar10(str(tmp_path), train=True)
    assert images.dtype == np.uint8 and images.flags.c_contiguous
    np.testing.assert_array_equal(images, train)  # (n, 3, 32, 32) as the records store them: red, green, blue planes
    assert labels.dtype == np.int64 and labels.tolist() == [1, 2, 2, 3, 3, 4, 4, 5, 5, 6]
    images, labels = example.load_cifar10(str(tmp_path), train=False)
    np.testing.assert_array_equal(images, test)
    assert labels.tolist() == [7, 2, 5]

    code = example.main(["--data", str(tmp_path), "--steps", "1", "--batch-size", "2", "--eval-size", "2",
                         "--no-torch", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and f"CIFAR-10 from {tmp_path}: 10 training images" in out
    assert re.search(r"^test accuracy: (0|50|100)\.00% on the first 2 test images$", out, re.M)
    assert "torch: not run" in out

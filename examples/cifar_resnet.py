"""ResNet-20 on CIFAR-10-shaped images, with PyTorch's images per second from the same run.

    python examples/cifar_resnet.py [--steps 50] [--batch-size 64] [--lr 0.1] [--seed 0]
                                    [--data DIR] [--plot loss.png] [--no-torch] [--no-progress]

The network is the CIFAR ResNet-20 of He et al. (2016), built by :func:`resnet20`
from whichever ``nn`` namespace it is given (taugrad's or torch's: the same code
builds both).  Trained with SGD (momentum 0.9, weight decay 5e-4) and
cross-entropy.  Data: seeded random CIFAR-shaped images and labels by default
(``--train-size`` of them), or the real CIFAR-10 with ``--data DIR``, where
``DIR`` is torchvision's CIFAR-10 root (holding ``cifar-10-batches-py/``, or the
binary version's ``cifar-10-batches-bin/``); then the test accuracy over the
first ``--eval-size`` test images is printed at the end.

When torch is importable (and ``--no-torch`` is not given), a torch copy of the
same model starts from taugrad's initial weights and trains on the same batches,
the two engines taking turns step by step (alternating which goes first), so
both throughputs come from the same stretch of the same machine.  Images per
second count the steps after the first (the warm-up step is left out when there
is more than one).  ``--plot`` draws both loss curves (matplotlib).
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional, Tuple

import numpy as np

import taugrad
import taugrad.nn.functional as F
from taugrad import nn, optim
from taugrad.learn.progress import TrainingProgress
from taugrad.vision.datasets import CIFAR10

# Per-channel mean and standard deviation of the CIFAR-10 training images (pixels in [0, 1]).
CIFAR_MEAN = np.array([0.4914, 0.4822, 0.4465], dtype=np.float32).reshape(1, 3, 1, 1)
CIFAR_STD = np.array([0.2470, 0.2435, 0.2616], dtype=np.float32).reshape(1, 3, 1, 1)


def resnet20(nn, num_classes: int = 10):
    """The CIFAR ResNet-20 of He et al. (2016), written against ``nn`` (``torch.nn`` or ``taugrad.nn``).

    ``conv3x3(3, 16) - BN - ReLU``, then three stages of three basic blocks with
    16, 32 and 64 channels on 32x32, 16x16 and 8x8 maps, global average pooling
    and ``Linear(64, num_classes)``.  A basic block computes
    ``relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))`` with 3x3 convolutions
    without bias; the first block of stages 2 and 3 has stride 2, and its
    shortcut is a 1x1 convolution with stride 2 followed by BatchNorm (the
    projection shortcut, the paper's "option B"; the other blocks add ``x``
    itself).  272,474 parameters for 10 classes.
    """
    class BasicBlock(nn.Module):
        def __init__(self, in_channels: int, channels: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(in_channels, channels, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(channels)
            self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(channels)
            self.relu = nn.ReLU()
            if stride != 1 or in_channels != channels:
                self.shortcut = nn.Sequential(nn.Conv2d(in_channels, channels, 1, stride=stride, bias=False),
                                              nn.BatchNorm2d(channels))
            else:
                self.shortcut = nn.Identity()

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + self.shortcut(x))

    def stage(in_channels: int, channels: int, stride: int):
        return nn.Sequential(BasicBlock(in_channels, channels, stride),
                             BasicBlock(channels, channels, 1), BasicBlock(channels, channels, 1))

    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        stage(16, 16, 1), stage(16, 32, 2), stage(32, 64, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, num_classes),
    )


def load_cifar10(root: str, train: bool) -> Tuple[np.ndarray, np.ndarray]:
    """CIFAR-10's training or test split under ``root``: (uint8 images (n, 3, 32, 32), int64 labels (n,)).

    ``root`` is laid out as for ``torchvision.datasets.CIFAR10``: it holds
    ``cifar-10-batches-py/`` (torchvision's download) or ``cifar-10-batches-bin/``
    (the binary version), read by :class:`taugrad.vision.datasets.CIFAR10`.
    """
    dataset = CIFAR10(root, train=train)
    return np.ascontiguousarray(dataset.data.transpose(0, 3, 1, 2)), np.asarray(dataset.targets, dtype=np.int64)


def normalise(images: np.ndarray) -> np.ndarray:
    """uint8 pixels to float32, scaled to [0, 1] and standardised per channel."""
    return (images.astype(np.float32) / 255.0 - CIFAR_MEAN) / CIFAR_STD


def random_cifar(n: int, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """``n`` random uint8 32x32 RGB images with random labels 0-9 (seeded)."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8), rng.integers(0, 10, n)


def batches(images: np.ndarray, labels: np.ndarray, batch_size: int, steps: int, seed: int):
    """``steps`` shuffled batches (float32 images, labels), reshuffling after every pass over the data."""
    rng = np.random.default_rng(seed + 1)
    order: np.ndarray = np.empty(0, dtype=np.int64)
    for _ in range(steps):
        if order.size < batch_size:
            order = np.concatenate([order, rng.permutation(len(labels))])
        take, order = order[:batch_size], order[batch_size:]
        yield normalise(images[take]), labels[take]


def torch_twin(model: nn.Module):
    """A torch ResNet-20 holding ``model``'s weights and buffers, or None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    twin = resnet20(torch.nn)
    twin.load_state_dict({k: torch.from_numpy(np.array(v.detach().numpy())) for k, v in model.state_dict().items()})
    return twin


def make_step(lib, model, lr: float):
    """One SGD training step of ``model`` with ``lib`` (taugrad or torch): returns the loss as a float."""
    optimizer = lib.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    as_tensor = lib.from_numpy

    def step(x: np.ndarray, y: np.ndarray) -> float:
        loss = lib.nn.functional.cross_entropy(model(as_tensor(x)), as_tensor(y))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def images_per_second(times: List[float], batch_size: int) -> float:
    """Throughput over the timed steps, leaving out the first (warm-up) when there are others."""
    timed = times[1:] if len(times) > 1 else times
    return batch_size * len(timed) / sum(timed)


def test_accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray, chunk: int = 500) -> float:
    model.eval()
    correct = 0
    with taugrad.no_grad():
        for start in range(0, len(labels), chunk):
            logits = model(taugrad.from_numpy(normalise(images[start:start + chunk])))
            correct += int((logits.argmax(1).numpy() == labels[start:start + chunk]).sum())
    model.train()
    return correct / len(labels)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train-size", type=int, default=1024, help="random images to draw (without --data)")
    parser.add_argument("--data", metavar="DIR", help="CIFAR-10 root as torchvision's (cifar-10-batches-py/ or -bin/)")
    parser.add_argument("--eval-size", type=int, default=1000, help="test images to score (with --data)")
    parser.add_argument("--plot", metavar="PNG", help="write the loss curves here (needs matplotlib)")
    parser.add_argument("--no-torch", action="store_true", help="do not run torch beside taugrad")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    if args.data:
        images, labels = load_cifar10(args.data, train=True)
        source = f"CIFAR-10 from {args.data}: {len(labels):,} training images"
    else:
        images, labels = random_cifar(args.train_size, args.seed)
        source = f"random CIFAR-shaped data: {len(labels):,} images, seed {args.seed}"
    taugrad.manual_seed(args.seed)
    model = resnet20(nn)
    twin = None if args.no_torch else torch_twin(model)
    count = sum(p.numel() for p in model.parameters())
    print(f"ResNet-20 (projection shortcuts), {count:,} parameters; {source}; batch {args.batch_size}")

    engines = {"taugrad": make_step(taugrad, model, args.lr)}
    if twin is not None:
        import torch

        engines["torch"] = make_step(torch, twin, args.lr)
    losses = {name: [] for name in engines}
    times = {name: [] for name in engines}
    names = list(engines)
    with TrainingProgress(args.steps, enabled=not args.no_progress, unit="step",
                          description="ResNet-20") as progress:
        for i, (x, y) in enumerate(batches(images, labels, args.batch_size, args.steps, args.seed), start=1):
            for name in names[i % len(names):] + names[:i % len(names)]:  # the first to run alternates
                start = time.perf_counter()
                losses[name].append(engines[name](x, y))
                times[name].append(time.perf_counter() - start)
            progress.update(i, losses["taugrad"][-1], None, images_per_second(times["taugrad"], args.batch_size))

    print("loss: " + ", ".join(f"{name} {values[0]:.4f} -> {values[-1]:.4f}" for name, values in losses.items()))
    if twin is not None:
        # float32 rounding differs between the engines, and each SGD step amplifies it: the first
        # steps are where the losses must agree (in float64 they agree to ~1e-15 throughout)
        first = min(3, len(losses["torch"]))
        worst = max(abs(a - b) for a, b in zip(losses["taugrad"][:first], losses["torch"][:first]))
        print(f"largest loss difference over the first {first} step(s): {worst:.1e}")
    rates = {name: images_per_second(times[name], args.batch_size) for name in engines}
    for name in engines:
        print(f"{name + ':':<8} {rates[name]:10,.1f} images/s")
    if twin is not None:
        warm_up = "; step 1 left out as warm-up" if args.steps > 1 else ""
        print(f"taugrad / torch time per image: {rates['torch'] / rates['taugrad']:.2f}x "
              f"(same run, same batches, alternating steps{warm_up})")
    else:
        print("torch: not run (not installed, or --no-torch)")
    if args.data:
        test_images, test_labels = load_cifar10(args.data, train=False)
        n = min(args.eval_size, len(test_labels))
        print(f"test accuracy: {100 * test_accuracy(model, test_images[:n], test_labels[:n]):.2f}% "
              f"on the first {n:,} test images")
    if args.plot:
        from taugrad.learn.plots import plot_history

        curves = {f"{name} loss": values for name, values in losses.items()}
        print(f"wrote {plot_history(curves, args.plot, title='ResNet-20 training loss', xlabel='step')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

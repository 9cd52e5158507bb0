"""A small CNN on scikit-learn's 8x8 digits, against scikit-learn's MLPClassifier(128) in the same run.

    python examples/digits_cnn.py [--seeds 0 1 2 3 4] [--epochs 7] [--batch-size 64] [--lr 0.01] [--plots DIR]

Split: 25% stratified test set, ``random_state=0``.  The model is the one
``taugrad train digits --model cnn`` trains (``taugrad.cli.train_engines.digits_cnn``)::

    Conv2d(1, 32, 3, padding=1, bias=False) - MaxPool2d(2) - BatchNorm2d(32) - ReLU
    - Conv2d(32, 64, 3, bias=False) - BatchNorm2d(64) - ReLU - Flatten - Linear(256, 10)

Adam (lr 1e-2) with cosine annealing to 0, batch 64, cross-entropy with
label smoothing 0.1, 7 epochs, pixels scaled to [0, 1].  Measured (README,
CNN section): without BatchNorm 98.0-98.7% after 15 epochs and 99.1% only
after 30 with random shifts; with it, 99.1-99.8% after 7 (pooling before
the first BatchNorm: the same accuracy on a 4x smaller map, faster).  Each seed's fit
is timed (data preparation included) next to scikit-learn's fit in the same
run, and the script prints both; ``--plots`` writes the loss/accuracy
curves, the learned first-layer filters and the misclassified test digits
(matplotlib).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings

import numpy as np

import taugrad
import taugrad.nn.functional as F
from taugrad import nn, optim
from taugrad.cli.cnn_plots import plot_filters, plot_mistakes
from taugrad.cli.train_engines import CNN_LABEL_SMOOTHING, digits_cnn
from taugrad.datasets import array_loader


def as_images(X: np.ndarray) -> np.ndarray:
    """(n, 64) pixels of 0..16 as (n, 1, 8, 8) float32 in [0, 1]."""
    return (np.asarray(X, dtype=np.float32) / 16.0).reshape(-1, 1, 8, 8)


def train_cnn(X_train, y_train, seed: int, epochs: int = 7, batch_size: int = 64, lr: float = 1e-2,
              history=None, X_test=None, y_test=None):
    """Train from raw pixels; returns (model, predict).  ``history``: a dict to fill per epoch (slower)."""
    images = as_images(X_train)
    taugrad.manual_seed(seed)
    model = digits_cnn()
    optimizer = optim.Adam(model.parameters(), lr=lr)
    loader = array_loader((images, np.asarray(y_train)), batch_size=batch_size, shuffle=True, seed=seed)
    schedule = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * len(loader))
    for _ in range(epochs):
        total = 0.0
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb, label_smoothing=CNN_LABEL_SMOOTHING)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            total += float(loss.item()) * len(yb)
        if history is not None:
            history["loss"].append(total / len(images))
            history["train_accuracy"].append(accuracy(model, X_train, y_train))
            history["test_accuracy"].append(accuracy(model, X_test, y_test))
    model.eval()
    return model, lambda X: predict(model, X)


def predict(model: nn.Module, X: np.ndarray) -> np.ndarray:
    model.eval()
    with taugrad.no_grad():
        out = model(as_images(X))._data.argmax(axis=1)
    model.train()
    return out


def accuracy(model: nn.Module, X, y) -> float:
    return float(np.mean(predict(model, X) == y))


def main() -> int:
    try:
        from sklearn.datasets import load_digits  # optional dependency
        from sklearn.exceptions import ConvergenceWarning  # optional dependency
        from sklearn.model_selection import train_test_split  # optional dependency
        from sklearn.neural_network import MLPClassifier  # optional dependency
    except ImportError:
        sys.exit("digits_cnn needs scikit-learn: pip install 'taugrad[datasets]'")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--epochs", type=int, default=7)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--plots", metavar="DIR", help="write curves, filters and mistakes here")
    args = parser.parse_args()

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    train_cnn(X_train[:64], y_train[:64], 0, epochs=1)  # warm-up: first-call costs
    rows = []
    for seed in args.seeds:
        start = time.perf_counter()
        model, ours = train_cnn(X_train, y_train, seed, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr)
        ours_time = time.perf_counter() - start
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = MLPClassifier(hidden_layer_sizes=(128,), random_state=seed).fit(X_train, y_train)
        theirs_time = time.perf_counter() - start
        rows.append((seed, float(np.mean(ours(X_test) == y_test)), ours_time, clf.score(X_test, y_test), theirs_time))
        print(f"seed {seed}: taugrad CNN {100 * rows[-1][1]:.2f}% in {ours_time:.2f} s | "
              f"sklearn MLPClassifier(128) {100 * rows[-1][3]:.2f}% in {theirs_time:.2f} s", flush=True)
    med = statistics.median
    print(f"median over {len(rows)} seeds: taugrad CNN {100 * med(r[1] for r in rows):.2f}% in "
          f"{med(r[2] for r in rows):.2f} s; sklearn {100 * med(r[3] for r in rows):.2f}% in "
          f"{med(r[4] for r in rows):.2f} s")
    if args.plots:
        from taugrad.learn.plots import plot_history  # needs matplotlib
        history = {"loss": [], "train_accuracy": [], "test_accuracy": []}
        model, ours = train_cnn(X_train, y_train, args.seeds[0], epochs=args.epochs, batch_size=args.batch_size,
                                lr=args.lr, history=history,
                                X_test=X_test, y_test=y_test)
        print("plots:", plot_history(history, f"{args.plots}/digits_cnn_training.png", title="digits CNN"),
              plot_filters(model, f"{args.plots}/digits_cnn_filters.png"),
              plot_mistakes(ours, X_test, y_test, f"{args.plots}/digits_cnn_mistakes.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

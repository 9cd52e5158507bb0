"""``taugrad demo``: train micrograd's moons MLP with the scalar engine, in front of you.

The run is micrograd's demo: ``MLP(2, [16, 16, 1])`` on 100 points of
``make_moons(noise=0.1)``, SVM max-margin loss + 1e-4 L2, SGD with the learning
rate falling linearly from 1.0 towards 0.1 (0.109 at the last of 100 steps).
Then it gradient-checks a batch of random expressions against finite
differences and writes its plots.
"""
from __future__ import annotations

import argparse
import os
import random
import time
from typing import Any, List, Sequence

import numpy as np

from taugrad.cli.common import MAX_SEED, CommandError, check_directory, check_seed
from taugrad.cli.gradcheck import MAX_COUNT
from taugrad.learn.plots import plot_decision_boundary, plot_history
from taugrad.learn.randexpr import check_random_expressions
from taugrad.scalar import nn
from taugrad.scalar.moons import learning_rate, load_moons, train_step


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="train micrograd's moons MLP with the scalar engine and gradient-check random expressions",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--steps", type=int, default=100, help="SGD steps (default 100)")
    parser.add_argument("--seed", type=int, default=1337,
                        help=f"seed for data and weights, 0 to {MAX_SEED} (default 1337)")
    parser.add_argument("--checks", type=int, default=20,
                        help=f"random expressions to gradient-check, 0 to {MAX_COUNT:,} (default 20)")
    parser.add_argument("--plots", metavar="DIR", default="taugrad-demo", help="folder for the PNG plots (default ./taugrad-demo)")
    parser.add_argument("--no-plots", action="store_true", help="do not write plots")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.steps < 1:
        raise CommandError(f"--steps must be at least 1, got {args.steps}")
    if not 0 <= args.checks <= MAX_COUNT:
        raise CommandError(f"--checks must be between 0 and {MAX_COUNT:,}, got {args.checks}")
    check_seed(args.seed)
    if not args.no_plots and _matplotlib_available():
        check_directory(args.plots)  # now, not after the training it would waste
    X, y = load_moons(seed=args.seed)
    random.seed(args.seed)
    model = nn.MLP(2, [16, 16, 1])
    print(f"taugrad demo: {model.__class__.__name__}(2, [16, 16, 1]), {len(model.parameters())} parameters, "
          f"on {len(X)} moons points; SVM loss + 1e-4 L2; {_schedule(args.steps)}")
    history: dict = {"loss": [], "train_accuracy": []}
    every = max(1, args.steps // 10)
    start = time.perf_counter()
    for step in range(args.steps):
        loss, accuracy = train_step(model, X, y, step, args.steps)
        history["loss"].append(loss)
        history["train_accuracy"].append(accuracy)
        if step % every == 0 or step == args.steps - 1:
            print(f"  step {step:3d}  loss {loss:.6f}  accuracy {accuracy:6.1%}  lr {learning_rate(step, args.steps):.3f}")
    seconds = time.perf_counter() - start
    print(f"final training accuracy: {history['train_accuracy'][-1]:.1%} "
          f"({_plural(args.steps, 'step')} in {seconds:.2f} s, {1e3 * seconds / args.steps:.1f} ms/step)")
    failures = _gradcheck_batch(args.checks, args.seed) if args.checks else 0
    if not args.no_plots:
        _write_plots(args.plots, model, X, y, history)
    return 1 if failures else 0


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _schedule(steps: int) -> str:
    """The learning rates actually used: the last step stops short of the schedule's 0.1 end point."""
    first, last = learning_rate(0, steps), learning_rate(steps - 1, steps)
    if steps == 1:
        return f"SGD lr {first:.3f} for 1 step"
    return f"SGD lr {first:.3f} -> {last:.3f} over {steps} steps"


def _matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _gradcheck_batch(count: int, seed: int) -> int:
    """Gradient-check ``count`` random expressions; print a summary line; return the failures."""
    results = check_random_expressions(count, seed=seed)
    failures = [r for r in results if not r.passed]
    worst = max((r.worst for r in results if r.worst is not None), key=lambda d: d.error)
    print(f"gradient check: {_plural(count, 'random expression')} with reused subexpressions: "
          f"{count - len(failures)} agree with finite differences; worst |analytic - numeric| = "
          f"{worst.error:.1e} for d/d{worst.name} of {worst.expression}")
    for r in failures:
        print(f"  MISMATCH in {r.expression.text}: " + ", ".join(
            f"d/d{d.name} analytic {d.analytic!r} vs numeric {d.numeric!r}" for d in r.comparisons))
    return len(failures)


def _write_plots(folder: str, model: Any, X: Sequence[Sequence[float]], y: Sequence[int], history: dict) -> None:
    if not _matplotlib_available():
        print("plots skipped: matplotlib is not installed (pip install 'taugrad[plots]')")
        return
    try:
        os.makedirs(folder, exist_ok=True)
        curves = plot_history(history, os.path.join(folder, "moons_training.png"), title="taugrad demo: moons")
        boundary = plot_decision_boundary(
            _numpy_forward(model), X, [(v + 1) // 2 for v in y], os.path.join(folder, "moons_boundary.png"),
            title="decision boundary (scalar engine MLP)",
        )
    except OSError as err:
        raise CommandError(f"cannot write plots to {folder!r}: {err.strerror or err}") from err
    print(f"plots: {curves}, {boundary}")


def _numpy_forward(model: Any):
    """The trained scalar MLP's forward pass on a grid of points, with its weights copied into NumPy.

    Same maths as ``model(x)`` (ReLU hidden layers, linear output), evaluated for
    tens of thousands of grid points at once instead of building a graph per point.
    """
    layers: List[tuple] = []
    for layer in model.layers:
        W = np.array([[w.data for w in n.w] for n in layer.neurons])
        b = np.array([n.b.data for n in layer.neurons])
        layers.append((W, b, layer.neurons[0].activation))

    def predict(points: "np.ndarray") -> "np.ndarray":
        h = points
        for W, b, activation in layers:
            h = h @ W.T + b
            if activation == "relu":
                h = np.maximum(h, 0.0)
            elif activation == "tanh":
                h = np.tanh(h)
        return h

    return predict

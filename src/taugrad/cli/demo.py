"""``taugrad demo``: train micrograd's moons MLP with the scalar engine, in front of you.

The run is micrograd's demo: ``MLP(2, [16, 16, 1])`` on 100 points of
``make_moons(noise=0.1)``, SVM max-margin loss + 1e-4 L2, SGD with the learning
rate falling linearly from 1.0 towards 0.1 (0.109 at the last of 100 steps).
Then it gradient-checks a batch of random expressions against finite
differences and writes its plots.  The network is built with fused neurons
(``fused=True``: one graph node per neuron, the same numbers, faster);
``taugrad.scalar.nn`` builds micrograd's granular graph unless asked.

``--engine my_engine.py`` (exercise 6): the same training with *your* ``Value``
class (``--class``), in a sandbox process, beside taugrad's ``Value`` from the
same initial weights, step by step on micrograd's granular graph; the first
step where they differ is named, and ``taugrad check``'s rule checks say which
rule is likely at fault.  Your class needs ``+`` and ``*`` between Values,
``relu()`` and ``backward()``.  Exit status 1 when they differ, 2 when your
file cannot be run.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import sys
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
    parser.add_argument("--engine", metavar="PATH.py", help="train your own Value class from this file, beside taugrad's")
    parser.add_argument("--class", dest="class_name", default="Value", metavar="NAME",
                        help="the class to train with --engine (default: Value)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                        help="time limit for your engine's whole run with --engine (default: 600)")
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
    if args.engine is not None:
        return _run_engine(args, X, y)
    model = nn.MLP(2, [16, 16, 1], fused=True)
    print(f"taugrad demo: {model.__class__.__name__}(2, [16, 16, 1]), {len(model.parameters())} parameters "
          f"(fused neurons, fused=True), on {len(X)} moons points; SVM loss + 1e-4 L2; {_schedule(args.steps)}")
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


def _run_engine(args: argparse.Namespace, X: list, y: list) -> int:
    """``--engine``: the learner's class and taugrad's trained side by side (see the module docstring)."""
    from taugrad.learn.check import CheckError  # imported by --engine only, like every command's parts
    from taugrad.learn.side_by_side import train_side_by_side  # the same

    if not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise CommandError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    if not os.path.isfile(args.engine):
        raise CommandError(f"{args.engine}: no such file")
    if not args.class_name.isidentifier():
        raise CommandError(f"--class must be a Python name, got {args.class_name!r}")
    model = nn.MLP(2, [16, 16, 1])  # draws micrograd's initial weights; both engines start from them
    weights = [[[n.b.data, *(w.data for w in n.w)] for n in layer.neurons] for layer in model.layers]
    print(f"taugrad demo --engine {args.engine}: your {args.class_name} beside taugrad's Value, MLP(2, [16, 16, 1]) "
          f"(micrograd's granular graph), {len(model.parameters())} parameters from the same initial weights, "
          f"on {len(X)} moons points; SVM loss + 1e-4 L2; {_schedule(args.steps)}")
    try:
        result = train_side_by_side(args.engine, args.class_name, weights, X, y, args.steps, timeout=args.timeout)
    except CheckError as err:
        print(f"taugrad demo: error: {err}", file=sys.stderr)
        for line in err.frames:
            print(line, file=sys.stderr)
        return 2
    mine, theirs = result.accuracies[-1], result.reference_accuracies[-1]
    if result.ok:
        print(f"your engine matches taugrad's at every step: final training accuracy {mine:.1%} (taugrad {theirs:.1%})")
    else:
        print(f"first difference at step {result.first_difference}: {result.difference}")
        print(f"final training accuracy {mine:.1%} (taugrad {theirs:.1%}); the rule checks of taugrad check say:")
        for line in result.suspects:
            print(f"  {line}")
    if not args.no_plots:
        history = {"loss (yours)": result.losses, "loss (taugrad)": result.reference_losses,
                   "accuracy (yours)": result.accuracies, "accuracy (taugrad)": result.reference_accuracies}
        for layer, trained in zip(model.layers, result.weights):  # draw the learner's trained network
            for neuron, (b, *ws) in zip(layer.neurons, trained):
                neuron.b.data = b
                for w, value in zip(neuron.w, ws):
                    w.data = value
        _write_plots(args.plots, model, X, y, history, title=f"your {args.class_name} beside taugrad's Value")
    return 0 if result.ok else 1


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


def _write_plots(folder: str, model: Any, X: Sequence[Sequence[float]], y: Sequence[int], history: dict,
                 title: str = "taugrad demo: moons") -> None:
    if not _matplotlib_available():
        print("plots skipped: matplotlib is not installed (pip install 'taugrad[plots]')")
        return
    try:
        os.makedirs(folder, exist_ok=True)
        curves = plot_history(history, os.path.join(folder, "moons_training.png"), title=title)
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

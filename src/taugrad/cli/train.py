"""``taugrad train DATASET``: train a classifier with either engine and show it live.

The dataset is split 75/25 (stratified, seeded), inputs are standardised with
the training part's mean and standard deviation, and the model is trained with
softmax cross-entropy by SGD, Adam or AdamW in mini-batches.  The run shows a
progress bar (epoch, loss, training accuracy, samples/s), prints the final
train and test accuracy, and on request writes a checkpoint (``--save``) and
PNG plots (``--plots``: loss/accuracy curves, and for 2-D data the decision
boundary).

Engines: ``tensor`` (``taugrad.Tensor`` and ``taugrad.nn``, any dataset) and
``scalar`` (``taugrad.Value`` and micrograd's ``MLP``, one graph node per neuron;
for the small 2-D datasets).

Every user mistake (unknown dataset, a negative learning rate, an unwritable
path...) is reported as one line before any training starts.
"""
from __future__ import annotations

import argparse
import math
import os
import time
from typing import Any, Dict, List, Optional

import numpy as np

import taugrad
from taugrad import datasets
from taugrad.cli import train_engines
from taugrad.cli.common import MAX_SEED, CommandError, check_directory, check_seed
from taugrad.datasets import DATASETS
from taugrad.debug.diagnostics import plot_gradient_flow, print_table
from taugrad.cli.cnn_plots import plot_filters, plot_mistakes
from taugrad.learn.plots import plot_decision_boundary, plot_history
from taugrad.learn.progress import TrainingProgress

ENGINES = ("tensor", "scalar")
MODELS = ("mlp", "linear", "cnn")
OPTIMIZERS = ("sgd", "adam", "adamw")

#: defaults that depend on the engine and the dataset: (hidden, epochs, batch size, optimizer, lr)
DEFAULTS = {
    ("tensor", "2d"): ("32,32", 200, 32, "adam", 0.01),
    ("tensor", "digits"): ("128", 25, 32, "adam", 0.002),
    ("tensor", "cnn"): ("none", 7, 64, "adam", 0.01),
    ("scalar", "2d"): ("16,16", 100, 32, "adam", 0.02),
}

#: upper bounds that keep a typo (--hidden 99999999999) from becoming a multi-terabyte allocation
MAX_WIDTH = 100_000
MAX_SAMPLES = 10_000_000
#: the scalar engine builds ~12 KB of graph per parameter per 32-sample batch, hence its far lower cap
MAX_PARAMETERS = {"tensor": 100_000_000, "scalar": 100_000}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a classifier on a dataset with a live progress bar",
        description=__doc__.split("\n\n")[0].strip(),
        epilog="Datasets: moons, circles, spirals, blobs (2-D, generated) and digits (8x8 images, scikit-learn). "
        "Example: taugrad train moons --engine scalar --epochs 100 --plots out/",
    )
    parser.add_argument("dataset", metavar="DATASET", help="moons, circles, spirals, blobs or digits")
    parser.add_argument("--engine", default="tensor", help="tensor (default) or scalar (2-D datasets only)")
    parser.add_argument("--model", default="mlp", help="mlp (default), linear (softmax regression) or cnn (digits)")
    parser.add_argument("--hidden", metavar="SIZES",
                        help=f"hidden layer sizes, e.g. 32,32, each at most {MAX_WIDTH:,}, or 'none' "
                             f"(default depends on data); at most {MAX_PARAMETERS['tensor']:,} parameters "
                             f"with the tensor engine, {MAX_PARAMETERS['scalar']:,} with the scalar one")
    parser.add_argument("--epochs", metavar="N", help="passes over the training set")
    parser.add_argument("--batch-size", metavar="N", help="samples per optimizer step")
    parser.add_argument("--lr", metavar="RATE", help="learning rate")
    parser.add_argument("--optimizer", help="sgd, adam (default) or adamw")
    parser.add_argument("--momentum", metavar="M", default="0.9", help="SGD momentum (default 0.9)")
    parser.add_argument("--weight-decay", metavar="W", default="0", help="weight decay (default 0)")
    parser.add_argument("--seed", metavar="N", default="0",
                        help=f"seed for data, split, weights, shuffles, 0 to {MAX_SEED} (default 0)")
    parser.add_argument("--samples", metavar="N", default="200",
                        help=f"points in generated 2-D datasets, 10 to {MAX_SAMPLES:,} (default 200)")
    parser.add_argument("--noise", metavar="STD", help="noise of generated 2-D datasets (default per dataset)")
    parser.add_argument("--test-size", metavar="FRACTION", default="0.25", help="held-out fraction (default 0.25)")
    parser.add_argument("--save", metavar="PATH", help="write a checkpoint (.npz) of model, optimizer and scaler")
    parser.add_argument("--plots", metavar="DIR",
                        help="write training-curve PNGs here (2-D data: the decision boundary; "
                             "--model cnn: the first-layer filters and the misclassified digits)")
    parser.add_argument("--no-progress", action="store_true", help="no progress display (final results only)")
    parser.add_argument("--diagnose", action="store_true",
                        help="record per-layer gradient norms and dead ReLU units; print a table and write "
                             "DATASET_gradients.png (into --plots DIR, else the current directory)")
    parser.set_defaults(run=run)


# ---------------------------------------------------------------------------
# argument checking: every problem is a one-line CommandError
# ---------------------------------------------------------------------------


def _number(text: Optional[str], option: str, kind: type = float, minimum: Optional[float] = None,
            strictly_positive: bool = False, maximum: Optional[float] = None) -> Any:
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise CommandError(f"{option} must be {'an integer' if kind is int else 'a number'}, got {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise CommandError(f"{option} must be a finite number, got {text!r}")
    if strictly_positive and not value > 0:
        raise CommandError(f"{option} must be positive, got {text}")
    if minimum is not None and value < minimum:
        raise CommandError(f"{option} must be at least {minimum}, got {text}")
    if maximum is not None and value > maximum:
        raise CommandError(f"{option} must be at most {maximum:,}, got {text}")
    return value


def _choice(text: str, option: str, choices: tuple) -> str:
    if text not in choices:
        raise CommandError(f"unknown {option} {text!r}; choose one of {', '.join(choices)}")
    return text


def _hidden_sizes(text: str) -> List[int]:
    if not text.strip():  # most likely an unset shell variable: do not silently drop the hidden layers
        raise CommandError("--hidden is empty; give layer sizes such as 32,32 (or 'none' for no hidden layer)")
    if text.strip() == "none":
        return []
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise CommandError(f"--hidden must be comma-separated layer sizes such as 32,32, got {text!r}") from None
    if any(size < 1 for size in sizes):
        raise CommandError(f"--hidden sizes must be positive, got {text!r}")
    if max(sizes) > MAX_WIDTH:
        raise CommandError(f"--hidden sizes must be at most {MAX_WIDTH:,}, got {text!r}")
    return sizes


def _check_output_file(path: str) -> str:
    """Fail now, not after training, when ``path`` cannot be written."""
    if os.path.isdir(path):
        raise CommandError(f"--save {path!r} is a directory; give a file name such as model.npz")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CommandError(f"cannot write --save {path!r}: directory {directory!r} does not exist")
    if not os.access(directory, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise CommandError(f"cannot write --save {path!r}: permission denied")
    return path


def _check_plot_directory(path: str) -> str:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError("--plots needs matplotlib: pip install 'taugrad[plots]'") from None
    return check_directory(path)


def _check_diagnose(config: Dict[str, Any]) -> Optional[str]:
    """Where ``--diagnose`` writes its plot (None without matplotlib: the table is still printed)."""
    if config["engine"] != "tensor":
        raise CommandError("--diagnose needs --engine tensor (it hooks taugrad.nn modules)")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    directory = config["plots"] or os.curdir
    if not os.access(directory, os.W_OK):
        raise CommandError(f"--diagnose cannot write its plot to {os.path.abspath(directory)!r}: permission denied")
    return os.path.join(directory, f"{config['dataset']}_gradients.png")


def parse_config(args: argparse.Namespace) -> Dict[str, Any]:
    """Check and convert every option; raise CommandError on the first bad one."""
    dataset = _choice(args.dataset, "dataset", tuple(DATASETS))
    engine = _choice(args.engine, "--engine", ENGINES)
    two_dimensional = DATASETS[dataset][1]
    if engine == "scalar" and not two_dimensional:
        raise CommandError(
            f"the scalar engine is for the small 2-D datasets (one graph node per neuron); use --engine tensor for {dataset}"
        )
    kind = "2d" if two_dimensional else ("cnn" if args.model == "cnn" and engine == "tensor" else "digits")
    hidden, epochs, batch_size, optimizer, lr = DEFAULTS[(engine, kind)]
    config: Dict[str, Any] = {
        "dataset": dataset,
        "two_dimensional": two_dimensional,
        "engine": engine,
        "model": _choice(args.model, "--model", MODELS),
        "hidden": _hidden_sizes(args.hidden if args.hidden is not None else hidden),
        "epochs": _number(args.epochs if args.epochs is not None else epochs, "--epochs", int, minimum=1),
        "batch_size": _number(args.batch_size if args.batch_size is not None else batch_size, "--batch-size", int,
                              minimum=1),
        "optimizer": _choice(args.optimizer or optimizer, "--optimizer", OPTIMIZERS),
        "lr": _number(args.lr if args.lr is not None else lr, "--lr", strictly_positive=True),
        "momentum": _number(args.momentum, "--momentum", minimum=0.0),
        "weight_decay": _number(args.weight_decay, "--weight-decay", minimum=0.0),
        "seed": check_seed(_number(args.seed, "--seed", int)),
        "samples": _number(args.samples, "--samples", int, minimum=10, maximum=MAX_SAMPLES),
        "noise": None if args.noise is None else _number(args.noise, "--noise", minimum=0.0),
        "test_size": _number(args.test_size, "--test-size"),
        "save": None if args.save is None else _check_output_file(args.save),
        "plots": None if args.plots is None else _check_plot_directory(args.plots),
        "progress": not args.no_progress,
        "diagnose": bool(args.diagnose),
        "diagnose_plot": None,
    }
    if config["diagnose"]:
        config["diagnose_plot"] = _check_diagnose(config)
    if not 0.0 < config["test_size"] < 1.0:
        raise CommandError(f"--test-size must be between 0 and 1, got {args.test_size}")
    if config["model"] == "cnn" and (dataset != "digits" or engine != "tensor"):
        raise CommandError("--model cnn is for the 8x8 images of digits, with --engine tensor")
    if config["model"] in ("linear", "cnn"):
        config["hidden"] = []
    return config


# ---------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------


def load_data(config: Dict[str, Any]) -> Dict[str, np.ndarray]:
    """Load, split (stratified) and standardise; the scaler is fitted on the training part."""
    try:
        X, y = datasets.load(config["dataset"], n_samples=None if not config["two_dimensional"] else config["samples"],
                             noise=config["noise"], seed=config["seed"])
    except ModuleNotFoundError as err:
        raise CommandError(str(err)) from None
    X_train, X_test, y_train, y_test = datasets.train_test_split(X, y, test_size=config["test_size"],
                                                                 seed=config["seed"])
    mean = X_train.mean(axis=0)
    std = X_train.std(axis=0)
    std[std == 0] = 1.0  # constant features (blank digit pixels) stay 0 instead of dividing by 0
    return {
        "X_raw": X, "y": y, "mean": mean, "std": std,
        "X_train": (X_train - mean) / std, "y_train": y_train,
        "X_test": (X_test - mean) / std, "y_test": y_test,
        "n_classes": int(y.max()) + 1,
    }


def run(args: argparse.Namespace) -> int:
    config = parse_config(args)
    try:
        return _train(config)
    except MemoryError:
        # within the bounds a model and dataset can still outgrow this machine (wide layers x many samples)
        raise CommandError(f"out of memory for {_sizes(config)}; try smaller sizes") from None


def _sizes(config: Dict[str, Any]) -> str:
    hidden = ",".join(map(str, config["hidden"])) or "none"
    samples = f", --samples {config['samples']:,}" if config["two_dimensional"] else ""
    return f"--hidden {hidden}{samples}, --batch-size {config['batch_size']:,}"


def _check_model_size(config: Dict[str, Any], n_features: int, n_classes: int) -> None:
    """Refuse a model too big for its engine before allocating it (one line, not a MemoryError)."""
    sizes = [n_features, *config["hidden"], n_classes]
    count = sum((fan_in + 1) * fan_out for fan_in, fan_out in zip(sizes, sizes[1:]))
    limit = MAX_PARAMETERS[config["engine"]]
    if count > limit:
        raise CommandError(f"--hidden {','.join(map(str, config['hidden']))} makes {count:,} parameters; "
                           f"the {config['engine']} engine's limit is {limit:,}")


def _train(config: Dict[str, Any]) -> int:
    arrays = load_data(config)
    _check_model_size(config, arrays["X_train"].shape[1], arrays["n_classes"])
    trainer = train_engines.make_trainer(config, arrays["X_train"], arrays["y_train"], arrays["n_classes"])
    monitor = trainer.diagnose() if config["diagnose"] else None
    n_train, n_test = len(arrays["y_train"]), len(arrays["y_test"])
    print(f"{config['dataset']}: {n_train} train / {n_test} test samples, {arrays['X_train'].shape[1]} features, "
          f"{arrays['n_classes']} classes")
    print(f"model: {trainer.describe()}, {trainer.parameter_count():,} parameters; engine {config['engine']}, "
          f"{config['optimizer']} lr {config['lr']:g}, {config['epochs']} epochs, batch size {config['batch_size']}")

    started = time.perf_counter()
    history = _fit(config, trainer, arrays)
    elapsed = time.perf_counter() - started

    print(f"train accuracy: {100 * history['train_accuracy'][-1]:.2f}%")
    print(f"test accuracy:  {100 * history['test_accuracy'][-1]:.2f}%")
    print(f"trained in {elapsed:.2f} s")
    if monitor is not None:
        _report_diagnostics(config, trainer, monitor)
    if config["plots"]:
        _write_plots(config, arrays, trainer, history)
    if config["save"]:
        _save_checkpoint(config, arrays, trainer, history)
    return 0


def _fit(config: Dict[str, Any], trainer: Any, arrays: Dict[str, Any]) -> Dict[str, List[float]]:
    """The epochs, with the progress display; returns the loss and accuracy history."""
    history: Dict[str, List[float]] = {"loss": [], "train_accuracy": [], "test_accuracy": []}
    n_train = len(arrays["y_train"])
    # a too-large --lr overflows to inf/nan: NumPy's warnings (with source lines) would only precede
    # the one-line "training diverged" error below, so they are silenced here
    with np.errstate(all="ignore"), \
            TrainingProgress(config["epochs"], enabled=config["progress"], description=config["dataset"]) as progress:
        for epoch in range(1, config["epochs"] + 1):
            epoch_start = time.perf_counter()
            loss = trainer.train_epoch()
            seconds = time.perf_counter() - epoch_start
            if not math.isfinite(loss):
                raise CommandError(f"training diverged at epoch {epoch} (loss {loss}); try a smaller --lr")
            history["loss"].append(loss)
            history["train_accuracy"].append(trainer.accuracy(arrays["X_train"], arrays["y_train"]))
            history["test_accuracy"].append(trainer.accuracy(arrays["X_test"], arrays["y_test"]))
            progress.update(epoch, loss, history["train_accuracy"][-1], n_train / max(seconds, 1e-9))
    return history


def _report_diagnostics(config: Dict[str, Any], trainer: Any, monitor: Any) -> None:
    monitor.close()
    print_table(monitor, title=f"gradient flow of {trainer.describe()}")
    if config["diagnose_plot"] is None:
        print("diagnostics plot: skipped (needs matplotlib: pip install 'taugrad[plots]')")
        return
    title = f"{config['dataset']}: gradient flow of {trainer.describe()}"
    try:
        print("diagnostics plot: " + plot_gradient_flow(monitor, config["diagnose_plot"], title=title))
    except OSError as err:
        raise CommandError(f"cannot write {config['diagnose_plot']!r}: {err.strerror or err}") from None


def _write_plots(config: Dict[str, Any], arrays: Dict[str, Any], trainer: Any, history: Dict[str, List[float]]) -> None:
    title = f"{config['dataset']}: {trainer.describe()} ({config['engine']} engine)"
    written = [plot_history(history, os.path.join(config["plots"], f"{config['dataset']}_training.png"), title=title)]
    if config["two_dimensional"]:
        mean, std = arrays["mean"], arrays["std"]
        written.append(plot_decision_boundary(
            lambda points: trainer.predict((points - mean) / std), arrays["X_raw"], arrays["y"],
            os.path.join(config["plots"], f"{config['dataset']}_boundary.png"), title=title,
        ))
    if config["model"] == "cnn":
        written.append(plot_filters(trainer.model, os.path.join(config["plots"], "digits_cnn_filters.png")))
        written.append(plot_mistakes(trainer.predict, arrays["X_test"], arrays["y_test"],
                                     os.path.join(config["plots"], "digits_cnn_mistakes.png"),
                                     pixels=arrays["X_test"] * arrays["std"] + arrays["mean"]))
    print("plots: " + ", ".join(written))


def _save_checkpoint(config: Dict[str, Any], arrays: Dict[str, Any], trainer: Any,
                     history: Dict[str, List[float]]) -> None:
    checkpoint = {
        "model": trainer.state_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "input_mean": arrays["mean"],
        "input_std": arrays["std"],
        "history": history,
        "config": {key: value for key, value in config.items() if key not in ("save", "plots", "diagnose_plot")},
    }
    try:
        taugrad.save(checkpoint, config["save"])
    except OSError as err:
        raise CommandError(f"cannot write --save {config['save']!r}: {err.strerror or err}") from None
    print(f"checkpoint: {config['save']} (model weights under 'model', PyTorch key names)")

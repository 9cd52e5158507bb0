"""Training plots written straight to PNG files (matplotlib, optional extra).

Both functions draw on a private ``matplotlib.figure.Figure`` with the Agg
canvas, so they need no display, never touch pyplot's global state and work the
same inside notebooks, tests and servers.  Without matplotlib they raise
``ModuleNotFoundError`` naming the extra: ``pip install 'taugrad[plots]'``.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np

__all__ = ["plot_history", "plot_decision_boundary", "PLOTS_EXTRA_HINT"]

PLOTS_EXTRA_HINT = "pip install 'taugrad[plots]'"


def _new_figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as err:
        raise ModuleNotFoundError(f"plotting needs matplotlib: {PLOTS_EXTRA_HINT}") from err
    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Any, path: "str | os.PathLike[str]") -> str:
    path = os.fspath(path)
    figure.tight_layout()
    figure.savefig(path, format="png")
    return path


def plot_history(history: Dict[str, Sequence[float]], path: "str | os.PathLike[str]", title: Optional[str] = None,
                 xlabel: str = "epoch") -> str:
    """Plot per-epoch curves to a PNG at ``path``; returns the path.

    ``history`` maps a curve name to its values, one per epoch, e.g.
    ``{"loss": [...], "train_accuracy": [...], "test_accuracy": [...]}``.  Curves
    whose name contains ``"loss"`` go in the left panel, the others (accuracies,
    fractions in [0, 1]) in the right one, each against epoch 1, 2, ...
    (``xlabel`` renames the axis for curves recorded per step).
    """
    if not isinstance(history, dict) or not history:
        raise ValueError("history must be a non-empty dict of curve name -> list of per-epoch values")
    losses = {name: values for name, values in history.items() if "loss" in name}
    others = {name: values for name, values in history.items() if "loss" not in name}
    panels = [(group, label) for group, label in ((losses, "loss"), (others, "accuracy")) if group]
    figure = _new_figure(5.0 * len(panels), 4.0)
    for number, (curves, label) in enumerate(panels, start=1):
        axes = figure.add_subplot(1, len(panels), number)
        for name, values in curves.items():
            values = np.asarray(values, dtype=np.float64)
            axes.plot(np.arange(1, len(values) + 1), values, label=name)
        axes.xaxis.get_major_locator().set_params(integer=True)
        axes.set_xlabel(xlabel)
        axes.set_ylabel(label)
        if label == "loss" and all(np.all(np.asarray(v, dtype=float) > 0) for v in curves.values()):
            axes.set_yscale("log")
        axes.grid(True, alpha=0.3)
        axes.legend()
    if title:
        figure.suptitle(title)
    return _save(figure, path)


def plot_decision_boundary(
    predict: Callable[[np.ndarray], np.ndarray],
    X: Any,
    y: Any,
    path: "str | os.PathLike[str]",
    resolution: int = 200,
    title: Optional[str] = None,
) -> str:
    """Shade the classes a 2-D classifier predicts and scatter the points; PNG at ``path``.

    ``predict`` maps an ``(m, 2)`` float64 array of points to either class ids of
    shape ``(m,)`` or scores of shape ``(m, k)`` (the class is the ``argmax``; with
    ``k == 1`` a score above 0 means class 1).  It is evaluated once on a
    ``resolution x resolution`` grid covering the data with a margin.  ``X`` has
    shape ``(n, 2)`` and ``y`` holds the true class ids.  Returns the path.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"plot_decision_boundary needs 2-D points of shape (n, 2), got {tuple(X.shape)}")
    if y.shape != (len(X),):
        raise ValueError(f"y must have shape ({len(X)},), got {tuple(y.shape)}")
    low, high = X.min(axis=0), X.max(axis=0)
    margin = 0.1 * np.maximum(high - low, 1e-9) + 0.25
    xs = np.linspace(low[0] - margin[0], high[0] + margin[0], resolution)
    ys = np.linspace(low[1] - margin[1], high[1] + margin[1], resolution)
    grid_x, grid_y = np.meshgrid(xs, ys)
    grid = np.stack([grid_x.ravel(), grid_y.ravel()], axis=1)
    classes = _as_class_ids(np.asarray(predict(grid)), len(grid)).reshape(grid_x.shape)

    n_classes = int(max(classes.max(), y.max())) + 1
    from matplotlib.colors import ListedColormap

    colours = ListedColormap([_CLASS_COLOURS[k % len(_CLASS_COLOURS)] for k in range(n_classes)])
    figure = _new_figure(5.5, 5.0)
    axes = figure.add_subplot(1, 1, 1)
    levels = np.arange(n_classes + 1) - 0.5  # one band per class id
    axes.contourf(grid_x, grid_y, classes, levels=levels, cmap=colours, alpha=0.3)
    axes.scatter(X[:, 0], X[:, 1], c=y, cmap=colours, vmin=-0.5, vmax=n_classes - 0.5, s=18,
                 edgecolors="k", linewidths=0.4)
    axes.set_xlim(xs[0], xs[-1])
    axes.set_ylim(ys[0], ys[-1])
    axes.set_aspect("equal", adjustable="box")
    if title:
        axes.set_title(title)
    return _save(figure, path)


# matplotlib's "tab10" colours, blue and red first so two classes contrast
_CLASS_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf"]


def _as_class_ids(output: np.ndarray, m: int) -> np.ndarray:
    """Class ids from ``predict``'s output: ids as they are, scores by argmax (or sign)."""
    if output.shape == (m,) and output.dtype.kind in "biu":
        return output.astype(np.int64)
    if output.shape == (m,) or output.shape == (m, 1):
        return (output.reshape(m) > 0).astype(np.int64)
    if output.ndim == 2 and output.shape[0] == m:
        return output.argmax(axis=1).astype(np.int64)
    raise ValueError(f"predict returned shape {tuple(output.shape)} for {m} points; expected ({m},) or ({m}, k)")

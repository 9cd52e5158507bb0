"""Pictures of a trained digits CNN (matplotlib, optional extra): its first-layer filters and its mistakes.

Both take the model (a ``taugrad.nn.Sequential`` whose first module is the
1-channel ``Conv2d``) and write one PNG, returning its path.
"""
from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from taugrad.learn.plots import _new_figure, _save

__all__ = ["plot_filters", "plot_mistakes"]


def plot_filters(model: Any, path: "str | os.PathLike[str]", columns: int = 8) -> str:
    """A grid of the learned first-layer kernels, one colour scale for all (red > 0 > blue)."""
    weights = np.asarray(model[0].weight._data)[:, 0]
    rows = -(-len(weights) // columns)
    figure = _new_figure(1.0 * columns, 1.0 * rows + 0.5)
    limit = float(np.abs(weights).max()) or 1.0
    for k, kernel in enumerate(weights):
        ax = figure.add_subplot(rows, columns, k + 1)
        ax.imshow(kernel, cmap="RdBu_r", vmin=-limit, vmax=limit)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(str(k), fontsize=7)
    shape = "x".join(map(str, weights.shape[1:]))
    figure.suptitle(f"{len(weights)} first-layer filters ({shape}), red > 0 > blue")
    return _save(figure, path)


def plot_mistakes(predict: Callable[[np.ndarray], np.ndarray], images: np.ndarray, labels: np.ndarray,
                  path: "str | os.PathLike[str]", pixels: Any = None, columns: int = 8, limit: int = 40) -> str:
    """The misclassified images, each titled ``label -> prediction``.

    ``images`` go to ``predict``; ``pixels`` (default: the images), 64 values
    per image, are what is drawn (e.g. the raw pixels of standardised inputs).
    """
    guess = np.asarray(predict(images))
    wrong = np.flatnonzero(guess != labels)[:limit]
    pictures = np.asarray(images if pixels is None else pixels).reshape(len(labels), 8, 8)
    columns = max(1, min(columns, len(wrong)))
    rows = max(1, -(-len(wrong) // columns))
    figure = _new_figure(max(1.3 * columns, 6.5), 1.4 * rows + 0.6)  # wide enough for the title
    for k, i in enumerate(wrong):
        ax = figure.add_subplot(rows, columns, k + 1)
        ax.imshow(pictures[i], cmap="gray_r")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"{labels[i]} -> {guess[i]}", fontsize=9, color="crimson")
    total = int(np.sum(guess != labels))
    shown = "" if total <= limit else f", first {limit} shown"
    figure.suptitle(f"{total} misclassified of {len(labels)} test digits (label -> prediction{shown})")
    return _save(figure, path)

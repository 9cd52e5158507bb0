"""micrograd's moons demo as reusable functions (used by ``taugrad demo``, tests, benchmarks).

The loss is micrograd's: an SVM max-margin loss averaged over the points plus
an L2 penalty, ``mean_i relu(1 - y_i * score_i) + alpha * sum_p p^2`` with
labels ``y_i`` in {-1, +1}; SGD's learning rate falls linearly from 1.0 to 0.1.
Every function takes the ``Value`` class to use, so micrograd's own ``Value``
can run the very same code in the benchmark.
"""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import numpy as np

from taugrad.datasets import moons
from taugrad.scalar.value import Value


def load_moons(n_samples: int = 100, noise: float = 0.1, seed: int = 1337) -> Tuple[List[List[float]], List[int]]:
    """micrograd's data: scikit-learn's ``make_moons`` after ``np.random.seed(seed)``, labels in {-1, +1}.

    The same points (the test suite checks they equal scikit-learn's) without
    needing scikit-learn: :func:`taugrad.datasets.moons` drawing from a
    ``RandomState(seed)``, which shuffles and adds noise in make_moons' order.
    """
    X, y = moons(n_samples=n_samples, noise=noise, seed=np.random.RandomState(seed))
    return X.tolist(), [int(v) * 2 - 1 for v in y]


def loss_and_accuracy(model: Any, X: Sequence[Sequence[float]], y: Sequence[int], value: type = Value, alpha: float = 1e-4) -> Tuple[Any, float]:
    """Forward pass over all points: (SVM loss + alpha * L2, training accuracy)."""
    inputs = [list(map(value, row)) for row in X]
    scores = list(map(model, inputs))
    losses = [(1 + -yi * score).relu() for yi, score in zip(y, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    reg_loss = alpha * sum(p * p for p in model.parameters())
    accuracy = sum((yi > 0) == (score.data > 0) for yi, score in zip(y, scores)) / len(y)
    return data_loss + reg_loss, accuracy


def learning_rate(step: int, steps: int = 100) -> float:
    """micrograd's schedule: 1.0 at step 0 falling linearly to 0.1 at ``steps``."""
    return 1.0 - 0.9 * step / steps


def train_step(model: Any, X: Sequence[Sequence[float]], y: Sequence[int], step: int, steps: int = 100, value: type = Value) -> Tuple[float, float]:
    """One full step: forward, loss, zero_grad, backward, SGD update. Returns (loss, accuracy)."""
    loss, accuracy = loss_and_accuracy(model, X, y, value)
    model.zero_grad()
    loss.backward()
    lr = learning_rate(step, steps)
    for p in model.parameters():
        p.data -= lr * p.grad
    return loss.data, accuracy

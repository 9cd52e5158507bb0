"""The two training back ends of ``taugrad train``: one per engine, same interface.

A trainer is built from the run's configuration and its training data and
offers ``train_epoch() -> mean loss``, ``predict(X) -> class ids``,
``accuracy(X, y)``, ``state_dict()`` (PyTorch key names, as ``taugrad.nn.MLP``)
and its ``optimizer``.  Both minimise the mean softmax cross-entropy
``log(sum_j exp(z_j)) - z_y`` over shuffled mini-batches.
"""
from __future__ import annotations

import random
from typing import Any, Dict, List

import numpy as np

from taugrad import nn, optim
from taugrad.datasets import array_loader
from taugrad.debug.diagnostics import GradientFlowMonitor
from taugrad.nn.functional import cross_entropy
from taugrad.grad_mode import no_grad
from taugrad.scalar.nn import MLP
from taugrad.tensors.core.node import Tensor


def make_optimizer(params: List[Any], config: Dict[str, Any]) -> Any:
    name, lr, weight_decay = config["optimizer"], config["lr"], config["weight_decay"]
    if name == "sgd":
        return optim.SGD(params, lr=lr, momentum=config["momentum"], weight_decay=weight_decay)
    if name == "adam":
        return optim.Adam(params, lr=lr, weight_decay=weight_decay)
    return optim.AdamW(params, lr=lr, weight_decay=weight_decay)


def make_trainer(config: Dict[str, Any], X_train: np.ndarray, y_train: np.ndarray, n_classes: int) -> Any:
    trainer = ScalarTrainer if config["engine"] == "scalar" else TensorTrainer
    return trainer(config, X_train, y_train, n_classes)


def _layer_sizes(config: Dict[str, Any], n_features: int, n_classes: int) -> List[int]:
    return [n_features, *config["hidden"], n_classes]


#: the digits CNN's cross-entropy target smoothing (measured: +0.4-0.7 points of median test accuracy)
CNN_LABEL_SMOOTHING = 0.1


def digits_cnn() -> Any:
    """On (N, 1, 8, 8) images: conv 32 3x3 pad 1, max-pool 2, BatchNorm, ReLU, conv 64 3x3, BatchNorm, ReLU, linear 10.

    BatchNorm (the convolutions then need no bias) reaches in 7 epochs the
    accuracy the plain network did not reach in 30; pooling before the first
    BatchNorm and ReLU normalises a map 4x smaller (measured: as accurate,
    ~25% faster per epoch; README, CNN section).
    """
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.MaxPool2d(2), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.Conv2d(32, 64, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                         nn.Flatten(), nn.Linear(256, 10))


def _describe(config: Dict[str, Any], sizes: List[int]) -> str:
    if config["model"] == "cnn":
        return "CNN conv32-pool-bn-conv64-bn-linear10"
    if config["model"] == "linear":
        return f"linear {sizes[0]}-{sizes[-1]}"
    return "MLP " + "-".join(map(str, sizes))


# ---------------------------------------------------------------------------
# tensor engine
# ---------------------------------------------------------------------------


class TensorTrainer:
    """``taugrad.nn.MLP`` (or ``Linear``) on float32 Tensors, one graph per mini-batch."""

    def __init__(self, config: Dict[str, Any], X_train: np.ndarray, y_train: np.ndarray, n_classes: int) -> None:
        nn.init.manual_seed(config["seed"])
        self.sizes = _layer_sizes(config, X_train.shape[1], n_classes)
        if config["model"] == "linear":
            self.model = nn.Linear(self.sizes[0], n_classes)
        elif config["model"] == "cnn":
            self.model = digits_cnn()
        else:
            self.model = nn.MLP(self.sizes[0], config["hidden"], n_classes)
        self.config = config
        self.optimizer = make_optimizer(list(self.model.parameters()), config)
        self.loader = array_loader((self._inputs(X_train), y_train), batch_size=config["batch_size"],
                                    shuffle=True, seed=config["seed"])
        self.smoothing = CNN_LABEL_SMOOTHING if config["model"] == "cnn" else 0.0
        self.schedule: Any = None
        if config["model"] == "cnn":  # cosine annealing to 0 over the whole run
            self.schedule = optim.lr_scheduler.CosineAnnealingLR(self.optimizer,
                                                                 T_max=config["epochs"] * len(self.loader))
        self.monitor: Any = None

    def describe(self) -> str:
        return _describe(self.config, self.sizes)

    def diagnose(self) -> Any:
        """Start recording gradient norms and dead ReLUs (``--diagnose``); returns the monitor."""
        self.monitor = GradientFlowMonitor(self.model)
        return self.monitor

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def train_epoch(self) -> float:
        self.model.train()
        total, count = 0.0, 0
        for xb, yb in self.loader:
            loss = cross_entropy(self.model(Tensor(xb)), yb, label_smoothing=self.smoothing)
            self.optimizer.zero_grad()
            loss.backward()
            if self.monitor is not None:
                self.monitor.record_gradients()
            self.optimizer.step()
            if self.schedule is not None:
                self.schedule.step()
            total += loss.item() * len(yb)
            count += len(yb)
        if self.monitor is not None:
            self.monitor.end_epoch()
        return total / count

    def _inputs(self, X: np.ndarray) -> np.ndarray:
        """float32 rows, or (N, 1, 8, 8) images for the CNN."""
        X = np.asarray(X, dtype=np.float32)
        return X.reshape(-1, 1, 8, 8) if self.config["model"] == "cnn" else X

    def predict(self, X: np.ndarray) -> np.ndarray:
        self.model.eval()
        with no_grad():
            scores = self.model(Tensor(self._inputs(X))).numpy()
        return scores.argmax(axis=1)

    def accuracy(self, X: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.predict(X) == y))

    def state_dict(self) -> Dict[str, Any]:
        return self.model.state_dict()


# ---------------------------------------------------------------------------
# scalar engine
# ---------------------------------------------------------------------------


class _FlatValues:
    """All the scalar model's ``Value`` parameters seen as one array, for the array optimizers.

    The optimizers update ``p.data`` from ``p.grad``; here ``data`` is gathered
    from the Values, updated as one vector, then written back.
    """

    def __init__(self, values: List[Any]) -> None:
        self.values = values
        self.data = np.array([v.data for v in values], dtype=np.float64)
        self.grad: Any = None

    def gather_grads(self) -> None:
        self.grad = np.array([v.grad for v in self.values], dtype=np.float64)

    def scatter_data(self) -> None:
        for value, number in zip(self.values, self.data.tolist()):
            value.data = number


def _cross_entropy(logits: List[Any], target: int) -> Any:
    """``log(sum_j exp(z_j)) - z_target`` on Values, shifted by ``max z`` so exp cannot overflow."""
    shift = max(z.data for z in logits)
    total = sum((z - shift).exp() for z in logits)
    return total.log() + shift - logits[target]


class ScalarTrainer:
    """micrograd's ``MLP(nin, nouts)`` on ``taugrad.Value``: a graph of scalars per mini-batch."""

    def __init__(self, config: Dict[str, Any], X_train: np.ndarray, y_train: np.ndarray, n_classes: int) -> None:
        self.sizes = _layer_sizes(config, X_train.shape[1], n_classes)
        saved = random.getstate()  # micrograd draws weights from `random`; seed it without side effects
        random.seed(config["seed"])
        try:
            self.model = MLP(self.sizes[0], self.sizes[1:], fused=True)  # one node per neuron: the fast path
        finally:
            random.setstate(saved)
        self.flat = _FlatValues(self.model.parameters())
        self.optimizer = make_optimizer([self.flat], config)
        self.loader = array_loader((X_train, y_train), batch_size=config["batch_size"], shuffle=True,
                                    seed=config["seed"])
        self.config = config

    def describe(self) -> str:
        return _describe(self.config, self.sizes)

    def parameter_count(self) -> int:
        return len(self.flat.values)

    def train_epoch(self) -> float:
        total, count = 0.0, 0
        for xb, yb in self.loader:
            losses = [_cross_entropy(self.model(row), int(target)) for row, target in zip(xb.tolist(), yb)]
            loss = sum(losses) * (1.0 / len(losses))
            self.model.zero_grad()
            loss.backward()
            self.flat.gather_grads()
            self.optimizer.step()
            self.flat.scatter_data()
            total += loss.data * len(yb)
            count += len(yb)
        return total / count

    def weights(self) -> List[tuple]:
        """``(W, b)`` per layer as arrays: ``W[j]`` holds neuron ``j``'s input weights."""
        return [
            (np.array([[w.data for w in n.w] for n in layer.neurons]), np.array([n.b.data for n in layer.neurons]))
            for layer in self.model.layers
        ]

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The same maths as the Value graph (ReLU hidden layers, linear output), in NumPy for speed."""
        h = np.asarray(X, dtype=np.float64)
        layers = self.weights()
        for number, (W, b) in enumerate(layers):
            h = h @ W.T + b
            if number < len(layers) - 1:
                h = np.maximum(h, 0.0)
        return h.argmax(axis=1)

    def accuracy(self, X: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.predict(X) == y))

    def state_dict(self) -> Dict[str, Any]:
        """Keys of the equivalent ``taugrad.nn.MLP`` / ``torch.nn.Sequential``: Linear layers at 0, 2, 4..."""
        layers = self.weights()
        if self.config["model"] == "linear":
            (W, b), = layers
            return {"weight": W, "bias": b}
        state = {}
        for number, (W, b) in enumerate(layers):
            state[f"{2 * number}.weight"] = W
            state[f"{2 * number}.bias"] = b
        return state

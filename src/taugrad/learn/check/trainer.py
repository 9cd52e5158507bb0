"""micrograd's moons training, written once for any scalar class: the learner's (in the sandbox) and taugrad's.

Standard library only, because it runs in the sandbox process next to the
learner's code (``sandbox.py`` loads it by path).  ``taugrad demo --engine``
runs this same code on both classes from the same initial weights, so the two
runs perform the very same operations, and a correct engine matches taugrad's
losses and gradients to the last few bits.

The network and loss are micrograd's demo: ``MLP(2, [16, 16, 1])`` (ReLU on the
hidden layers, a linear output), built as its granular graph; the loss is the
SVM max-margin loss averaged over the points plus ``1e-4`` times the sum of
squared parameters; SGD's learning rate falls linearly from 1.0 to 0.1.  Only
``+``, ``*``, ``relu()`` and ``backward()`` between two Values are used: every
number is wrapped first, so no ``__radd__``, ``__rmul__`` or ``**`` is needed.
"""
import gc

ALPHA = 1e-4


class Trainer:
    """One model of class ``cls``: ``weights[layer][neuron] = [bias, w_0, w_1, ...]``."""

    def __init__(self, cls, weights, X, y):
        self.cls = cls
        self.layers = [[[cls(float(v)) for v in neuron] for neuron in layer] for layer in weights]
        self.X = [[float(v) for v in row] for row in X]
        self.y = [int(v) for v in y]

    def parameters(self) -> list:
        """Biases and weights in the order of ``weights`` (layer, neuron, bias first)."""
        return [p for layer in self.layers for neuron in layer for p in neuron]

    def score(self, row):
        cls = self.cls
        h = [cls(v) for v in row]
        last = len(self.layers) - 1
        for index, layer in enumerate(self.layers):
            out = []
            for bias, *weights in layer:
                act = bias
                for w, x in zip(weights, h):
                    act = act + w * x
                out.append(act.relu() if index < last else act)
            h = out
        return h[0]

    def loss(self):
        """(SVM loss + ALPHA * L2 as a node of ``cls``, training accuracy)."""
        cls = self.cls
        scores = [self.score(row) for row in self.X]
        total = None
        for yi, s in zip(self.y, scores):
            margin = (s * cls(float(-yi)) + cls(1.0)).relu()  # micrograd's (1 + -y * score).relu()
            total = margin if total is None else total + margin
        data_loss = total * cls(1.0 / len(scores))
        reg = None
        for p in self.parameters():
            square = p * p
            reg = square if reg is None else reg + square
        accuracy = sum((yi > 0) == (float(s.data) > 0) for yi, s in zip(self.y, scores)) / len(self.y)
        return data_loss + reg * cls(ALPHA), accuracy

    def step(self, step: int, steps: int) -> dict:
        """One SGD step: forward, zero grads, backward, update; the loss, accuracy and gradients it used."""
        enabled = gc.isenabled()
        gc.disable()  # closures make cycles: one collection per step instead of many during it
        loss = None
        try:
            loss, accuracy = self.loss()
            params = self.parameters()
            for p in params:
                p.grad = 0.0
            loss.backward()
            grads = [float(p.grad) for p in params]
            rate = 1.0 - 0.9 * step / steps
            for p, g in zip(params, grads):
                p.data = float(p.data) - rate * g
            value = float(loss.data)
        finally:
            del loss
            gc.collect()
            if enabled:
                gc.enable()
        return {"loss": value, "accuracy": accuracy, "grads": grads}

    def weights(self) -> list:
        return [[[float(p.data) for p in neuron] for neuron in layer] for layer in self.layers]


def handle(trainer_slot: dict, cls, request: dict) -> dict:
    """The sandbox's training requests: ``train_start`` (weights, X, y), ``train_step`` (step, steps), ``train_weights``."""
    if request["do"] == "train_start":
        trainer_slot["trainer"] = Trainer(cls, request["weights"], request["X"], request["y"])
        return {"ok": True}
    trainer = trainer_slot["trainer"]
    if request["do"] == "train_step":
        return trainer.step(int(request["step"]), int(request["steps"]))
    return {"weights": trainer.weights()}

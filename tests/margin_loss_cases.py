"""The margin-loss cases shared by the torch comparison (test_margin_losses.py) and the device seam test.

Each case is ``(function name, kwargs, input arrays, which inputs require grad)``, drawn from a fixed seed.
"""
import numpy as np


def _signs(rng, *shape):
    return rng.choice([-1.0, 1.0], size=shape)


def margin_loss_cases():
    r = np.random.default_rng(1)
    n, c = 6, 5
    x = lambda *s: r.normal(size=s)  # noqa: E731
    labels = r.integers(0, 2, size=(n, c)).astype(float)
    counts = r.integers(0, 6, size=(n, c)).astype(float)
    classes = r.integers(0, c, size=n)
    weight = r.uniform(0.2, 2.0, size=c)
    return [
        ("margin_ranking_loss", {}, [x(n), x(n), _signs(r, n)], [True, True, True]),
        ("margin_ranking_loss", {"margin": 0.4}, [x(n, c), x(n, c), _signs(r, n, c)], [True, True, True]),
        ("hinge_embedding_loss", {}, [np.abs(x(n, c)) * 1.5, _signs(r, n, c)], [True, False]),
        ("hinge_embedding_loss", {"margin": 0.6}, [x(n, c), _signs(r, n, c)], [True, False]),
        ("soft_margin_loss", {}, [x(n, c) * 3, _signs(r, n, c)], [True, False]),
        ("multilabel_soft_margin_loss", {}, [x(n, c) * 2, labels], [True, False]),
        ("multilabel_soft_margin_loss", {"weight": weight}, [x(n, c) * 2, labels], [True, False]),
        ("multilabel_soft_margin_loss", {"weight": weight}, [x(c), labels[0]], [True, False]),
        ("cosine_embedding_loss", {}, [x(n, c), x(n, c), _signs(r, n)], [True, True, False]),
        ("cosine_embedding_loss", {"margin": -0.3}, [x(n, c), x(n, c), _signs(r, n)], [True, True, False]),
        ("cosine_embedding_loss", {"margin": 0.1}, [x(c), x(c), np.array(-1.0)], [True, True, False]),
        ("poisson_nll_loss", {}, [x(n, c), counts], [True, True]),
        ("poisson_nll_loss", {"full": True}, [x(n, c), counts], [True, False]),
        ("poisson_nll_loss", {"full": True}, [x(n, c), counts + 1.0], [True, True]),
        ("poisson_nll_loss", {"log_input": False, "eps": 1e-3}, [r.uniform(0.1, 3, (n, c)), counts], [True, True]),
        ("poisson_nll_loss", {"log_input": False, "full": True}, [r.uniform(0.1, 3, (n, c)), counts + 1.0],
         [True, True]),
        ("gaussian_nll_loss", {}, [x(n, c), x(n, c), r.uniform(0.1, 2, (n, c))], [True, True, True]),
        ("gaussian_nll_loss", {"full": True}, [x(n, c), x(n, c), r.uniform(0.1, 2, (n,))], [True, True, True]),
        ("gaussian_nll_loss", {}, [x(n, c), x(n, c), r.uniform(0.1, 2, (n, 1))], [True, True, True]),
        ("gaussian_nll_loss", {"eps": 0.5}, [x(n, c), x(n, c), r.uniform(0.0, 1, (n, c))], [True, True, True]),
        ("triplet_margin_loss", {}, [x(n, c), x(n, c), x(n, c)], [True, True, True]),
        ("triplet_margin_loss", {"margin": 2.5, "p": 1, "swap": True}, [x(n, c), x(n, c), x(n, c)], [True] * 3),
        ("triplet_margin_loss", {"margin": 1.5, "p": 3, "eps": 1e-3, "swap": True}, [x(n, c), x(n, c), x(n, c)],
         [True] * 3),
        ("triplet_margin_loss", {"margin": 3.0}, [x(c), x(c), x(c)], [True] * 3),
        ("multi_margin_loss", {}, [x(n, c), classes], [True, False]),
        ("multi_margin_loss", {"p": 2, "margin": 0.7}, [x(n, c), classes], [True, False]),
        ("multi_margin_loss", {"weight": weight, "margin": 1.5}, [x(n, c), classes], [True, False]),
        ("multi_margin_loss", {"weight": weight, "p": 2}, [x(c), np.array(2)], [True, False]),
    ]

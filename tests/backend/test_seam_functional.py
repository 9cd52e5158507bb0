"""The composed activations, distances and normalisations of taugrad.functional on the device equal the CPU.

The op table's seam test runs registered ops; these functions are compositions
of them with code of their own (constants, masks, random draws), which only a
run on the device backend can show free of NumPy calls.  Values and input
gradients; the random ones from the same seed (both devices draw the same
stream).
"""
import numpy as np
import pytest

import taugrad
import taugrad.functional as F

FUNCTIONS = {
    "celu": lambda x, y: F.celu(x, alpha=0.7),
    "elu": lambda x, y: F.elu(x, alpha=1.3),
    "selu": lambda x, y: F.selu(x),
    "glu": lambda x, y: F.glu(x, dim=-1),
    "hardshrink": lambda x, y: F.hardshrink(x, 0.4),
    "softshrink": lambda x, y: F.softshrink(x, 0.4),
    "hardsigmoid": lambda x, y: F.hardsigmoid(x * 4),
    "hardswish": lambda x, y: F.hardswish(x * 4),
    "leaky_relu": lambda x, y: F.leaky_relu(x, 0.1),
    "logsigmoid": lambda x, y: F.logsigmoid(x * 5),
    "mish": lambda x, y: F.mish(x),
    "silu": lambda x, y: F.silu(x),
    "relu6": lambda x, y: F.relu6(x * 5),
    "softsign": lambda x, y: F.softsign(x),
    "tanhshrink": lambda x, y: F.tanhshrink(x),
    "threshold": lambda x, y: F.threshold(x, 0.1, 20.0),
    "softmin": lambda x, y: F.softmin(x, dim=1),
    "normalize": lambda x, y: F.normalize(x, p=3.0, dim=1),
    "cosine_similarity": lambda x, y: F.cosine_similarity(x, y, dim=1),
    "pairwise_distance": lambda x, y: F.pairwise_distance(x, y, p=1.5, keepdim=True),
    "rrelu": lambda x, y: F.rrelu(x, 0.1, 0.3, training=True),  # the same seed: the same slopes
    "dropout2d": lambda x, y: F.dropout2d(x.reshape(2, 3, 2, 2), p=0.4, training=True),
}


def _run(name, device):
    rng = np.random.default_rng(11)
    x = taugrad.tensor(rng.normal(size=(6, 4)), device=device, requires_grad=True)
    y = taugrad.tensor(rng.normal(size=(6, 4)), device=device, requires_grad=True)
    taugrad.manual_seed(3)
    out = FUNCTIONS[name](x, y)
    out.backward(taugrad.ones(out.shape, dtype=out.dtype, device=device))
    return [out.detach().cpu().numpy(), x.grad.cpu().numpy(), None if y.grad is None else y.grad.cpu().numpy()]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_function_on_the_device_equals_the_cpu(device_backend, name):
    _, tolerance = device_backend
    got, want = _run(name, "cuda"), _run(name, "cpu")
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g is None) == (w is None), f"{name}: result {k}"
        if w is None:
            continue
        if tolerance is None:
            np.testing.assert_array_equal(g, w, err_msg=f"{name}: result {k}")
        else:
            np.testing.assert_allclose(g, w, **tolerance, err_msg=f"{name}: result {k}")

"""The margin, embedding and likelihood losses on the device backend equal their CPU runs.

They are composed in ``taugrad.nn.functional.margin_loss`` from registered ops,
so the op table's seam test does not reach their own code: a NumPy call there
(a target read on the host) escapes only here.  Values and the gradients of
every input that requires grad, for each reduction.
"""
import numpy as np
import pytest

import taugrad
import taugrad.functional as F

from margin_loss_cases import margin_loss_cases

CASES = margin_loss_cases()


def _run(name, kwargs, arrays, grads, reduction, device):
    inputs = [taugrad.tensor(a, device=device, requires_grad=g) for a, g in zip(arrays, grads)]
    kw = {k: taugrad.tensor(v, device=device) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    out = getattr(F, name)(*inputs, reduction=reduction, **kw)
    out.backward(taugrad.ones(out.shape, dtype=out.dtype, device=device))
    return [out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t, g in zip(inputs, grads) if g]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name, kwargs, arrays, grads", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_margin_loss_on_the_device_equals_the_cpu(device_backend, name, kwargs, arrays, grads, reduction):
    _, tolerance = device_backend
    got = _run(name, kwargs, arrays, grads, reduction, "cuda")
    want = _run(name, kwargs, arrays, grads, reduction, "cpu")
    for k, (g, w) in enumerate(zip(got, want)):
        if tolerance is None:
            np.testing.assert_array_equal(g, w, err_msg=f"{name}: result {k}")
        else:
            np.testing.assert_allclose(g, w, **tolerance, err_msg=f"{name}: result {k}")


def test_multi_margin_target_out_of_range_on_the_device_raises_at_the_next_read(device_backend):
    loss = F.multi_margin_loss(taugrad.randn(3, 4, device="cuda"), taugrad.tensor([0, 4, 1], device="cuda"))
    with pytest.raises(ValueError, match=r"multi_margin_loss: target out of range for 4 classes"):
        loss.item()

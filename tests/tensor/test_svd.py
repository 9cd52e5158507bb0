"""The SVD's full bases and bad input (the op-table rows check values and gradients)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad


@pytest.mark.parametrize("shape", [(4, 2), (2, 4), (2, 3, 1)])
def test_full_matrices_gives_orthonormal_bases_of_torchs_shapes(shape):
    x = np.random.default_rng(0).standard_normal(shape)
    U, S, Vh = taugrad.linalg.svd(taugrad.tensor(x))
    tU, tS, tVh = torch.linalg.svd(torch.tensor(x))
    assert (U.shape, S.shape, Vh.shape) == (tuple(tU.shape), tuple(tS.shape), tuple(tVh.shape))
    for Q in (U._data, Vh._data):
        eye = np.eye(Q.shape[-1])
        np.testing.assert_allclose(Q.swapaxes(-1, -2) @ Q, np.broadcast_to(eye, Q.shape[:-2] + eye.shape), atol=1e-12)
    k = S.shape[-1]
    np.testing.assert_allclose((U._data[..., :k] * S._data[..., None, :]) @ Vh._data[..., :k, :], x, atol=1e-12)


def test_bad_input_gets_one_line_errors():
    with pytest.raises(ValueError, match="linalg.svd: expects a matrix"):
        taugrad.linalg.svd(taugrad.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="linalg.svdvals: needs a real floating tensor"):
        taugrad.linalg.svdvals(taugrad.tensor([[1, 2], [3, 4]]))


def test_empty_matrices_have_no_singular_values_as_in_torch():
    U, S, Vh = taugrad.linalg.svd(taugrad.zeros(3, 0))
    assert (U.shape, S.shape, Vh.shape) == ((3, 3), (0,), (0, 0))
    with pytest.raises(ValueError, match="matrix_norm: ord=-2 of an empty matrix"):
        taugrad.linalg.matrix_norm(taugrad.zeros(3, 0), -2)
    for ord in (2, "nuc"):
        assert float(taugrad.linalg.matrix_norm(taugrad.zeros(3, 0), ord)) == 0.0

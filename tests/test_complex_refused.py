"""Complex numbers never reach a local rule: the rules are written for real functions."""
import numpy as np
import pytest

import taugrad


def test_complex_leaf_cannot_require_grad():
    with pytest.raises(TypeError, match="complex tensors cannot require gradients"):
        taugrad.Tensor(np.array([1j]), requires_grad=True)


def test_complex_result_of_a_recorded_op_is_refused():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"^mul: the result is complex and an input requires grad"):
        x * taugrad.Tensor(np.array([1j, 2j]))


def test_complex_without_grad_follows_numpy():
    t = taugrad.Tensor(np.array([1j, 2.0]))
    assert np.array_equal((t * 2).data, np.array([2j, 4.0]))

"""IEEE special results from finite inputs come back silently, as in PyTorch (no NumPy RuntimeWarning)."""
import warnings

import numpy as np
import pytest
import torch

import taugrad

OPS = {
    "log": lambda x: x.log(),
    "sqrt": lambda x: x.sqrt(),
    "reciprocal": lambda x: 1 / x,
    "power -1": lambda x: x ** -1,
    "x / x": lambda x: x / x,
    "2 ** (1000 x)": lambda x: 2 ** (x * 1000.0),
    "exp(1000 x)": lambda x: (x * 1000.0).exp(),
    "log1p": lambda x: (x - 1.0).log1p(),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_special_values_forward_and_backward_without_warnings(name):
    values = [0.0, -1.0, 2.0]
    x = taugrad.tensor(values, dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = OPS[name](x)
        y.backward(taugrad.ones(3, dtype="float64"))
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    ty = OPS[name](t)
    ty.backward(torch.ones(3, dtype=torch.float64))
    same_specials_and_close(y.detach().numpy(), ty.detach().numpy())
    same_specials_and_close(x.grad.numpy(), t.grad.numpy())


def same_specials_and_close(ours, theirs):
    """nan and +-inf at the same places, finite values equal to rounding.

    Not exact equality: PyTorch's vectorised sqrt is one ulp off NumPy's on
    some CPUs (sqrt(2) = 1.414213562373095 vs 1.4142135623730951).
    """
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    assert np.array_equal(np.isinf(ours), np.isinf(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=0)


def test_quiet_keeps_the_callers_other_settings_and_restores_them():
    from taugrad.tensors.core.errstate import quiet

    with np.errstate(under="raise", divide="warn"):
        before = np.geterr()
        for _ in range(2):  # the second entry reuses the cached silent settings
            with quiet():
                inside = np.geterr()
                with quiet():  # nested
                    assert np.geterr() == inside
                assert np.geterr() == inside
            assert np.geterr() == before
    assert inside == {**before, "divide": "ignore", "invalid": "ignore", "over": "ignore"}
    assert inside["under"] == "raise"


def test_backward_and_cross_entropy_leave_the_error_settings_as_they_found_them_even_when_they_raise():
    # both silence NumPy with silence()/restore() rather than a with block
    import taugrad.functional as F

    with np.errstate(under="raise", divide="warn", invalid="warn", over="warn"):
        before = np.geterr()
        x = taugrad.tensor([[1.0, 2.0], [0.5, -1.0]], requires_grad=True)
        loss = F.cross_entropy(x, np.array([0, 1]))
        assert np.geterr() == before
        loss.backward()
        assert np.geterr() == before
        y = x.log().sum()
        with pytest.raises(RuntimeError, match="retain_graph"):
            y.backward()
            y.backward()  # the graph was freed: raises inside the pass
        assert np.geterr() == before
        F.cross_entropy(taugrad.tensor([[np.inf, 1.0]]), np.array([0]))  # the checked path as well
        assert np.geterr() == before

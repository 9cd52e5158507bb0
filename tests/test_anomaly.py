"""taugrad.detect_anomaly(): the first nan/inf produced, forward or backward, names op, shapes and line."""
import inspect

import numpy as np
import pytest

import taugrad
from taugrad import nn


def _line_of(marker: str) -> int:
    """Line number in this file of the line containing ``marker`` (the user's op)."""
    source, start = inspect.getsourcelines(inspect.getmodule(_line_of))
    for number, line in enumerate(source, start=1):
        if marker in line and "_line_of" not in line:
            return number
    raise AssertionError(marker)


def test_forward_nan_names_op_shapes_and_user_line():
    x = taugrad.tensor([[1.0, -1.0, 4.0]], requires_grad=True)
    with taugrad.detect_anomaly():
        y = x * 2
        with pytest.raises(taugrad.AnomalyError) as info:
            y.sqrt()  # MARK-SQRT
    err = info.value
    assert err.op == "sqrt" and err.phase == "forward" and err.shapes == ((1, 3),)
    assert err.site[0] == __file__ and err.site[1] == _line_of("MARK-SQRT")
    message = str(err)
    assert "forward of 'sqrt' produced nan (1 of 3 values)" in message
    assert "(1, 3)" in message
    assert f"{__file__}:{_line_of('MARK-SQRT')}" in message
    assert "y.sqrt()  # MARK-SQRT" in message  # the source line itself


def test_forward_inf_is_caught_even_without_grad():
    with taugrad.detect_anomaly():
        with pytest.raises(taugrad.AnomalyError, match=r"forward of 'log' produced inf"):
            taugrad.tensor([0.0, 1.0]).log()
        with pytest.raises(taugrad.AnomalyError, match=r"'div' produced inf.*\(2,\), \(2,\)"):
            taugrad.tensor([1.0, 1.0]) / taugrad.tensor([0.0, 2.0])


def test_nan_or_inf_coming_in_is_not_blamed_on_the_op():
    """An op that only passes on a non-finite input (an attention mask of -inf) is fine."""
    scores = taugrad.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    mask = taugrad.tensor([[0.0, -np.inf, 0.0]])
    with taugrad.detect_anomaly():
        probs = taugrad.softmax(scores + mask, dim=-1)
        (probs * taugrad.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    assert np.isfinite(scores.grad.numpy()).all()
    assert scores.grad.numpy()[0, 1] == 0


def test_backward_nan_names_the_op_and_the_line_that_created_it():
    x = taugrad.tensor([0.0, 4.0], requires_grad=True)
    with taugrad.detect_anomaly():
        y = x.sqrt()  # MARK-BACKWARD   (sqrt(0) = 0 is fine; its derivative 1/(2*0) is not)
        loss = (y * 3).sum()
        with pytest.raises(taugrad.AnomalyError) as info:
            loss.backward()
    err = info.value
    assert err.phase == "backward" and err.op == "sqrt" and err.shapes == ((2,),)
    assert err.site[1] == _line_of("MARK-BACKWARD")
    assert "backward of 'sqrt' produced inf (1 of 2 values) in the gradient of its input 0" in str(err)
    assert x.grad is None  # nothing was accumulated from the broken pass


def test_backward_check_inside_a_model_names_the_user_forward_line():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2, dtype="float64")

        def forward(self, x):
            return self.fc(x).abs().sqrt()  # MARK-MODEL

    net = Net()
    with torch_free_zero_weights(net):
        with taugrad.detect_anomaly():
            out = net(taugrad.tensor(np.ones((3, 2))))
            with pytest.raises(taugrad.AnomalyError) as info:
                out.sum().backward()
    assert info.value.site[1] == _line_of("MARK-MODEL")
    assert info.value.op == "sqrt"


class torch_free_zero_weights:
    """Zero a module's parameters for the block (sqrt(|0|) has an infinite slope)."""

    def __init__(self, module):
        self.module = module

    def __enter__(self):
        for p in self.module.parameters():
            p.detach().numpy()[...] = 0

    def __exit__(self, *exc):
        return False


def test_off_by_default_and_after_the_block():
    assert not taugrad.debug.anomaly.is_anomaly_enabled()
    with taugrad.detect_anomaly():
        assert taugrad.debug.anomaly.is_anomaly_enabled()
        with taugrad.detect_anomaly(False):
            assert taugrad.tensor([0.0]).log().item() == -np.inf
        assert taugrad.debug.anomaly.is_anomaly_enabled()
    assert not taugrad.debug.anomaly.is_anomaly_enabled()
    assert taugrad.debug.anomaly.ACTIVE[0] == 0
    x = taugrad.tensor([0.0], requires_grad=True)
    y = x.log()
    assert y.item() == -np.inf and y._extras is None  # nothing recorded when off
    y.sum().backward()
    assert x.grad.item() == np.inf


def test_detect_anomaly_as_decorator_and_restored_after_an_error():
    @taugrad.detect_anomaly()
    def broken(x):
        return x.log()

    with pytest.raises(taugrad.AnomalyError):
        broken(taugrad.tensor([-1.0]))
    assert not taugrad.debug.anomaly.is_anomaly_enabled()
    assert taugrad.debug.anomaly.ACTIVE[0] == 0


def test_clean_training_step_passes_under_anomaly_mode():
    taugrad.manual_seed(0)
    nn.init.manual_seed(0)
    model = nn.MLP(3, [8], 2)
    opt = taugrad.optim.SGD(model.parameters(), lr=0.1)
    x = taugrad.randn(6, 3)
    y = np.array([0, 1, 0, 1, 1, 0])
    with taugrad.detect_anomaly():
        for _ in range(3):
            loss = taugrad.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    assert np.isfinite(loss.item())


def test_integer_and_bool_results_are_never_anomalies():
    with taugrad.detect_anomaly():
        assert (taugrad.tensor([1, 2]) * 3).tolist() == [3, 6]
        assert (taugrad.tensor([np.nan]) != taugrad.tensor([np.nan])).tolist() == [True]

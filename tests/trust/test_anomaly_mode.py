"""``torch.autograd.detect_anomaly`` / ``set_detect_anomaly`` behave as PyTorch's, beside taugrad's stricter tool."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad


def masked_log_loss(lib):
    """log(0) = -inf in the forward pass, clamped before use: fine for PyTorch's anomaly mode."""
    p = lib.tensor(np.array([0.0, 0.5, 0.25]), requires_grad=True)
    return (p * lib.log(p.detach()).clamp(min=-100.0)).sum(), p


def nan_gradient_loss(lib):
    """sqrt at 0 then times 0: the forward is finite, sqrt's rule returns inf * 0 = nan."""
    x = lib.tensor(np.array([0.0, 4.0]), requires_grad=True)
    return (lib.sqrt(x) * lib.tensor(np.array([0.0, 1.0]))).sum(), x


@pytest.mark.parametrize("lib", [torch, taugrad], ids=["torch", "taugrad"])
def test_forward_inf_removed_by_a_mask_passes(lib):
    with lib.autograd.detect_anomaly():
        loss, p = masked_log_loss(lib)
        loss.backward()
    theirs, tp = masked_log_loss(torch)
    theirs.backward()
    np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy())


def test_taugrads_own_tool_stops_at_the_forward_inf():
    with pytest.raises(taugrad.AnomalyError, match="forward of 'log'"):
        with taugrad.detect_anomaly():
            masked_log_loss(taugrad)


def test_a_nan_gradient_names_the_node_as_torch_does():
    with torch.autograd.detect_anomaly(), pytest.warns(UserWarning):
        loss, _ = nan_gradient_loss(torch)
        with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output"):
            loss.backward()
    with taugrad.autograd.detect_anomaly():
        loss, _ = nan_gradient_loss(taugrad)
        with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output; "
                                               r"the op was created at .*test_anomaly_mode.py"):
            loss.backward()


@pytest.mark.parametrize("lib", [torch, taugrad], ids=["torch", "taugrad"])
def test_check_nan_false_checks_nothing(lib):
    with lib.autograd.detect_anomaly(check_nan=False):
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        loss, x = nan_gradient_loss(lib)
        loss.backward()
    assert np.isnan(x.grad.numpy()[0])


@pytest.mark.parametrize("lib", [torch, taugrad], ids=["torch", "taugrad"])
def test_set_detect_anomaly_sets_at_once_and_a_block_restores(lib):
    assert not lib.is_anomaly_enabled()
    with lib.autograd.set_detect_anomaly(True):
        assert lib.is_anomaly_enabled()
    assert not lib.is_anomaly_enabled()
    lib.autograd.set_detect_anomaly(True)
    try:
        assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
    finally:
        lib.autograd.set_detect_anomaly(False)
    assert not lib.is_anomaly_enabled()
    lib.set_anomaly_enabled(True, check_nan=False)
    assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
    lib.set_anomaly_enabled(False)
    assert not lib.is_anomaly_enabled()


def test_decorator_form():
    @taugrad.autograd.detect_anomaly()
    def step():
        assert taugrad.is_anomaly_enabled()
        loss, _ = nan_gradient_loss(taugrad)
        loss.backward()

    with pytest.raises(RuntimeError, match="SqrtBackward0"):
        step()
    assert not taugrad.is_anomaly_enabled()


def test_taugrads_tool_inside_torchs_mode_keeps_its_own_checks():
    with taugrad.autograd.detect_anomaly():
        with pytest.raises(taugrad.AnomalyError, match="forward of 'log'"):
            with taugrad.detect_anomaly():
                masked_log_loss(taugrad)
        loss, _ = masked_log_loss(taugrad)  # back in PyTorch's mode: the forward inf is fine
    assert not taugrad.is_anomaly_enabled()

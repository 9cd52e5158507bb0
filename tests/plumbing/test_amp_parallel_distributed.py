"""torch.amp, nn.parallel, torch.distributed, backends.cuda and autograd.Variable, against torch on a CPU."""
import warnings

import numpy as np
import pytest
import torch

import taugrad
from taugrad.distributed import DistributedUnavailableError


def _scaler_run(lib, grads_per_step):
    """Four optimizer steps through a GradScaler on the CPU, one with an inf gradient."""
    w = lib.tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    scales, weights = [], []
    for g in grads_per_step:
        opt.zero_grad()
        loss = (w * lib.tensor(np.array(g))).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(float(scaler.get_scale()))
        weights.append(w.detach().numpy().copy())
    return scales, weights, scaler.state_dict()


def test_grad_scaler_on_cpu_matches_torch():
    steps = [[1.0, 2.0, 3.0], [0.5, np.inf, 1.0], [1.0, 1.0, 1.0], [2.0, 0.0, -1.0], [1.0, 1.0, 1.0]]
    ours = _scaler_run(taugrad, steps)
    theirs = _scaler_run(torch, steps)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(np.array(ours[1]), np.array(theirs[1]), rtol=0, atol=1e-12)
    expected = {k: (v.item() if hasattr(v, "item") else v) for k, v in theirs[2].items()}
    assert ours[2] == expected


def test_grad_scaler_cuda_without_gpu_is_disabled_with_torch_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = taugrad.amp.GradScaler("cuda")
    assert any("CUDA is not available" in str(w.message) for w in caught)
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    loss = taugrad.tensor(2.0)
    assert scaler.scale(loss) is loss
    w = taugrad.tensor([1.0], requires_grad=True)
    opt = taugrad.optim.SGD([w], lr=1.0)
    (w * 3).sum().backward()
    scaler.step(opt)
    scaler.update()
    assert w.item() == -2.0


def test_deprecated_cuda_amp_spellings_warn_as_torch():
    with pytest.warns(FutureWarning, match="torch.amp.GradScaler"):
        taugrad.cuda.amp.GradScaler()
    with pytest.warns(FutureWarning, match="torch.amp.autocast"):
        with taugrad.cuda.amp.autocast():
            pass


def test_autocast_cuda_without_gpu_is_disabled():
    with pytest.warns(UserWarning, match="Disabling autocast"):
        ctx = taugrad.autocast("cuda")
    with ctx:
        y = taugrad.ones(2, dtype=taugrad.float32) * 2
    assert y.dtype == taugrad.float32


def test_autocast_cpu_says_precision_is_not_lowered():
    with pytest.warns(UserWarning, match="no lowered precision"):
        taugrad.amp.autocast("cpu", dtype=taugrad.bfloat16)


def test_data_parallel_wraps_and_calls_the_module_as_torch_without_gpus():
    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 2).double()
    tdp = torch.nn.DataParallel(tm)
    dp = taugrad.nn.DataParallel(taugrad.nn.Linear(3, 2, dtype=taugrad.float64))
    dp.load_state_dict({k: taugrad.tensor(v.detach().numpy()) for k, v in tdp.state_dict().items()})
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(dp(taugrad.tensor(x)).detach().numpy(), tdp(torch.tensor(x)).detach().numpy())
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        torch.nn.parallel.data_parallel(tm, torch.tensor(x))
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        taugrad.nn.parallel.data_parallel(dp.module, taugrad.tensor(x))


def test_distributed_is_one_process():
    assert taugrad.distributed.is_available() is False
    assert taugrad.distributed.is_initialized() is False
    with pytest.raises(DistributedUnavailableError, match="runs in one process"):
        taugrad.distributed.init_process_group(backend="gloo")
    with pytest.raises(DistributedUnavailableError, match="load the state dict into PyTorch"):
        taugrad.nn.parallel.DistributedDataParallel(taugrad.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        taugrad.distributed.get_rank()


def test_backends_cuda_flags_are_settable():
    assert taugrad.backends.cuda.is_built() is torch.backends.cuda.is_built() is False
    taugrad.backends.cuda.matmul.allow_tf32 = True
    assert taugrad.backends.cuda.matmul.allow_tf32 is True
    taugrad.backends.cuda.matmul.allow_tf32 = False


def test_variable_is_a_detached_alias_as_torch():
    for lib in (torch, taugrad):
        x = lib.ones(2, requires_grad=True)
        v = lib.autograd.Variable(x * 2)
        assert (v.requires_grad, v.grad_fn, v.is_leaf) == (False, None, True)
        assert isinstance(x, lib.autograd.Variable)
        base = lib.zeros(3)
        leaf = lib.autograd.Variable(base, requires_grad=True)
        assert leaf.requires_grad and not base.requires_grad
        with lib.no_grad():
            leaf[0] = 5.0
        assert base[0].item() == 5.0

"""CNN modules against torch.nn: state dicts both ways, same outputs and gradients; BatchNorm's state."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn


def _model(lib):
    N = lib.nn
    return N.Sequential(
        N.Conv2d(2, 4, 3, padding=1, padding_mode="reflect"), N.BatchNorm2d(4), N.ReLU(),
        N.Conv2d(4, 4, 3, padding="same", groups=4, padding_mode="circular"), N.GroupNorm(2, 4),
        N.MaxPool2d(2, ceil_mode=True), N.Conv2d(4, 6, (2, 3), stride=(1, 2), dilation=(1, 2), padding_mode="replicate",
                                                 padding=1),
        N.ConvTranspose2d(6, 3, 3, stride=2, padding=1, output_padding=1), N.Upsample(scale_factor=2, mode="bilinear"),
        N.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), N.AdaptiveMaxPool2d((2, 3)),
        N.AdaptiveAvgPool2d(1), N.Flatten(), N.Linear(3, 5),
    )


def _to_numpy(state):
    return {k: (v.detach().numpy() if isinstance(v, torch.Tensor) else np.asarray(v._data)) for k, v in state.items()}


def test_state_dicts_travel_both_ways_with_the_same_outputs_and_gradients():
    torch.manual_seed(0)
    theirs = _model(torch).double()
    ours = _model(taugrad)
    assert list(ours.state_dict()) == list(theirs.state_dict())  # keys, order, num_batches_tracked included
    ours.load_state_dict(_to_numpy(theirs.state_dict()))
    x = np.random.default_rng(0).standard_normal((3, 2, 7, 9))
    xt, xg = torch.tensor(x, requires_grad=True), taugrad.tensor(x, requires_grad=True)
    for p in ours.parameters():  # the float32 parameters as float64, to compare at 1e-10
        p._data = p._data.astype(np.float64)
    for b in ours.buffers():
        if b._data.dtype == np.float32:
            b._data = b._data.astype(np.float64)
    out_t, out_g = theirs(xt), ours(xg)
    np.testing.assert_allclose(out_g._data, out_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    out_t.sum().backward()
    out_g.sum().backward()
    np.testing.assert_allclose(xg.grad._data, xt.grad.numpy(), rtol=1e-9, atol=1e-11)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad._data, q.grad.numpy(), rtol=1e-9, atol=1e-11, err_msg=name)
    # running statistics and the batch count, then back into torch
    for key, value in _to_numpy(theirs.state_dict()).items():
        np.testing.assert_allclose(np.asarray(ours.state_dict()[key]._data), value, rtol=1e-10, err_msg=key)
    back = _model(torch).double()
    back.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in _to_numpy(ours.state_dict()).items()})
    theirs.eval(), ours.eval(), back.eval()
    np.testing.assert_allclose(back(xt).detach().numpy(), ours(xg)._data, rtol=1e-10, atol=1e-12)


def test_conv_initialisation_follows_torch_bounds():
    conv = nn.Conv2d(3, 8, (3, 5), groups=1)
    bound = 1 / np.sqrt(3 * 3 * 5)
    assert conv.weight.shape == (8, 3, 3, 5) and conv.bias.shape == (8,)
    assert np.abs(conv.weight._data).max() <= bound and np.abs(conv.bias._data).max() <= bound
    assert conv.weight._data.std() > bound / 3
    assert nn.ConvTranspose2d(4, 6, 3, groups=2).weight.shape == (4, 3, 3, 3)
    assert nn.Conv1d(4, 6, 3, groups=2).weight.shape == (6, 2, 3)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_running_statistics_match_torch(momentum):
    rng = np.random.default_rng(1)
    theirs, ours = torch.nn.BatchNorm1d(3, momentum=momentum).double(), nn.BatchNorm1d(3, momentum=momentum,
                                                                                         dtype="float64")
    for _ in range(3):
        x = rng.standard_normal((5, 3, 4)) * 2 + 1
        np.testing.assert_allclose(ours(x)._data, theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    for key in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(ours.state_dict()[key]._data, theirs.state_dict()[key].numpy(), rtol=1e-12)
    ours.eval(), theirs.eval()
    x = rng.standard_normal((2, 3))
    np.testing.assert_allclose(ours(x)._data, theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10)


class LectureBatchNorm1d:
    """makemore part 3's hand-written BatchNorm1d, verbatim in its logic (``torch`` is whichever library runs it)."""

    def __init__(self, torch_, dim, eps=1e-5, momentum=0.1):
        self.torch = torch_
        self.eps, self.momentum, self.training = eps, momentum, True
        self.gamma, self.beta = torch_.ones(dim), torch_.zeros(dim)
        self.running_mean, self.running_var = torch_.zeros(dim), torch_.ones(dim)

    def __call__(self, x):
        torch_ = self.torch
        if self.training:
            xmean = x.mean(0, keepdim=True)
            xvar = x.var(0, keepdim=True)
        else:
            xmean, xvar = self.running_mean, self.running_var
        xhat = (x - xmean) / torch_.sqrt(xvar + self.eps)
        self.out = self.gamma * xhat + self.beta
        if self.training:
            with torch_.no_grad():
                self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
        return self.out


def test_the_lectures_hand_written_batchnorm_runs_on_taugrad_and_agrees_with_nn_batchnorm():
    rng = np.random.default_rng(2)
    lecture_t, lecture_g = LectureBatchNorm1d(torch, 4), LectureBatchNorm1d(taugrad, 4)
    module = nn.BatchNorm1d(4)
    for _ in range(4):
        x = (rng.standard_normal((32, 4)) * 3 + 2).astype(np.float32)
        out_t, out_g = lecture_t(torch.tensor(x)), lecture_g(taugrad.tensor(x))
        np.testing.assert_allclose(out_g._data, out_t.numpy(), rtol=1e-5, atol=1e-5)
        module(x)
    np.testing.assert_allclose(lecture_g.running_mean._data.ravel(), lecture_t.running_mean.numpy().ravel(), rtol=1e-5)
    # nn.BatchNorm1d keeps the same running estimates (unbiased variance, momentum 0.1)
    np.testing.assert_allclose(module.running_mean._data, lecture_g.running_mean._data.ravel(), rtol=1e-5)
    np.testing.assert_allclose(module.running_var._data, lecture_g.running_var._data.ravel(), rtol=1e-5)
    lecture_g.training = False
    module.eval()
    x = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(module(x)._data, lecture_g(taugrad.tensor(x))._data, rtol=1e-4, atol=1e-5)


def test_dropout2d_zeroes_whole_channels_and_keeps_the_mean():
    x = taugrad.ones(200, 8, 3, 3)
    out = nn.Dropout2d(0.25)(x)._data
    per_channel = out.reshape(200, 8, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 1 / 0.75).all(-1))
    assert abs(out.mean() - 1.0) < 0.1
    layer = nn.Dropout2d(0.25).eval()
    assert layer(x) is x or np.array_equal(layer(x)._data, x._data)


def test_max_pool_indices_and_ties_follow_torch():
    x = np.array([[[[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0], [5.0, 5.0, 4.0, 4.0]]]])
    for kwargs in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 1, "padding": 1}):
        ours, idx = taugrad.nn.functional.max_pool2d(taugrad.tensor(x), return_indices=True, **kwargs)
        theirs, tidx = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kwargs)
        np.testing.assert_array_equal(idx._data, tidx.numpy())
        np.testing.assert_array_equal(ours._data, theirs.numpy())
    # a window of padding only (dilation over a 1-pixel map): -inf and torch's index, no gradient
    x1 = taugrad.tensor([[[[0.5]]]], requires_grad=True)
    out, idx = taugrad.nn.functional.max_pool2d(x1, (1, 2), 1, (0, 1), (1, 2), return_indices=True)
    want, want_idx = torch.nn.functional.max_pool2d(torch.tensor([[[[0.5]]]]), (1, 2), 1, (0, 1), (1, 2),
                                                    return_indices=True)
    assert out._data.tolist() == want.tolist() and idx._data.tolist() == want_idx.tolist()
    out.sum().backward()
    assert x1.grad._data.tolist() == [[[[0.0]]]]


@pytest.mark.parametrize("channels_last, nan", [(False, False), (True, False), (True, True)])
def test_tiled_max_pool_gradient_goes_to_the_first_maximum_as_torch(channels_last, nan):
    """Stride = kernel tiling the map (the tiled path): ties (ReLU zeros, equal values); a NaN (general path)."""
    rng = np.random.default_rng(1)
    x = np.maximum(rng.integers(-2, 3, (2, 3, 6, 4)), 0).astype(np.float64)  # many tied tiles
    if nan:
        x[1, 2, 0, 0] = np.nan
    if channels_last:  # a convolution's output layout
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    g = rng.standard_normal((2, 3, 3, 2))
    for kernel in (2, (3, 2)):
        g_k = g[:, :, :6 // (kernel if isinstance(kernel, int) else kernel[0])]
        ours_x = taugrad.tensor(x, requires_grad=True)
        theirs_x = torch.tensor(x, requires_grad=True)
        ours = taugrad.nn.functional.max_pool2d(ours_x, kernel)
        theirs = torch.nn.functional.max_pool2d(theirs_x, kernel)
        np.testing.assert_array_equal(ours._data, theirs.detach().numpy())
        ours.backward(taugrad.tensor(g_k))
        theirs.backward(torch.tensor(g_k))
        np.testing.assert_array_equal(ours_x.grad._data, theirs_x.grad.numpy())


def test_conv_layouts_agree_with_torch_for_few_and_many_channels():
    """Few channels (per-sample products) and many channels (the channels-last GEMM), chained."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 2, 8, 8))
    w1, w2 = rng.standard_normal((8, 2, 3, 3)), rng.standard_normal((5, 8, 3, 3))
    ours = [taugrad.tensor(a, requires_grad=True) for a in (x, w1, w2)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w1, w2)]
    outs = []
    for L, (xx, a, b) in ((taugrad, ours), (torch, theirs)):
        h = L.nn.functional.conv2d(xx, a, padding=1).relu()
        h = L.nn.functional.max_pool2d(h, 2)
        out = L.nn.functional.conv2d(h, b, stride=1)
        (out ** 2).sum().backward()
        outs.append(out)
    np.testing.assert_allclose(outs[0]._data, outs[1].detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad._data, b.grad.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("stride, padding, dilation", [(1, 2, 1), ((2, 1), (1, 0), 1), (1, 1, (2, 1)),
                                                       ((1, 3), 0, (1, 2))])
@pytest.mark.parametrize("needs", ["both", "weight", "input"])
def test_batch_last_layout_agrees_with_torch(stride, padding, dilation, needs):
    """Few channels on a map of more than 64 positions (the batch-last layout), chained as in LeNet-5:
    conv, ReLU, 2x2 max pool, conv on the pooled batch-last output; with only the weight or only the
    input requiring a gradient (the first layer of a network; a frozen weight)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 2, 20, 19))
    w1, b1, w2 = rng.standard_normal((4, 2, 3, 3)), rng.standard_normal(4), rng.standard_normal((5, 4, 2, 3))
    grads = {"both": (True, True), "weight": (False, True), "input": (True, False)}[needs]
    flags = (grads[0], grads[1], grads[1], grads[1])
    ours = [taugrad.tensor(a, requires_grad=f) for a, f in zip((x, w1, b1, w2), flags)]
    theirs = [torch.tensor(a, requires_grad=f) for a, f in zip((x, w1, b1, w2), flags)]
    outs = []
    for L, (xx, a, b, c) in ((taugrad, ours), (torch, theirs)):
        h = L.nn.functional.conv2d(xx, a, b, stride=stride, padding=padding, dilation=dilation).relu()
        h = L.nn.functional.max_pool2d(h, 2)
        out = L.nn.functional.conv2d(h, c, padding=1)
        (out ** 2).sum().backward()
        outs.append(out)
    assert outs[0]._data.shape == tuple(outs[1].shape)
    np.testing.assert_allclose(outs[0]._data, outs[1].detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(ours, theirs):
        if b.grad is not None:
            np.testing.assert_allclose(a.grad._data, b.grad.numpy(), rtol=1e-9, atol=1e-10)
        else:
            assert a.grad is None


def test_batch_last_layout_transposed_conv_and_float32():
    """conv_transpose2d onto a large map (its col2im in the batch-last layout) against torch, and a float32
    convolution there staying float32."""
    rng = np.random.default_rng(4)
    y, w = rng.standard_normal((2, 3, 9, 10)), rng.standard_normal((3, 2, 3, 4))
    ours_y, ours_w = taugrad.tensor(y, requires_grad=True), taugrad.tensor(w, requires_grad=True)
    theirs_y, theirs_w = torch.tensor(y, requires_grad=True), torch.tensor(w, requires_grad=True)
    ours = taugrad.nn.functional.conv_transpose2d(ours_y, ours_w, stride=2, padding=1, output_padding=1)
    theirs = torch.nn.functional.conv_transpose2d(theirs_y, theirs_w, stride=2, padding=1, output_padding=1)
    np.testing.assert_allclose(ours._data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    ours.sin().sum().backward()
    theirs.sin().sum().backward()
    np.testing.assert_allclose(ours_y.grad._data, theirs_y.grad.numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ours_w.grad._data, theirs_w.grad.numpy(), rtol=1e-9, atol=1e-10)
    x32 = taugrad.tensor(rng.standard_normal((4, 1, 16, 16)).astype(np.float32), requires_grad=True)
    w32 = taugrad.tensor(rng.standard_normal((3, 1, 5, 5)).astype(np.float32), requires_grad=True)
    out = taugrad.nn.functional.conv2d(x32, w32, padding=2)
    out.sum().backward()
    assert out.dtype == x32.grad.dtype == w32.grad.dtype == taugrad.float32


@pytest.mark.parametrize("call, message", [
    (lambda: taugrad.nn.functional.conv2d(taugrad.zeros(1, 3, 5, 5), taugrad.zeros(4, 2, 3, 3)), "groups=1"),
    (lambda: taugrad.nn.functional.conv2d(taugrad.zeros(1, 1, 2, 2), taugrad.zeros(1, 1, 3, 3)), "larger than"),
    (lambda: taugrad.nn.functional.conv2d(taugrad.zeros(1, 1, 5, 5), taugrad.zeros(1, 1, 3, 3), stride=2,
                                          padding="same"), "strided"),
    (lambda: taugrad.nn.functional.max_pool2d(taugrad.zeros(1, 1, 5, 5), 2, padding=2), "half the kernel"),
    (lambda: nn.Conv2d(3, 4, 3, padding_mode="mirror"), "padding_mode"),
    (lambda: nn.BatchNorm2d(3)(taugrad.zeros(1, 3, 1, 1)), "more than 1 value"),
])
def test_bad_arguments_are_one_line_errors(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("shape, widths", [((4, 5), (2, 1)), ((2, 4, 5), (2, 1, 1, 2)), ((1, 2, 4, 5), (1, 2, 3, 0)),
                                           ((1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 2)), ((2, 3, 4, 5), (0, 0, 1, 1))])
def test_functional_pad_modes_match_torch_values_and_gradients(mode, shape, widths):
    x = np.random.default_rng(4).standard_normal(shape)
    theirs_in, ours_in = torch.tensor(x, requires_grad=True), taugrad.tensor(x, requires_grad=True)
    theirs = torch.nn.functional.pad(theirs_in, widths, mode=mode)
    ours = taugrad.nn.functional.pad(ours_in, widths, mode=mode)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    w = np.random.default_rng(5).standard_normal(tuple(theirs.shape))
    (theirs * torch.tensor(w)).sum().backward()
    (ours * taugrad.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda F, x: F.pad(x, (1, 1), mode="reflect", value=1.0),
    lambda F, x: F.pad(x, (1, 1), mode="bogus"),
    lambda F, x: F.pad(x[0, 0, 0], (1, 1), mode="reflect"),
    lambda F, x: F.pad(x, (1, 1), mode="replicate"),
    lambda F, x: F.pad(x, (5, 0), mode="reflect"),
])
def test_functional_pad_refuses_what_torch_refuses(call):
    x = np.zeros((1, 2, 3, 4))
    with pytest.raises((RuntimeError, ValueError, NotImplementedError)):
        call(torch.nn.functional, torch.tensor(x))
    with pytest.raises(ValueError) as info:
        call(taugrad.nn.functional, taugrad.tensor(x))
    assert "\n" not in str(info.value) and str(info.value).startswith("pad:")

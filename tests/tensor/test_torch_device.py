"""Devices as PyTorch's API: ``device``, ``device=``, ``Tensor.to``/``cpu``/``cuda``, ``Module.to``,
``taugrad.cuda`` / ``accelerator`` / ``backends``.

torch (a CPU build) is the oracle for the device objects and the argument
forms.  Where CuPy or a GPU is missing, asking for CUDA is a one-line
``RuntimeError`` saying which; the device path itself is tested on a fake
device in tests/backend.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn

NO_CUDA = r"^[\w.]+: CUDA requested, but (CuPy is not installed|CuPy found no GPU) \(.*\)$"

# the tests of the refusals run where CUDA is missing (the GPU suite, tests/backend, covers the other case)
_CUDA_HERE = taugrad.cuda.is_available()
without_cuda = pytest.mark.skipif(_CUDA_HERE, reason="CUDA is available here: the refusals are not raised")

# ---------------------------------------------------------------------------
# the device object
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("cpu",), ("cpu", 0), ("cpu:0",), ("cuda",), ("cuda", 1), ("cuda:2",), ("mps",),
                                  ("meta",)], ids=str)
def test_device_objects_match_torch(args):
    want, got = torch.device(*args), taugrad.device(*args)
    assert (got.type, got.index) == (want.type, want.index)
    assert str(got) == str(want) and repr(got) == repr(want)
    assert taugrad.device(got) == got and hash(taugrad.device(got)) == hash(got)


def test_device_equality_as_torch():
    assert taugrad.device("cpu") == taugrad.device("cpu")
    assert taugrad.device("cpu") != taugrad.device("cpu", 0)
    assert taugrad.device("cpu") != taugrad.device("cuda")
    # a device never equals a string in torch: compare str(d) or d.type
    assert (torch.device("cpu") == "cpu") is False
    assert (taugrad.device("cpu") == "cpu") is False
    assert {taugrad.device("cpu"): 1}[taugrad.device("cpu")] == 1


@pytest.mark.parametrize("args, error", [
    (("foo",), RuntimeError), (("cuda:x",), RuntimeError), (("cpu", -1), RuntimeError), (("cpu", "0"), TypeError),
    ((None,), TypeError),
], ids=str)
def test_bad_devices_raise_as_torch(args, error):
    with pytest.raises(error):
        torch.device(*args)
    with pytest.raises(error, match=r"^device: "):
        taugrad.device(*args)


def test_tensor_device_properties():
    x, t = taugrad.zeros(2), torch.zeros(2)
    assert x.device == taugrad.device("cpu") and repr(x.device) == repr(t.device)
    assert x.is_cuda is t.is_cuda is False
    assert x.is_cpu is t.is_cpu is True
    assert taugrad.get_default_device() == x.device and str(torch.get_default_device()) == "cpu"


# ---------------------------------------------------------------------------
# device= on every creation function
# ---------------------------------------------------------------------------

CREATION = {
    "tensor": lambda L, d: L.tensor([1.0, 2.0], device=d),
    "zeros": lambda L, d: L.zeros(2, 3, device=d),
    "ones": lambda L, d: L.ones((2,), device=d),
    "empty": lambda L, d: L.empty(4, device=d),
    "full": lambda L, d: L.full((2, 2), 3.0, device=d),
    "zeros_like": lambda L, d: L.zeros_like(L.ones(2), device=d),
    "ones_like": lambda L, d: L.ones_like(L.ones(2), device=d),
    "full_like": lambda L, d: L.full_like(L.ones(2), 7.0, device=d),
    "arange": lambda L, d: L.arange(5, device=d),
    "linspace": lambda L, d: L.linspace(0, 1, 5, device=d),
    "eye": lambda L, d: L.eye(3, device=d),
    "rand": lambda L, d: L.rand(2, device=d),
    "randn": lambda L, d: L.randn(2, 2, device=d),
    "randint": lambda L, d: L.randint(0, 5, (3,), device=d),
    "randperm": lambda L, d: L.randperm(4, device=d),
    "rand_like": lambda L, d: L.rand_like(L.ones(2), device=d),
    "randn_like": lambda L, d: L.randn_like(L.ones(2), device=d),
    "randint_like": lambda L, d: L.randint_like(L.ones(2), 4, device=d),
    "normal": lambda L, d: L.normal(0.0, 1.0, (3,), device=d),
    "empty_like": lambda L, d: L.empty_like(L.ones(2), device=d),
    "as_tensor": lambda L, d: L.as_tensor([1, 2], device=d),
    "logspace": lambda L, d: L.logspace(0, 2, 3, device=d),
}


@pytest.mark.parametrize("name", sorted(CREATION))
@pytest.mark.parametrize("spec", ["cpu", "cpu_object", None, "cpu:0"])
def test_creation_accepts_the_cpu(name, spec):
    call = CREATION[name]
    want = call(torch, torch.device("cpu") if spec == "cpu_object" else spec)
    got = call(taugrad, taugrad.device("cpu") if spec == "cpu_object" else spec)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.device == taugrad.device("cpu")


@without_cuda
@pytest.mark.parametrize("name", sorted(CREATION))
@pytest.mark.parametrize("spec", ["cuda", "cuda:0", "cuda_object"])
def test_creation_refuses_cuda_in_one_line(name, spec):
    dev = taugrad.device("cuda") if spec == "cuda_object" else spec
    with pytest.raises(RuntimeError, match=NO_CUDA):
        CREATION[name](taugrad, dev)


def test_mps_and_unknown_devices_are_refused():
    with pytest.raises(RuntimeError, match=r"^zeros: device 'mps' requested, but no MPS device is available"):
        taugrad.zeros(2, device="mps")
    with pytest.raises(RuntimeError, match=r"^device: unknown device type 'gpu'"):
        taugrad.zeros(2, device="gpu")
    with pytest.raises(TypeError, match=r"^zeros: device must be a string"):
        taugrad.zeros(2, device=1.5)


# ---------------------------------------------------------------------------
# Tensor.to / cpu / cuda
# ---------------------------------------------------------------------------

TO_FORMS = {
    "device": lambda L, x: x.to("cpu"),
    "device_object": lambda L, x: x.to(L.device("cpu")),
    "device_kw": lambda L, x: x.to(device="cpu"),
    "dtype": lambda L, x: x.to(L.float64),
    "dtype_kw": lambda L, x: x.to(dtype=L.int64),
    "device_dtype": lambda L, x: x.to("cpu", L.float64),
    "device_dtype_kw": lambda L, x: x.to(device="cpu", dtype=L.float64),
    "other_tensor": lambda L, x: x.to(L.zeros(1, dtype=L.float64)),
    "non_blocking": lambda L, x: x.to("cpu", non_blocking=True),
    "dtype_non_blocking_positional": lambda L, x: x.to(L.float64, True),
    "copy": lambda L, x: x.to("cpu", copy=True),
    "dtype_copy": lambda L, x: x.to(L.float32, copy=True),
    "same_dtype": lambda L, x: x.to(L.float32),
    "cpu": lambda L, x: x.cpu(),
}


@pytest.mark.parametrize("name", sorted(TO_FORMS))
def test_to_forms_match_torch(name):
    form = TO_FORMS[name]
    t = torch.tensor([1.5, -2.0, 3.25])
    x = taugrad.tensor([1.5, -2.0, 3.25])
    want, got = form(torch, t), form(taugrad, x)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(np.asarray(got.detach()), want.numpy())
    assert (got is x) == (want is t)  # no copy unless asked or converted


def test_to_keeps_the_graph():
    x = taugrad.tensor([1.0, 2.0], requires_grad=True)
    (x.to("cpu", taugrad.float64) * 3).sum().backward()
    assert x.grad.dtype == taugrad.float32
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    y = taugrad.tensor([1.0], requires_grad=True)
    (y.to("cpu", copy=True) * 2).sum().backward()
    assert y.grad.item() == 2.0


@without_cuda
@pytest.mark.parametrize("target", ["cuda", "cuda:0", "cuda_object", 0])
def test_to_cuda_is_one_line_runtime_error(target):
    target = taugrad.device("cuda") if target == "cuda_object" else target
    with pytest.raises(RuntimeError, match=NO_CUDA):
        taugrad.zeros(2).to(target)
    with pytest.raises(RuntimeError, match=NO_CUDA):
        taugrad.zeros(2).to(target, taugrad.float64)


@without_cuda
def test_cuda_method_raises_and_cpu_is_identity():
    x = taugrad.ones(2)
    assert x.cpu() is x
    with pytest.raises(RuntimeError, match=NO_CUDA):
        x.cuda()
    with pytest.raises(RuntimeError, match=NO_CUDA):
        x.cuda(1)
    with pytest.raises(RuntimeError, match=r"^to: device 'mps' requested, but no MPS device is available"):
        x.to("mps")


def test_to_argument_errors():
    x = taugrad.ones(2)
    with pytest.raises(TypeError, match=r"^to: unexpected keyword argument 'colour'"):
        x.to("cpu", colour=1)
    with pytest.raises(TypeError, match=r"^to: too many arguments"):
        x.to("cpu", taugrad.float64, False, False, 1)


# ---------------------------------------------------------------------------
# Module.to / cpu / cuda
# ---------------------------------------------------------------------------


class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("scale", taugrad.ones(2))
        self.register_buffer("steps", taugrad.zeros(1, dtype=taugrad.int64))

    def forward(self, x):
        return self.fc(x) * self.scale


def test_module_to_dtype_converts_in_place_keeping_identity():
    model = WithBuffers()
    weight = model.fc.weight
    opt = taugrad.optim.SGD(model.parameters(), lr=0.1)
    model(taugrad.ones(4, 3)).sum().backward()
    assert model.to(taugrad.float64) is model
    assert model.fc.weight is weight and weight.dtype == taugrad.float64
    assert weight.grad.dtype == taugrad.float64
    assert model.scale.dtype == taugrad.float64
    assert model.steps.dtype == taugrad.int64  # integer buffers keep their dtype, as torch
    before = weight.detach().numpy().copy()
    opt.step()  # the optimizer still holds the converted parameter
    assert not np.array_equal(weight.detach().numpy(), before)
    out = model(taugrad.ones(1, 3, dtype=taugrad.float64))
    assert out.dtype == taugrad.float64


@without_cuda
def test_module_to_forms():
    model = WithBuffers()
    assert model.to("cpu") is model and model.cpu() is model
    assert model.to(taugrad.device("cpu"), taugrad.float64).fc.bias.dtype == taugrad.float64
    model.to(taugrad.zeros(1))  # a tensor's dtype: back to float32
    assert model.fc.bias.dtype == taugrad.float32
    with pytest.raises(TypeError):
        torch.nn.Linear(2, 2).to(torch.int64)
    with pytest.raises(TypeError, match=r"^Module.to: only floating or complex dtypes"):
        model.to(taugrad.int64)
    with pytest.raises(RuntimeError, match=NO_CUDA):
        model.to("cuda")
    with pytest.raises(RuntimeError, match=NO_CUDA):
        model.cuda()


# ---------------------------------------------------------------------------
# taugrad.cuda, accelerator, backends, default device, typical user code
# ---------------------------------------------------------------------------


@without_cuda
def test_cuda_accelerator_and_backends_answer_as_torch_without_them():
    assert taugrad.cuda.is_available() is False and taugrad.cuda.device_count() == 0
    assert taugrad.cuda.manual_seed(0) is None and taugrad.cuda.manual_seed_all(0) is None
    assert taugrad.accelerator.is_available() is False and taugrad.accelerator.current_accelerator() is None
    assert torch.accelerator.current_accelerator() is None  # the oracle agrees on this CPU build
    assert taugrad.backends.mps.is_available() is False
    taugrad.backends.cudnn.benchmark = True  # settable, as scripts do
    assert taugrad.backends.cudnn.is_available() is False
    with pytest.raises(RuntimeError, match=NO_CUDA):
        taugrad.cuda.current_device()


@without_cuda
def test_default_device():
    taugrad.set_default_device("cpu")
    taugrad.set_default_device(None)
    assert taugrad.get_default_device() == taugrad.device("cpu")
    with pytest.raises(RuntimeError, match=NO_CUDA):
        taugrad.set_default_device("cuda")


@without_cuda
def test_generator_on_cuda_is_refused():
    assert taugrad.Generator(device=taugrad.device("cpu")).device == taugrad.device("cpu")
    with pytest.raises(RuntimeError, match=NO_CUDA):
        taugrad.Generator(device="cuda")


def test_typical_device_selection_code_runs():
    torch_ = taugrad  # what `import taugrad as torch` gives a script
    device = "cuda" if torch_.cuda.is_available() else "cpu"
    device = torch_.device(device)
    model = nn.Linear(4, 2).to(device)
    x = torch_.randn(8, 4).to(device)
    y = torch_.randint(0, 2, (8,), device=device)
    loss = taugrad.functional.cross_entropy(model(x), y)
    loss.backward()
    assert loss.device == device and model.weight.grad is not None

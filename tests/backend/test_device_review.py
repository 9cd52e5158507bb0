"""Device semantics checked against PyTorch, on the strict fake 'cuda' backend.

Where PyTorch's answer can be computed on a CPU-only build it is: the ``meta``
device stands in for an accelerator as the default device (``torch.set_default_device``
acts on every factory function the same way whatever the device), and dtype
conversions stand in for device moves in ``Module.to`` (both go through
``Module._apply``).  The CUDA-only rules are PyTorch's documented behaviour.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn, optim
from taugrad.tensors.core.backend import CPU, DEFAULT_DEVICES
from taugrad.utils.data import default_collate

from .strict_backend import StrictArray

CUDA0 = taugrad.device("cuda", 0)


@pytest.fixture
def restore_default():
    yield
    DEFAULT_DEVICES[:] = [CPU]


@pytest.fixture
def torch_default_meta():
    """PyTorch with 'meta' as its default device: the oracle for a non-CPU default device."""
    torch.set_default_device("meta")
    try:
        yield
    finally:
        torch.set_default_device(None)


# ---------------------------------------------------------------------------
# moves: self where torch returns self, copies where torch copies
# ---------------------------------------------------------------------------


def test_moves_to_where_a_tensor_is_return_it_and_share_memory(fake_cuda):
    x = taugrad.arange(4.0)
    assert x.to("cpu") is x and x.cpu() is x and x.to(taugrad.device("cpu")) is x
    assert np.shares_memory(x.cpu().numpy(), x.numpy())  # torch: .cpu().numpy() of a CPU tensor aliases it
    y = x.cuda()
    assert y is not x and type(y._data) is StrictArray
    for same in ("cuda", "cuda:0", taugrad.device("cuda"), CUDA0, 0):
        assert y.to(same) is y
    assert y.cuda() is y and y.cuda(0) is y
    assert y.to("cuda", copy=True) is not y
    host = y.cpu()
    host.numpy()[0] = 10.0  # a copy on the host: the device tensor is untouched
    assert y.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match="cuda:0"):
        y.numpy()  # torch: "can't convert cuda:0 device type tensor to numpy"


def test_gradients_arrive_on_the_device_of_their_leaf(fake_cuda):
    a = taugrad.tensor([1.0, 2.0], requires_grad=True)
    b = taugrad.tensor([3.0, 4.0], device="cuda", requires_grad=True)
    (a.cuda() * b).sum().backward()
    assert a.grad.device == CPU and a.grad.tolist() == [3.0, 4.0]
    assert b.grad.device == CUDA0 and type(b.grad._data) is StrictArray and b.grad.cpu().tolist() == [1.0, 2.0]


# ---------------------------------------------------------------------------
# Module.to
# ---------------------------------------------------------------------------


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Linear(2, 2)
        self.b.weight = self.a.weight  # shared between two submodules
        self.register_buffer("absent", None)
        self.register_buffer("count", taugrad.tensor(0))
        self.seq = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))


def test_module_to_moves_nested_shared_and_keeps_none_buffers(fake_cuda):
    net = _Net()
    before = [id(p) for p in net.parameters()]
    assert net.to("cuda") is net
    assert all(p.device == CUDA0 for p in net.parameters())
    assert all(b.device == CUDA0 for b in net.buffers())
    assert net.absent is None and net.b.weight is net.a.weight
    assert [id(p) for p in net.parameters()] == before
    assert net.count.dtype == taugrad.int64 and net.seq[1].num_batches_tracked.device == CUDA0
    net.cpu()
    assert all(type(t._data) is np.ndarray for t in list(net.parameters()) + list(net.buffers()))


def test_module_to_keeps_the_gradient_tensor_object():
    """torch's ``Module._apply`` assigns ``param.grad.data``: the gradient Tensor keeps its identity."""
    ref = torch.nn.Linear(2, 2)
    ref.weight.grad = torch.ones(2, 2)
    ref_grad = ref.weight.grad
    ref.double()
    assert ref.weight.grad is ref_grad and ref_grad.dtype == torch.float64

    layer = nn.Linear(2, 2)
    layer.weight.grad = taugrad.ones(2, 2)
    grad = layer.weight.grad
    layer.double()
    assert layer.weight.grad is grad and grad.dtype == taugrad.float64


def test_module_to_device_keeps_the_gradient_tensor_object(fake_cuda):
    layer = nn.Linear(2, 2)
    layer.weight.grad = taugrad.ones(2, 2)
    grad = layer.weight.grad
    layer.to("cuda")
    assert layer.weight.grad is grad and grad.device == CUDA0


OPTIMIZERS = {
    "SGD": lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
    "Adam": lambda p: optim.Adam(p, lr=0.1),
    "AdamW": lambda p: optim.AdamW(p, lr=0.1),
    "RMSprop": lambda p: optim.RMSprop(p, lr=0.1),
    "Adagrad": lambda p: optim.Adagrad(p, lr=0.1),
    "Adadelta": lambda p: optim.Adadelta(p, lr=0.1),
    "Adamax": lambda p: optim.Adamax(p, lr=0.1),
    "NAdam": lambda p: optim.NAdam(p, lr=0.1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_built_before_the_move_updates_the_moved_model(fake_cuda, name):
    """torch: ``model.to(device)`` after building the optimizer keeps the Parameter objects, so it just works."""
    def run(device):
        taugrad.manual_seed(0)
        net = nn.Linear(3, 2)
        opt = OPTIMIZERS[name](net.parameters())
        net.to(device)
        x = taugrad.ones(4, 3, device=device)
        for _ in range(3):
            opt.zero_grad()
            net(x).sum().backward()
            opt.step()
        return net, opt

    cpu_net, _ = run("cpu")
    dev_net, dev_opt = run("cuda")
    for a, b in zip(cpu_net.parameters(), dev_net.parameters()):
        assert b.device == CUDA0
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().cpu().numpy())
    for state in dev_opt.state.values():
        for value in state.values():  # tensors, as torch's; the arrays on the device (the step count on the host)
            assert isinstance(value, taugrad.Tensor)
            assert value.ndim == 0 or type(value._data) is StrictArray


def test_optimizer_state_dict_crosses_devices_through_a_checkpoint(fake_cuda, tmp_path):
    net = nn.Linear(3, 2).to("cuda")
    opt = optim.Adam(net.parameters(), lr=0.1)
    net(taugrad.ones(4, 3, device="cuda")).sum().backward()
    opt.step()
    taugrad.save(opt.state_dict(), tmp_path / "opt.npz")
    loaded = taugrad.load(tmp_path / "opt.npz")
    for device, kind in (("cuda", StrictArray), ("cpu", np.ndarray)):
        other = nn.Linear(3, 2).to(device)
        other_opt = optim.Adam(other.parameters(), lr=0.1)
        other_opt.load_state_dict(loaded)
        state = other_opt.state[other.weight]
        assert type(state["exp_avg"]._data) is kind and type(state["exp_avg_sq"]._data) is kind
        np.testing.assert_array_equal(_host(state["exp_avg"]._data), _host(opt.state[net.weight]["exp_avg"]._data))


def _host(array):
    return array._a if type(array) is StrictArray else array


# ---------------------------------------------------------------------------
# load(map_location=...)
# ---------------------------------------------------------------------------


def _saved(tmp_path):
    path = tmp_path / "ckpt.npz"
    taugrad.save({"host": taugrad.tensor([1.0, 2.0]), "dev": taugrad.tensor([3.0], device="cuda")}, path)
    return path


MAP_LOCATIONS = {
    "None": (None, CPU, CUDA0),
    "'cpu'": ("cpu", CPU, CPU),
    "'cuda'": ("cuda", CUDA0, CUDA0),
    "'cuda:0'": ("cuda:0", CUDA0, CUDA0),
    "device('cuda')": (taugrad.device("cuda"), CUDA0, CUDA0),
    "device('cpu')": (taugrad.device("cpu"), CPU, CPU),
    "int 0": (0, CUDA0, CUDA0),
    "dict cuda:0->cpu": ({"cuda:0": "cpu"}, CPU, CPU),
    "dict cpu->cuda": ({"cpu": "cuda"}, CUDA0, CUDA0),
    "dict device keys": ({taugrad.device("cuda", 0): taugrad.device("cpu")}, CPU, CPU),
    "callable to cuda": (lambda t, location: t.to("cuda"), CUDA0, CUDA0),
    "callable to cpu": (lambda t, location: t.cpu(), CPU, CPU),
}


@pytest.mark.parametrize("form", list(MAP_LOCATIONS))
def test_load_map_location_forms(fake_cuda, tmp_path, form):
    map_location, host_to, dev_to = MAP_LOCATIONS[form]
    loaded = taugrad.load(_saved(tmp_path), map_location=map_location)
    assert loaded["host"].device == host_to and loaded["dev"].device == dev_to
    assert loaded["host"].cpu().tolist() == [1.0, 2.0] and loaded["dev"].cpu().tolist() == [3.0]
    assert type(loaded["dev"]._data) is (StrictArray if dev_to == CUDA0 else np.ndarray)


def test_load_callable_returning_none_restores_where_saved(fake_cuda, tmp_path):
    """torch's ``_get_restore_location``: a ``map_location`` callable's None means "the default restore
    location", i.e. the device the tensor was saved from (as ``map_location=None``), not the host."""
    seen = []
    loaded = taugrad.load(_saved(tmp_path), map_location=lambda t, location: seen.append(location))
    assert sorted(seen) == ["cpu", "cuda:0"]
    assert loaded["host"].device == CPU
    assert loaded["dev"].device == CUDA0 and type(loaded["dev"]._data) is StrictArray


def test_load_ignores_the_default_device(fake_cuda, tmp_path, restore_default, torch_default_meta):
    """torch.load puts tensors where they were saved from, whatever the default device."""
    torch_path = tmp_path / "t.pt"
    with torch.device("cpu"):
        torch.save({"a": torch.ones(2, device="cpu")}, torch_path)
    assert torch.load(torch_path)["a"].device == torch.device("cpu")
    path = _saved(tmp_path)
    taugrad.set_default_device("cuda")
    loaded = taugrad.load(path)
    assert loaded["host"].device == CPU and loaded["dev"].device == CUDA0


# ---------------------------------------------------------------------------
# DLPack
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda L: L.arange(6.0).reshape(2, 3).t(),  # non-contiguous
    lambda L: L.tensor(3.5),  # 0-d
    lambda L: L.tensor([True, False, True]),  # bool
    lambda L: L.arange(12).reshape(3, 4)[:, ::2],  # strided int64
], ids=["transposed", "0-d", "bool", "strided"])
def test_dlpack_export_and_import_as_torch(make):
    ours, ref = make(taugrad), make(torch)
    for consumer in (np.from_dlpack, torch.from_dlpack):
        got = consumer(ours)
        assert tuple(got.shape) == tuple(ref.shape)
        np.testing.assert_array_equal(np.asarray(got), ref.numpy())
    back = taugrad.from_dlpack(ref)
    assert back.shape == tuple(ref.shape) and back.dtype.name == str(ref.dtype).replace("torch.", "")
    np.testing.assert_array_equal(back.numpy(), ref.numpy())


def test_dlpack_shares_memory_with_torch_views():
    ref = torch.arange(6.0).reshape(2, 3).t()
    ours = taugrad.from_dlpack(ref)
    ref[0, 1] = 100.0
    assert ours[0, 1].item() == 100.0


def test_dlpack_refuses_tensors_that_require_grad():
    ref = torch.ones(2, requires_grad=True)
    with pytest.raises(BufferError):
        torch.from_dlpack(ref)
    x = taugrad.ones(2, requires_grad=True)
    with pytest.raises((BufferError, RuntimeError), match="requires grad"):
        np.from_dlpack(x)
    with pytest.raises(BufferError, match="requires grad"):
        taugrad.from_dlpack(x)  # not a silent detached alias of memory that backward() reads
    assert taugrad.from_dlpack(x.detach()).requires_grad is False


def test_dunder_dlpack_raises_buffererror_as_torch():
    with pytest.raises(BufferError):
        taugrad.ones(2, requires_grad=True).__dlpack__()


# ---------------------------------------------------------------------------
# the default device
# ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
def test_tensor_of_a_tensor_goes_to_the_default_device(fake_cuda, restore_default, torch_default_meta):
    """torch's default device gives ``device=`` to ``torch.tensor``/``as_tensor`` even for a tensor argument."""
    ref_host = torch.ones(2, device="cpu")
    assert torch.tensor(ref_host).device.type == "meta" and torch.as_tensor(ref_host).device.type == "meta"
    host = taugrad.tensor([1.0, 2.0])
    taugrad.set_default_device("cuda")
    copied = taugrad.tensor(host)
    assert copied.device == CUDA0 and copied.cpu().tolist() == [1.0, 2.0]
    assert taugrad.as_tensor(host).device == CUDA0
    assert taugrad.tensor(host, device="cpu").device == CPU
    with taugrad.device("cpu"):  # a with-block is a default device too
        assert taugrad.tensor(copied).device == CPU


def test_tensor_of_a_tensor_stays_put_without_a_default_device(fake_cuda):
    on_device = taugrad.tensor([1.0, 2.0], device="cuda")
    copied = taugrad.tensor(on_device)
    assert copied.device == CUDA0 and copied._data is not on_device._data  # torch.tensor copies
    assert taugrad.as_tensor(on_device) is on_device  # as_tensor shares
    assert taugrad.tensor(taugrad.ones(2)).device == CPU


def test_as_tensor_to_the_default_device_keeps_the_graph(fake_cuda, restore_default):
    leaf = taugrad.tensor([1.0, 2.0], requires_grad=True)
    taugrad.set_default_device("cuda")
    moved = taugrad.as_tensor(leaf)
    assert moved.device == CUDA0
    (moved * moved).sum().backward()
    assert leaf.grad.device == CPU and leaf.grad.tolist() == [2.0, 4.0]


def test_default_device_leaves_existing_tensors_and_scalars_alone(fake_cuda, restore_default, torch_default_meta):
    ref = torch.empty(2, 2, device="cpu")
    torch.nn.init.normal_(ref)
    assert ref.device.type == "cpu" and torch.arange(torch.tensor(3, device="cpu")).device.type == "meta"
    weight = taugrad.empty(2, 2, device="cpu")
    scalar = taugrad.tensor(3, device="cuda")
    taugrad.set_default_device("cuda")
    for init in (nn.init.normal_, nn.init.kaiming_uniform_, nn.init.xavier_normal_, nn.init.zeros_):
        init(weight)
        assert weight.device == CPU and type(weight._data) is np.ndarray
    assert taugrad.arange(scalar).device == CUDA0 and taugrad.arange(scalar).cpu().tolist() == [0, 1, 2]
    taugrad.set_default_device(None)
    assert taugrad.arange(scalar).device == CPU  # a scalar argument does not choose the device (torch: Scalar)


def test_collate_of_tensors_keeps_their_device(fake_cuda, restore_default):
    host = taugrad.ones(2)
    taugrad.set_default_device("cuda")
    assert default_collate([host, host]).device == CPU  # torch.stack of CPU tensors: CPU


def test_collate_of_host_data_follows_the_default_device(fake_cuda, restore_default, torch_default_meta):
    from torch.utils.data import default_collate as torch_collate
    assert torch_collate([np.ones(2), np.ones(2)]).device.type == "meta"
    assert torch_collate([1.0, 2.0]).device.type == "meta"
    taugrad.set_default_device("cuda")
    assert default_collate([np.ones(2), np.ones(2)]).device == CUDA0
    assert default_collate([1.0, 2.0]).device == CUDA0

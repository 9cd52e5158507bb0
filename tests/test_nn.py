"""taugrad.nn: registration, modes, state dicts (with PyTorch as the oracle), layers, initialisation."""
import math
from collections import OrderedDict

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn, optim
from taugrad.tensors.core.node import Tensor

F64 = np.float64


def t2n(tensor):
    return tensor.detach().numpy()


# ---------------------------------------------------------------------------
# registration
# ---------------------------------------------------------------------------


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3, dtype=F64)
        self.norm = nn.LayerNorm(3, dtype=F64)
        self.scale = nn.Parameter(np.full(3, 2.0))
        self.not_a_parameter = Tensor(np.ones(2))  # plain tensors are not registered
        self.size = 3

    def forward(self, x):
        return self.norm(self.fc(x)) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4, dtype=F64)
        self.blocks = nn.Sequential(Block(), nn.GELU(), nn.Dropout(0.5))
        self.head = nn.Linear(3, 2, dtype=F64)

    def forward(self, idx):
        return self.head(self.blocks(self.embed(idx)))


EXPECTED_KEYS = [  # a module's own parameters come before its submodules', as in PyTorch
    "embed.weight",
    "blocks.0.scale",
    "blocks.0.fc.weight", "blocks.0.fc.bias",
    "blocks.0.norm.weight", "blocks.0.norm.bias",
    "head.weight", "head.bias",
]


class TorchBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3, dtype=torch.float64)
        self.norm = torch.nn.LayerNorm(3, dtype=torch.float64)
        self.scale = torch.nn.Parameter(torch.full((3,), 2.0, dtype=torch.float64))

    def forward(self, x):
        return self.norm(self.fc(x)) * self.scale


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4, dtype=torch.float64)
        self.blocks = torch.nn.Sequential(TorchBlock(), torch.nn.GELU(), torch.nn.Dropout(0.5))
        self.head = torch.nn.Linear(3, 2, dtype=torch.float64)

    def forward(self, idx):
        return self.head(self.blocks(self.embed(idx)))


def test_nested_registration_in_assignment_order():
    net = Net()
    names = [name for name, _ in net.named_parameters()]
    assert names == EXPECTED_KEYS
    assert names == [name for name, _ in TorchNet().named_parameters()]  # the same keys as PyTorch
    assert list(net.state_dict()) == list(TorchNet().state_dict())
    assert [p for p in net.parameters()] == [p for _, p in net.named_parameters()]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    assert [name for name, _ in net.named_modules()] == [
        "", "embed", "blocks", "blocks.0", "blocks.0.fc", "blocks.0.norm", "blocks.1", "blocks.2", "head"]
    assert net.blocks[0].size == 3 and isinstance(net.blocks[0].not_a_parameter, Tensor)


def test_sequential_and_module_list_register_their_items():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and isinstance(seq[1:], nn.Sequential)
    named = nn.Sequential(OrderedDict([("hidden", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert [n for n, _ in named.named_parameters()] == ["hidden.weight", "hidden.bias"]
    layers = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    layers.append(nn.Linear(1, 2))
    assert [n for n, _ in layers.named_parameters()][-2:] == ["3.weight", "3.bias"]
    with pytest.raises(IndexError):
        seq[3]


def test_shared_parameter_is_listed_once():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, shared)
    assert len(list(model.parameters())) == 2


def test_reassignment_rules():
    layer = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="parameter 'weight'"):
        layer.weight = np.zeros((2, 2))
    layer.bias = None  # allowed: the parameter becomes absent
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    layer.extra = nn.Parameter(np.zeros(1))
    del layer.extra
    assert [n for n, _ in layer.named_parameters()] == ["weight"]

    class Forgetful(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)  # before super().__init__()

    with pytest.raises(AttributeError, match="super"):
        Forgetful()


def test_train_eval_and_dropout():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net and not any(m.training for m in net.modules())
    x = Tensor(np.ones((1000, 3)))
    drop = nn.Dropout(0.25)
    nn.init.manual_seed(0)
    out = drop(x).detach().numpy()
    kept = out != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(out[kept], 1 / 0.75)
    drop.eval()
    np.testing.assert_array_equal(drop(x).detach().numpy(), x.detach().numpy())
    np.testing.assert_array_equal(nn.Dropout(1.0)(x).detach().numpy(), 0.0)


def test_zero_grad():
    model = nn.Linear(3, 2)
    model(np.ones((4, 3), np.float32)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_repr_shows_structure():
    text = repr(nn.MLP(2, [4], 1))
    assert "(0): Linear(in_features=2, out_features=4, bias=True)" in text and "(1): ReLU()" in text


# ---------------------------------------------------------------------------
# state dicts with PyTorch
# ---------------------------------------------------------------------------


def _torch_state(state):
    return {k: torch.from_numpy(np.array(v.detach().numpy() if isinstance(v, Tensor) else v)) for k, v in state.items()}


def test_state_dict_round_trip_with_torch_gives_identical_outputs():
    idx = np.array([[1, 2, 3], [9, 0, 1]])
    ours, theirs = Net().eval(), TorchNet().eval()

    theirs.load_state_dict(_torch_state(ours.state_dict()))  # taugrad -> torch
    np.testing.assert_allclose(ours(idx).detach().numpy(), t2n(theirs(torch.from_numpy(idx))), rtol=1e-12, atol=1e-12)

    torch.manual_seed(1)
    fresh = TorchNet().eval()
    ours.load_state_dict(fresh.state_dict())  # torch -> taugrad (torch tensors accepted as they are)
    np.testing.assert_allclose(ours(idx).detach().numpy(), t2n(fresh(torch.from_numpy(idx))), rtol=1e-12, atol=1e-12)
    for key, value in fresh.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key].detach().numpy(), value.numpy())


def test_mlp_matches_torch_sequential_outputs_and_gradients():
    ours = nn.MLP(5, [7, 6], 3, dtype=F64)
    theirs = torch.nn.Sequential(
        torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3)
    ).double()
    theirs.load_state_dict(_torch_state(ours.state_dict()))
    x = np.random.default_rng(0).normal(size=(8, 5))
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    taugrad.functional.cross_entropy(ours(x), y).backward()
    torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y)).backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), t2n(q.grad), rtol=1e-10, atol=1e-12, err_msg=name)


def test_training_steps_match_torch():
    """Model + loss + backward + Adam, five steps: the same parameters as PyTorch to 1e-6."""
    ours = nn.MLP(4, [8], 3, dtype=F64)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).double()
    theirs.load_state_dict(_torch_state(ours.state_dict()))
    ours_opt = optim.AdamW(ours.parameters(), lr=0.05)
    theirs_opt = torch.optim.AdamW(theirs.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x, y = rng.normal(size=(16, 4)), rng.integers(0, 3, size=16)
        ours_opt.zero_grad()
        taugrad.functional.cross_entropy(ours(x), y).backward()
        ours_opt.step()
        theirs_opt.zero_grad()
        torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        theirs_opt.step()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), t2n(q), rtol=0, atol=1e-6, err_msg=name)


def test_state_dict_through_a_checkpoint_file(tmp_path):
    model = nn.MLP(3, [4], 2)
    taugrad.save(model.state_dict(), tmp_path / "model.npz")
    other = nn.MLP(3, [4], 2)
    other.load_state_dict(taugrad.load(tmp_path / "model.npz"))
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(model(x).detach().numpy(), other(x).detach().numpy())


def test_state_dict_shares_memory_and_load_is_in_place():
    model = nn.Linear(2, 2)
    weight = model.weight
    state = model.state_dict()
    assert state["weight"].requires_grad is False
    model.load_state_dict({"weight": np.ones((2, 2)), "bias": np.zeros(2)})
    assert model.weight is weight and model.weight.detach().numpy().dtype == np.float32
    np.testing.assert_array_equal(state["weight"].detach().numpy(), 1.0)  # the earlier state dict sees the new values


def test_load_state_dict_errors_name_the_keys_and_change_nothing():
    model = nn.MLP(2, [3], 1)
    before = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    good = {k: np.ones_like(v.detach().numpy()) for k, v in model.state_dict().items()}

    missing = dict(good)
    del missing["2.bias"]
    with pytest.raises(nn.StateDictError, match=r"missing key\(s\): 2\.bias"):
        model.load_state_dict(missing)

    unexpected = dict(good, **{"3.weight": np.zeros(1)})
    with pytest.raises(nn.StateDictError, match=r"unexpected key\(s\): 3\.weight"):
        model.load_state_dict(unexpected)

    misshaped = dict(good, **{"0.weight": np.zeros((3, 5))})
    with pytest.raises(nn.StateDictError, match=r"size mismatch for 0\.weight: shape \(3, 5\).*\(3, 2\)"):
        model.load_state_dict(misshaped)

    with pytest.raises(nn.StateDictError, match="not numeric"):
        model.load_state_dict(dict(good, **{"0.bias": np.array(["a", "b", "c"])}))

    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value.detach().numpy(), before[key])

    result = model.load_state_dict(missing, strict=False)
    assert result.missing_keys == ["2.bias"] and result.unexpected_keys == []


# ---------------------------------------------------------------------------
# layers against torch
# ---------------------------------------------------------------------------


def _compare_layer(ours, theirs, x, atol=1e-10):
    xt = torch.tensor(x, requires_grad=True)
    xo = Tensor(x.copy(), requires_grad=True)
    out_o, out_t = ours(xo), theirs(xt)
    np.testing.assert_allclose(out_o.detach().numpy(), t2n(out_t), atol=atol, rtol=1e-9)
    upstream = np.random.default_rng(1).normal(size=out_o.shape)
    (out_o * Tensor(upstream)).sum().backward()
    (out_t * torch.from_numpy(upstream)).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), t2n(xt.grad), atol=atol, rtol=1e-9)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), t2n(q.grad), atol=atol, rtol=1e-9)


@pytest.mark.parametrize(
    "make_ours, make_theirs",
    [
        (lambda: nn.ReLU(), lambda: torch.nn.ReLU()),
        (lambda: nn.Tanh(), lambda: torch.nn.Tanh()),
        (lambda: nn.Sigmoid(), lambda: torch.nn.Sigmoid()),
        (lambda: nn.GELU(), lambda: torch.nn.GELU()),
        (lambda: nn.GELU("tanh"), lambda: torch.nn.GELU("tanh")),
        (lambda: nn.Flatten(), lambda: torch.nn.Flatten()),
        (lambda: nn.Flatten(0, 1), lambda: torch.nn.Flatten(0, 1)),
        (lambda: nn.Identity(), lambda: torch.nn.Identity()),
    ],
)
def test_parameter_free_layers_match_torch(make_ours, make_theirs):
    x = np.random.default_rng(0).normal(size=(3, 2, 4))
    _compare_layer(make_ours(), make_theirs(), x)


@pytest.mark.parametrize("shape, affine", [(4, True), ((3, 4), True), (4, False)])
def test_layer_norm_matches_torch(shape, affine):
    ours = nn.LayerNorm(shape, elementwise_affine=affine, dtype=F64)
    theirs = torch.nn.LayerNorm(shape, elementwise_affine=affine, dtype=torch.float64)
    if affine:
        rng = np.random.default_rng(2)
        ours.load_state_dict({k: rng.normal(size=v.shape) for k, v in ours.state_dict().items()})
        theirs.load_state_dict(_torch_state(ours.state_dict()))
    x = np.random.default_rng(0).normal(size=(2, 3, 4)) * 5 + 3
    _compare_layer(ours, theirs, x)


@pytest.mark.parametrize("wants", [(True, False, False), (False, True, False), (False, False, True),
                                   (False, True, True), (True, True, False)], ids=lambda w: "".join(c for c, r in zip("xwb", w) if r))
@pytest.mark.parametrize("lead, normalized", [((), (5,)), ((3,), (4,)), ((2, 3), (2, 4))])
def test_layer_norm_gradients_of_each_input_alone_match_torch(wants, lead, normalized):
    """The fused rule computes only the gradients asked for: each subset of x, weight, bias, against torch."""
    rng = np.random.default_rng(7)
    arrays = [rng.normal(size=lead + normalized), rng.normal(size=normalized), rng.normal(size=normalized)]
    ours = [taugrad.tensor(a, requires_grad=r) for a, r in zip(arrays, wants)]
    theirs = [torch.tensor(a, requires_grad=r) for a, r in zip(arrays, wants)]
    g = rng.normal(size=lead + normalized)
    out = taugrad.nn.functional.layer_norm(ours[0], normalized, ours[1], ours[2])
    ref = torch.nn.functional.layer_norm(theirs[0], normalized, theirs[1], theirs[2])
    np.testing.assert_allclose(out.detach().numpy(), t2n(ref), rtol=1e-12, atol=1e-12)
    (out * taugrad.tensor(g)).sum().backward()
    (ref * torch.tensor(g)).sum().backward()
    for a, b, wanted in zip(ours, theirs, wants):
        assert (a.grad is not None) == wanted
        if wanted:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_layer_norm_refuses_a_weight_of_another_shape_as_torch():
    x = np.ones((4, 8))
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape as normalized_shape"):
        torch.nn.functional.layer_norm(torch.tensor(x), (8,), torch.ones(1, 8, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"layer_norm: weight of shape \(1, 8\) must have the normalized shape \(8,\)"):
        taugrad.nn.functional.layer_norm(taugrad.tensor(x), (8,), taugrad.ones(1, 8, dtype=F64))


def test_embedding_matches_torch_with_repeated_indices():
    ours = nn.Embedding(6, 3, dtype=F64)
    theirs = torch.nn.Embedding(6, 3, dtype=torch.float64)
    theirs.load_state_dict(_torch_state(ours.state_dict()))
    idx = np.array([[0, 5, 5], [2, 0, 5]])
    out_o, out_t = ours(idx), theirs(torch.from_numpy(idx))
    np.testing.assert_array_equal(out_o.detach().numpy(), t2n(out_t))
    upstream = np.random.default_rng(0).normal(size=out_o.shape)
    (out_o * Tensor(upstream)).sum().backward()
    (out_t * torch.from_numpy(upstream)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), t2n(theirs.weight.grad), atol=1e-12)
    with pytest.raises(IndexError, match="out of range"):
        ours(np.array([6]))
    with pytest.raises(TypeError, match="integer"):
        ours(np.array([0.5]))


def test_linear_rejects_wrong_input_width():
    with pytest.raises(ValueError, match=r"last dimension is 3, got shape \(2, 4\)"):
        nn.Linear(3, 1)(np.ones((2, 4), np.float32))


def test_functional_reexports_the_tensor_functions():
    assert nn.functional.cross_entropy is taugrad.functional.cross_entropy
    assert "cross_entropy" in nn.functional.__all__


# ---------------------------------------------------------------------------
# initialisation (PyTorch's scheme)
# ---------------------------------------------------------------------------


def test_linear_init_is_uniform_within_one_over_sqrt_fan_in():
    nn.init.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for values in (layer.weight.detach().numpy(), layer.bias.detach().numpy()):
        assert values.dtype == np.float32
        assert np.abs(values).max() <= bound
    w = layer.weight.detach().numpy()
    assert np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound  # the standard deviation of U(-b, b)
    assert abs(w.mean()) < 0.01 * bound
    # the same statistics as torch's own initialisation
    torch_w = torch.nn.Linear(400, 300).weight.detach().numpy()
    assert abs(w.std() - torch_w.std()) < 0.02 * torch_w.std()


def test_embedding_and_layer_norm_init():
    nn.init.manual_seed(0)
    table = nn.Embedding(1000, 100).weight.detach().numpy()
    assert abs(table.mean()) < 0.01 and abs(table.std() - 1) < 0.01
    norm = nn.LayerNorm(5)
    np.testing.assert_array_equal(norm.weight.detach().numpy(), 1.0)
    np.testing.assert_array_equal(norm.bias.detach().numpy(), 0.0)


def test_manual_seed_makes_models_reproducible():
    nn.init.manual_seed(123)
    a = nn.MLP(3, [5], 2)
    nn.init.manual_seed(123)
    b = nn.MLP(3, [5], 2)
    c = nn.MLP(3, [5], 2)
    for (key, x), y, z in zip(a.state_dict().items(), b.state_dict().values(), c.state_dict().values()):
        np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy(), err_msg=key)
        assert not np.array_equal(x.detach().numpy(), z.detach().numpy())


def test_init_functions():
    w = Tensor(np.zeros((50, 40)))
    nn.init.xavier_uniform_(w, generator=np.random.default_rng(0))
    assert np.abs(w.detach().numpy()).max() <= math.sqrt(6 / 90)
    nn.init.kaiming_normal_(w, nonlinearity="relu", generator=np.random.default_rng(0))
    assert abs(w.detach().numpy().std() - math.sqrt(2 / 40)) < 0.01
    assert nn.init.calculate_gain("tanh") == pytest.approx(torch.nn.init.calculate_gain("tanh"))
    assert nn.init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(
        torch.nn.init.calculate_gain("leaky_relu", math.sqrt(5)))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        nn.init.kaiming_uniform_(Tensor(np.zeros(3)))


def test_linear_weight_is_row_major_as_torch_and_so_is_its_gradient():
    # PyTorch's (out, in) layout: views of the weight and its gradient write into them
    layer = nn.Linear(5, 3, dtype="float64")
    assert layer.weight.shape == (3, 5)
    assert layer.weight.detach().numpy().flags.c_contiguous and layer.weight.stride() == (5, 1)
    x = np.random.default_rng(0).standard_normal((4, 5))
    (layer(taugrad.tensor(x)) ** 2).sum().backward()
    assert layer.weight.grad.numpy().flags.c_contiguous  # same layout: the update runs contiguous
    reference = torch.nn.Linear(5, 3).double()
    with torch.no_grad():
        reference.weight[...] = torch.tensor(layer.weight.detach().numpy())
        reference.bias[...] = torch.tensor(layer.bias.detach().numpy())
    (reference(torch.tensor(x)) ** 2).sum().backward()
    np.testing.assert_allclose(layer.weight.grad.numpy(), reference.weight.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(layer.bias.grad.numpy(), reference.bias.grad.numpy(), rtol=1e-12)
    # a column-major weight (given by the user) gets a column-major gradient, with the same values
    column_major = taugrad.from_numpy(np.asfortranarray(layer.weight.detach().numpy())).requires_grad_()
    (taugrad.functional.linear(taugrad.tensor(x), column_major, layer.bias.detach()) ** 2).sum().backward()
    assert column_major.grad.numpy().flags.f_contiguous
    np.testing.assert_allclose(column_major.grad.numpy(), layer.weight.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------------------
# Sequential calls each module: "Linear, ReLU" are two ops, as written
# ---------------------------------------------------------------------------


def _op_names(root):
    from taugrad.autograd import topological_order

    return [node._rule.op for node in topological_order([root])]


def _mlp64(seed=0):
    taugrad.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 7, dtype="float64"), nn.ReLU(), nn.Linear(7, 6, dtype="float64"), nn.ReLU(),
                         nn.Linear(6, 3, dtype="float64"))


def test_sequential_runs_each_module_as_written_with_torch_numbers():
    model = _mlp64()
    x = np.random.default_rng(1).standard_normal((4, 5))
    t = taugrad.tensor(x, requires_grad=True)
    out = model(t)
    assert _op_names(out) == ["linear", "relu", "linear", "relu", "linear"]
    taugrad.functional.cross_entropy(out, np.array([0, 2, 1, 2])).backward()
    reference = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 6), torch.nn.ReLU(),
                                    torch.nn.Linear(6, 3)).double()
    with torch.no_grad():
        for p, q in zip(model.parameters(), reference.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    tx = torch.tensor(x, requires_grad=True)
    tout = reference(tx)
    torch.nn.functional.cross_entropy(tout, torch.tensor([0, 2, 1, 2])).backward()
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    for p, q in zip(list(model.parameters()) + [t], list(reference.parameters()) + [tx]):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_sequential_lets_a_subclass_or_an_instance_override_forward():
    x = taugrad.tensor(np.random.default_rng(2).standard_normal((4, 5)))

    class LeakyReLU(nn.ReLU):  # a subclass may change forward: it runs as written
        def forward(self, t):
            return taugrad.maximum(t, t * 0.1)

    model = nn.Sequential(nn.Linear(5, 2, dtype="float64"), LeakyReLU())
    assert (model(x).detach().numpy() < 0).any()
    model = nn.Sequential(nn.Linear(5, 2, dtype="float64"), nn.ReLU())
    model[1].forward = lambda t: -t.abs()  # so may an instance's own forward
    assert (model(x).detach().numpy() < 0).all()

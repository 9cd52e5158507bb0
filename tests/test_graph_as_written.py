"""The graph a user sees is the code they wrote, as PyTorch shows it.

However taugrad computes a model inside (one node for ``x @ W.T + b``, one
for a cross-entropy), ``grad_fn`` and ``next_functions`` must show PyTorch's
nodes for the same code, every module's hooks must fire, and graph drawings
must show the user's ops.  Each test builds the same float64 model in both
libraries and compares the whole chain of ``grad_fn`` names, walked through
``next_functions`` down to the ``AccumulateGrad`` leaves (named by the
parameter they accumulate into) and the ``None`` of inputs without gradient.
"""
import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn.functional as F
from taugrad import nn

TF = torch.nn.functional


def chain(fn, names):
    """``fn``'s graph as nested ``(name, (inputs...))``; a leaf is ``'AccumulateGrad:<param>'``; no gradient is None."""
    if fn is None:
        return None
    if fn.name().endswith("AccumulateGrad"):
        return "AccumulateGrad:" + names[id(fn.variable)]
    return (fn.name(), tuple(chain(f, names) for f, _ in fn.next_functions))


def names_of(model, **more):
    names = {id(p): n for n, p in model.named_parameters()} if model is not None else {}
    names.update({id(t): n for n, t in more.items()})
    return names


def twin(build):
    """The same module in both libraries (taugrad's, torch's), with taugrad's initial values."""
    taugrad.manual_seed(0)
    ours = build(nn, {"dtype": taugrad.float64})
    theirs = build(torch.nn, {"dtype": torch.float64})
    with torch.no_grad():
        for (name, p), (other, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert name == other and tuple(p.shape) == tuple(q.shape)
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))
    return ours, theirs


def inputs(*shape, grad=False, seed=1):
    x = np.random.default_rng(seed).standard_normal(shape)
    return taugrad.tensor(x, requires_grad=grad), torch.tensor(x, requires_grad=grad)


def assert_same_graph(ours, theirs, our_model=None, their_model=None, **leaves):
    ours_out, our_leaves = ours
    theirs_out, their_leaves = theirs
    got = chain(ours_out.grad_fn, names_of(our_model, **our_leaves))
    want = chain(theirs_out.grad_fn, names_of(their_model, **their_leaves))
    assert got == want
    np.testing.assert_allclose(ours_out.detach().numpy(), theirs_out.detach().numpy(), rtol=1e-12, atol=1e-14)


def mlp(lib, kw):
    return lib.Sequential(lib.Linear(4, 8, **kw), lib.ReLU(), lib.Linear(8, 3, **kw))


TARGETS = np.array([0, 2, 1, 2, 0])


def test_mlp_with_cross_entropy_shows_addmm_relu_and_nll_of_log_softmax():
    ours, theirs = twin(mlp)
    x, tx = inputs(5, 4)
    loss = F.cross_entropy(ours(x), taugrad.tensor(TARGETS))
    tloss = TF.cross_entropy(theirs(tx), torch.tensor(TARGETS))
    assert_same_graph((loss, {}), (tloss, {}), ours, theirs)
    # and through the loss module, and after backward the numbers agree
    module_loss = nn.CrossEntropyLoss()(ours(x), taugrad.tensor(TARGETS))
    assert chain(module_loss.grad_fn, names_of(ours)) == chain(tloss.grad_fn, names_of(theirs))
    loss.backward()
    tloss.backward()
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_of_a_leaf_is_nll_loss_of_log_softmax(reduction):
    x, tx = inputs(5, 3, grad=True)
    loss = F.cross_entropy(x, taugrad.tensor(TARGETS), reduction=reduction)
    tloss = TF.cross_entropy(tx, torch.tensor(TARGETS), reduction=reduction)
    assert_same_graph((loss, {"x": x}), (tloss, {"x": tx}))


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 2, 3, 4), (4,), (5, 4)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("grad", [False, True])
def test_linear_shows_addmm_or_mm_of_the_transposed_weight_with_torch_views(shape, bias, grad):
    ours, theirs = twin(lambda lib, kw: lib.Linear(4, 5, bias=bias, **kw))
    x, tx = inputs(*shape, grad=grad)
    assert_same_graph((ours(x), {"x": x}), (theirs(tx), {"x": tx}), ours, theirs)


def test_functional_relu_of_a_linear():
    ours, theirs = twin(lambda lib, kw: lib.Linear(4, 5, **kw))
    x, tx = inputs(3, 4)
    assert_same_graph((F.relu(ours(x)), {}), (TF.relu(theirs(tx)), {}), ours, theirs)


def test_mse_loss_of_a_linear():
    ours, theirs = twin(lambda lib, kw: lib.Linear(4, 2, **kw))
    x, tx = inputs(3, 4)
    y, ty = inputs(3, 2, seed=2)
    assert_same_graph((F.mse_loss(ours(x), y), {}), (TF.mse_loss(theirs(tx), ty), {}), ours, theirs)


def test_log_softmax_then_nll_loss():
    ours, theirs = twin(mlp)
    x, tx = inputs(5, 4)
    loss = F.nll_loss(F.log_softmax(ours(x), dim=1), taugrad.tensor(TARGETS))
    tloss = TF.nll_loss(TF.log_softmax(theirs(tx), dim=1), torch.tensor(TARGETS))
    assert_same_graph((loss, {}), (tloss, {}), ours, theirs)


@pytest.mark.parametrize("functional", [True, False])
def test_dropout_of_a_linear_in_training(functional):
    ours, theirs = twin(lambda lib, kw: lib.Linear(4, 5, **kw))
    x, tx = inputs(3, 4)
    out = F.dropout(ours(x), 0.5, training=True) if functional else nn.Dropout(0.5)(ours(x))
    tout = TF.dropout(theirs(tx), 0.5, training=True) if functional else torch.nn.Dropout(0.5)(theirs(tx))
    assert chain(out.grad_fn, names_of(ours)) == chain(tout.grad_fn, names_of(theirs))


def test_layer_norm_of_a_linear():
    ours, theirs = twin(lambda lib, kw: lib.Sequential(lib.Linear(4, 5, **kw), lib.LayerNorm(5, **kw)))
    x, tx = inputs(3, 4)
    assert_same_graph((ours(x), {}), (theirs(tx), {}), ours, theirs)


def test_embedding_then_linear():
    ours, theirs = twin(lambda lib, kw: lib.Sequential(lib.Embedding(10, 4, **kw), lib.Linear(4, 3, **kw)))
    idx = np.array([[1, 2, 3], [4, 5, 1]])
    assert_same_graph((ours(taugrad.tensor(idx)), {}), (theirs(torch.tensor(idx)), {}), ours, theirs)


def test_every_module_of_a_sequential_runs_its_hooks_as_torch():
    ours, theirs = twin(mlp)
    events = {"ours": [], "theirs": []}
    for key, model in (("ours", ours), ("theirs", theirs)):
        log = events[key]
        for name, module in model.named_children():
            module.register_forward_pre_hook(lambda m, args, name=name, log=log: log.append(("pre", name)))
            module.register_forward_hook(lambda m, args, out, name=name, log=log: log.append(("forward", name)))
            module.register_full_backward_hook(lambda m, gi, go, name=name, log=log: log.append(("backward", name)))
    x, tx = inputs(5, 4, grad=True)
    F.cross_entropy(ours(x), taugrad.tensor(TARGETS)).backward()
    TF.cross_entropy(theirs(tx), torch.tensor(TARGETS)).backward()
    assert events["ours"] == events["theirs"]
    assert ("forward", "1") in events["ours"] and ("backward", "1") in events["ours"]


def test_a_forward_hook_on_the_relu_sees_its_input_and_output():
    ours, theirs = twin(mlp)
    seen = {}
    ours[1].register_forward_hook(lambda m, args, out: seen.update(ours=(args[0].detach().numpy().copy(),
                                                                          out.detach().numpy().copy())))
    theirs[1].register_forward_hook(lambda m, args, out: seen.update(theirs=(args[0].detach().numpy().copy(),
                                                                              out.detach().numpy().copy())))
    x, tx = inputs(5, 4)
    ours(x)
    theirs(tx)
    assert (seen["ours"][0] < 0).any()  # the ReLU's input, before the ReLU
    for a, b in zip(seen["ours"], seen["theirs"]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_the_drawing_shows_the_ops_the_model_is_written_with():
    from taugrad.learn.draw import graph_source

    ours, _ = twin(mlp)
    x, _ = inputs(5, 4)
    source = graph_source(F.cross_entropy(ours(x), taugrad.tensor(TARGETS)))
    ops = sorted(line.split('label="')[1].split('"')[0] for line in source.splitlines() if "shape=ellipse" in line
                 or 'shape="ellipse"' in line)
    assert ops == ["cross_entropy", "linear", "linear", "relu"]


@pytest.mark.parametrize("make", [
    lambda lib, x, w, b: lib.nn.functional.linear(x, w),
    lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
    lambda lib, x, w, b: lib.nn.functional.linear(x[0], w),
    lambda lib, x, w, b: (x @ w.t())[:1].squeeze(0),
    lambda lib, x, w, b: (x @ w.t())[:1].squeeze((0,)),
    lambda lib, x, w, b: lib.nn.functional.cross_entropy(x @ w.t(), lib.tensor([0, 1, 2])),
])
def test_a_node_freed_by_backward_keeps_torch_name(make):
    names = []
    for lib in (taugrad, torch):
        rng = np.random.default_rng(3)
        x = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
        w = lib.tensor(rng.standard_normal((5, 4)), requires_grad=True)
        b = lib.tensor(rng.standard_normal(5), requires_grad=True)
        out = make(lib, x, w, b)
        before = out.grad_fn.name()
        out.sum().backward()
        names.append((before, out.grad_fn.name()))
    assert names[0] == names[1]

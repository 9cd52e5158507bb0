"""The in-place check guards every way of running backward, with one and the same error.

``backward()``, ``backward(create_graph=True)``, ``taugrad.grad()`` with and
without ``create_graph``, and each of them under ``detect_anomaly()``, all
run one loop; a tensor a rule reads that was changed in place after the op
recorded it must stop every one of them before a wrong gradient comes out.
The same graphs left untouched give torch's gradient on every path, so the
refusal is the check's doing, not a path that cannot run the graph at all.
"""
import numpy as np
import pytest
import torch

import taugrad

DATA = np.array([0.5, -1.0, 2.0, 0.25])
CONST = np.array([3.0, -2.0, 0.5, 4.0, 1.5])


def _tensor(L, values, requires_grad=False):
    return L.tensor(np.array(values), requires_grad=requires_grad)


def _mul_reads_its_input(L, change: bool):
    """mul's rule reads the constant factor for x's gradient; the factor is changed."""
    x, c = _tensor(L, DATA, True), _tensor(L, CONST[:4])
    y = (x * c).sum()
    if change:
        c.mul_(2.0)
    return x, y


def _exp_reads_its_output(L, change: bool):
    """exp's rule reads its output (d exp(a)/da = exp(a)); the output is changed."""
    x = _tensor(L, DATA, True)
    e = x.exp()
    y = (e.sum() * 3.0)  # sum and a scalar mul: the only saved value read is exp's output
    if change:
        with L.no_grad():
            e.add_(1.0)
    return x, y


def _view_whose_base_changes(L, change: bool):
    """mul reads a view of a constant; the view's base (not the view) is changed."""
    x, c = _tensor(L, DATA, True), _tensor(L, CONST)
    v = c[1:5]
    y = (x * v).sum()
    if change:
        c.add_(1.0)
    return x, y


GRAPHS = {
    "mul reads its input": (_mul_reads_its_input, "backward of 'mul': its input 1 (a tensor of shape (4,)"),
    "exp reads its output": (_exp_reads_its_output, "backward of 'exp': its output (a tensor of shape (4,)"),
    "base of a saved view": (_view_whose_base_changes, "backward of 'mul': its input 1 (a tensor of shape (4,)"),
}


def _backward(x, y):
    y.backward()
    return x.grad.data


def _backward_create_graph(x, y):
    y.backward(create_graph=True)
    return x.grad.data


def _grad(x, y):
    return taugrad.grad(y, x)[0].data


def _grad_create_graph(x, y):
    return taugrad.grad(y, x, create_graph=True)[0].data


PASSES = {
    "backward": _backward,
    "backward(create_graph)": _backward_create_graph,
    "grad": _grad,
    "grad(create_graph)": _grad_create_graph,
}

#: every pass, plain and with the graph built and run under detect_anomaly()
PATHS = [(name, anomaly) for anomaly in (False, True) for name in PASSES]
PATH_IDS = [f"{name}{' under detect_anomaly' if anomaly else ''}" for name, anomaly in PATHS]


def _run(graph, path, change: bool):
    name, anomaly = path
    build = GRAPHS[graph][0]
    if not anomaly:
        x, y = build(taugrad, change)
        return PASSES[name](x, y)
    with taugrad.detect_anomaly():
        x, y = build(taugrad, change)
        return PASSES[name](x, y)


def _refusal(graph, path) -> str:
    with pytest.raises(RuntimeError) as info:
        _run(graph, path, change=True)
    assert not isinstance(info.value, taugrad.AnomalyError), "the in-place error, not an anomaly report"
    return str(info.value)


def _torch_gradient(graph):
    x, y = GRAPHS[graph][0](torch, change=False)
    y.backward()
    return x.grad.numpy()


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("graph", GRAPHS)
def test_changed_saved_tensor_is_refused(graph, path):
    message = _refusal(graph, path)
    assert message.startswith(GRAPHS[graph][1]), message
    assert "was modified by an in-place operation" in message
    assert "the gradient would be wrong" in message


@pytest.mark.parametrize("graph", GRAPHS)
def test_every_path_gives_the_same_message(graph):
    messages = {PATH_IDS[i]: _refusal(graph, path) for i, path in enumerate(PATHS)}
    first = messages["backward"]
    for where, message in messages.items():
        assert message == first, f"{where} says {message!r}, backward() says {first!r}"


@pytest.mark.parametrize("graph", GRAPHS)
def test_torch_refuses_the_same_graphs(graph):
    x, y = GRAPHS[graph][0](torch, change=True)
    with pytest.raises(RuntimeError, match="inplace operation"):
        y.backward()


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("graph", GRAPHS)
def test_untouched_graph_gives_torch_gradient_on_every_path(graph, path):
    np.testing.assert_allclose(_run(graph, path, change=False), _torch_gradient(graph), rtol=1e-12, atol=1e-14)

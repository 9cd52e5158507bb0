"""draw_dot: the dot text, the graphviz/plain objects, missing-Graphviz errors,
Jupyter display and Tensor nodes."""
from __future__ import annotations

import os
import re
import stat
import sys

import numpy as np
import pytest

import taugrad.learn.draw as viz
from taugrad import Value, draw_dot
from taugrad.learn.expr import build
from taugrad.learn.draw import DotGraph, GraphvizNotFound, graph_source, write_graph

FAKE_SVG = "<svg xmlns='http://www.w3.org/2000/svg'><!-- fake dot --></svg>"


def _lecture_graph():
    """The micrograd lecture's example: L = (a*b + c) * f."""
    a = Value(2.0, label="a")
    b = Value(-3.0, label="b")
    c = Value(10.0, label="c")
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    f = Value(-2.0, label="f")
    L = d * f
    L.label = "L"
    L.backward()
    return L


def _parse_dot(source):
    """{node name: label} and [(tail, head)] from our dot text."""
    pattern = r'^\s*(\w+) \[label=(?:"((?:[^"\\]|\\.)*)"|(\S+))'
    nodes = {name: quoted or bare for name, quoted, bare in re.findall(pattern, source, re.M)}
    edges = re.findall(r"^\s*(\w+) -> (\w+)", source, re.M)
    return nodes, edges


@pytest.fixture
def no_dot(monkeypatch, tmp_path):
    """A PATH without Graphviz's dot program."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert viz.dot_program() is None


@pytest.fixture
def fake_dot(monkeypatch, tmp_path):
    """A stand-in `dot` on PATH that records its arguments and input and prints a fixed SVG."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    log = tmp_path / "dot-calls.txt"
    script = folder / "dot"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n' + sys.stdin.read() + '\\n---\\n')\n"
        f"sys.stdout.write({FAKE_SVG!r})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(folder) + os.pathsep + os.environ.get("PATH", ""))
    return log


def test_lecture_graph_source():
    source = graph_source(_lecture_graph())
    nodes, edges = _parse_dot(source)
    labels = sorted(nodes.values())
    # each value: label, data and grad (dL/da = b*f = 6, dL/db = a*f = -4, dL/dc = f = -2, dL/df = d = 4)
    for expected in ("{ a | data 2.0000 | grad 6.0000 }", "{ b | data -3.0000 | grad -4.0000 }",
                     "{ c | data 10.0000 | grad -2.0000 }", "{ f | data -2.0000 | grad 4.0000 }",
                     "{ e | data -6.0000 | grad -2.0000 }", "{ d | data 4.0000 | grad -2.0000 }",
                     "{ L | data -8.0000 | grad 1.0000 }"):
        assert expected in labels
    assert labels.count("*") == 2 and labels.count("+") == 1  # op nodes, separate from values
    assert len(nodes) == 7 + 3 and len(edges) == 3 + 6  # op -> result, and each operand -> op
    by_label = {label: name for name, label in nodes.items()}
    L_node = by_label["{ L | data -8.0000 | grad 1.0000 }"]
    assert (L_node + "_op", L_node) in edges
    assert "rankdir=LR" in source


@pytest.mark.parametrize(
    "number, shown",
    [(2.0, "2.0000"), (-0.0707, "-0.0707"), (0.0, "0.0000"), (123456.5, "123456.5000"),
     (1e300, "1e+300"), (-1e-300, "-1e-300"), (0.000123456, "0.0001235"), (2.5e6, "2.5e+06"),
     (float("inf"), "inf"), (float("nan"), "nan")],
)
def test_scalar_labels_are_compact(number, shown):
    # micrograd's %.4f for ordinary values; not 300 digits for 1e300, nor 0.0000 for 1e-300
    source = graph_source(Value(number, label="x"))
    assert f'"{{ x | data {shown} | grad 0.0000 }}"' in source


def test_reused_value_has_one_edge_per_use():
    graph = build("a*a", {"a": 3.0})
    nodes, edges = _parse_dot(graph_source(graph.root))
    a_node = next(n for n, label in nodes.items() if label.startswith("{ a |"))
    assert edges.count((a_node, "n0_op")) == 2


def test_draw_dot_is_a_graphviz_digraph_with_the_same_graph():
    graphviz = pytest.importorskip("graphviz")  # installed in the test environment
    root = _lecture_graph()
    dot = draw_dot(root, rankdir="TB")
    assert isinstance(dot, graphviz.Digraph)
    nodes, edges = _parse_dot(dot.source)
    plain_nodes, plain_edges = _parse_dot(graph_source(root, rankdir="TB"))
    assert nodes == plain_nodes and edges == plain_edges
    assert "rankdir=TB" in dot.source


def test_without_graphviz_package_a_plain_object(monkeypatch):
    monkeypatch.setattr(viz, "_digraph_class", lambda: None)
    root = _lecture_graph()
    dot = draw_dot(root)
    assert isinstance(dot, DotGraph)
    assert dot.source == graph_source(root) == str(dot)


@pytest.mark.parametrize("plain", [True, False])
def test_missing_dot_program_says_how_to_get_it(no_dot, monkeypatch, tmp_path, plain):
    if plain:
        monkeypatch.setattr(viz, "_digraph_class", lambda: None)
    dot = draw_dot(_lecture_graph())
    for attempt in (lambda: dot.pipe(format="svg"), lambda: dot.render(str(tmp_path / "g"), format="png")):
        with pytest.raises(GraphvizNotFound) as info:
            attempt()
        message = str(info.value)
        assert "\n" not in message
        for hint in ("apt-get install graphviz", "brew install graphviz", "pip install graphviz"):
            assert hint in message
    # .dot needs nothing
    path = write_graph(dot, str(tmp_path / "g.dot"))
    assert open(path).read() == dot.source
    # Jupyter: no picture, but the dot text and the hint instead of an error
    assert dot._repr_svg_() is None
    bundle = dot._repr_mimebundle_()
    assert list(bundle) == ["text/plain"]
    assert "apt-get install graphviz" in bundle["text/plain"] and dot.source in bundle["text/plain"]


@pytest.mark.parametrize("plain", [True, False])
def test_rendering_runs_the_dot_program(fake_dot, monkeypatch, tmp_path, plain):
    if plain:
        monkeypatch.setattr(viz, "_digraph_class", lambda: None)
    dot = draw_dot(_lecture_graph())
    assert dot._repr_mimebundle_() == {"image/svg+xml": FAKE_SVG}
    assert dot._repr_svg_() == FAKE_SVG
    path = write_graph(dot, str(tmp_path / "graph.svg"))
    assert open(path).read() == FAKE_SVG
    calls = fake_dot.read_text()
    assert "-Tsvg" in calls and "{ L | data -8.0000 | grad 1.0000 }" in calls


def test_labels_are_escaped_for_records():
    v = Value(1.0, label='x{|}<>"\\\nnext')
    source = graph_source(v)
    assert 'label="{ x\\{\\|\\}\\<\\>\\"\\\\ next | data 1.0000 | grad 0.0000 }"' in source
    assert "\n\t" in source and source.count("\n") == 4  # the newline in the label was removed


def test_bad_arguments():
    with pytest.raises(ValueError, match="rankdir must be one of"):
        draw_dot(Value(1.0), rankdir="XY")
    with pytest.raises(ValueError, match="format must be one of"):
        draw_dot(Value(1.0), format="exe")


def test_deep_graph_is_drawn_without_recursion():
    x = Value(0.0)
    for _ in range(3 * sys.getrecursionlimit()):
        x = x + 1.0
    nodes, edges = _parse_dot(graph_source(x))
    assert len(nodes) == 1 + 3 * 3 * sys.getrecursionlimit()  # the start, then per step: result, op, constant


class _FakeTensor:
    """A duck-typed tensor node: _prev, an ndarray data, an ndarray grad, an op name."""

    def __init__(self, data, prev=(), op=""):
        self.data = np.asarray(data)
        self.grad = None
        self._prev = prev
        self._op = op


def test_tensor_like_nodes_show_shape_and_dtype():
    x = _FakeTensor(np.ones((2, 3), dtype=np.float32))
    w = _FakeTensor(np.arange(3.0).reshape(3, 1))
    y = _FakeTensor(x.data @ w.data, (x, w), "matmul")
    y.grad = np.ones((2, 1))
    nodes, edges = _parse_dot(graph_source(y))
    labels = set(nodes.values())
    assert "{ shape (2, 3) float32 | data 1 .. 1 | grad None }" in labels
    assert "{ shape (3, 1) float64 | data 0 1 2 | grad None }" in labels
    assert "{ shape (2, 1) float64 | data 3 3 | grad 1 1 }" in labels
    assert "matmul" in labels and len(edges) == 3


def test_real_tensor_graph():
    from taugrad.tensors.core.node import Tensor

    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    w = Tensor(np.ones((3, 1), dtype=np.float32), requires_grad=True)
    y = (x @ w.double()).sum() if hasattr(w, "double") else (x @ Tensor(w.data.astype(np.float64))).sum()
    y.backward(retain_graph=True)
    nodes, edges = _parse_dot(draw_dot(y).source)
    labels = set(nodes.values())
    # x @ w = [[3], [12]], sum = 15; d sum / dx = ones @ w.T = all ones
    assert "{ shape (2, 3) float64 | data 0 .. 5 | grad 1 .. 1 }" in labels
    assert "{ shape (2, 1) float64 | data 3 12 | grad None }" in labels
    assert "{ shape () float64 | data 15.0000 | grad None }" in labels
    assert "sum" in labels and "matmul" in labels
    assert any(label.startswith("{ shape (3, 1) float32") for label in labels)


def test_tensor_graph_freed_by_backward_says_so():
    from taugrad.tensors.core.node import Tensor

    x = Tensor(np.ones(3), requires_grad=True)
    y = (x * 2.0).sum()
    y.backward()  # frees the graph, as PyTorch does
    source = draw_dot(y).source
    assert "retain_graph=True" in source

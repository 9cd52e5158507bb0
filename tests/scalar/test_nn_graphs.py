"""taugrad.scalar.nn builds the lecture's granular graph by default, fused neurons on request, from any Value class."""
from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import micrograd.engine
import micrograd.nn
import pytest

from taugrad.scalar import Value, nn

GALLERY = Path(__file__).resolve().parents[1] / "check_gallery"


def _nodes(root) -> int:
    seen, stack = {id(root)}, [root]
    while stack:
        node = stack.pop()
        for child in getattr(node, "_prev", None) or getattr(node, "parents", ()):
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return len(seen)


def _learner_value():
    spec = importlib.util.spec_from_file_location("nn_learner_engine", GALLERY / "chapter_correct.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Value


def test_the_default_graph_is_micrograds_node_for_node():
    random.seed(0)
    ours = nn.MLP(2, [4, 4, 1])([Value(0.5), Value(-1.5)])
    random.seed(0)
    theirs = micrograd.nn.MLP(2, [4, 4, 1])([micrograd.engine.Value(0.5), micrograd.engine.Value(-1.5)])
    assert _nodes(ours) == _nodes(theirs)
    assert ours.data == theirs.data
    assert ours._op == "+"  # the output neuron is linear: its last node is micrograd's last addition


def test_fused_is_one_argument_away_and_gives_the_same_numbers():
    random.seed(3)
    granular = nn.MLP(2, [4, 1])
    random.seed(3)
    fused = nn.MLP(2, [4, 1], fused=True)
    x = [Value(0.7), Value(-0.2)]
    a, b = granular(x), fused(x)
    assert _nodes(b) < _nodes(a)
    a.backward()
    b.backward()
    assert a.data == pytest.approx(b.data, rel=1e-15)
    for p, q in zip(granular.parameters(), fused.parameters()):
        assert p.grad == pytest.approx(q.grad, rel=1e-12, abs=1e-15)


def test_a_learners_value_class_trains_through_the_same_modules():
    Mine = _learner_value()
    random.seed(5)
    mine = nn.MLP(2, [3, 1], value=Mine)
    random.seed(5)
    ours = nn.MLP(2, [3, 1])
    assert all(isinstance(p, Mine) for p in mine.parameters())
    out_mine, out_ours = mine([0.3, -0.8]), ours([0.3, -0.8])  # plain numbers are wrapped in the class
    assert isinstance(out_mine, Mine) and out_mine.data == out_ours.data
    out_mine.backward()
    out_ours.backward()
    assert [p.grad for p in mine.parameters()] == [p.grad for p in ours.parameters()]


def test_fused_needs_taugrads_value_and_value_must_be_a_class():
    with pytest.raises(ValueError, match="fused=True needs taugrad's Value"):
        nn.MLP(2, [1], fused=True, value=_learner_value())
    with pytest.raises(TypeError, match="value must be a scalar class"):
        nn.Neuron(2, value=1.0)

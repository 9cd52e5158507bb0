"""Rules' in-place ("overwrite") variants, run against torch on the op table's rows.

The first-order pass calls ``Rule.overwrite`` (e.g. ReLU masking its gradient
in place) only for a gradient array the pass itself made.  The op table hands
every rule the user's ``gradient=``, which the pass must never write into, so
there the plain rule runs and the variant never does.  Here every row whose
graph holds a node with an overwrite variant is run twice:

* borrowed: ``out.backward(g)``, the node gets the user's array: the plain
  rule must run, and ``g`` must come back unchanged;
* owned: ``(out * 1.0).backward(g)``, the node gets the array ``mul``'s rule
  just made: the variant must run.

Both must give torch's float64 gradient.  The variants are wrapped to record
the nodes they ran on, so a pass that silently took the plain rule fails.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Dict, List

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

import taugrad
import taugrad.tensors.ops
from taugrad.graph import topological_order
from taugrad.tensors.core.rule import Rule

from .helpers import FEW_EXAMPLES, GRAD_TOL, TAUGRAD, TORCH, as_outputs, make_inputs, run, to_numpy
from .op_table import OPS

SEEDS = st.integers(0, 2**31 - 1)

#: every rule defined in an op module that has an in-place variant
OVERWRITING: List[Rule] = [
    obj
    for info in pkgutil.iter_modules(taugrad.tensors.ops.__path__)
    for obj in vars(importlib.import_module(f"taugrad.tensors.ops.{info.name}")).values()
    if isinstance(obj, Rule) and obj.overwrite is not None
]

# a few deterministic draws per row, only to see which rules its graphs hold
_FIRST_DRAWS = settings(max_examples=3, derandomize=True, database=None, deadline=None,
                        phases=[Phase.generate], suppress_health_check=list(HealthCheck))


def _overwrite_nodes(outputs) -> list:
    roots = [o for o in outputs if isinstance(o, taugrad.Tensor) and o.requires_grad]
    return [n for n in topological_order(roots) if n._rule is not None and n._rule.overwrite is not None]


def _graph_of(op, case):
    inputs = [TAUGRAD.tensor(a, requires_grad=True) for a in make_inputs(op, case, 0)]
    return as_outputs(op.fn(TAUGRAD, *inputs, **case.kwargs))


def _overwriting_rules_of(op, case) -> set:
    """The overwriting rules in the graph of one of the row's cases."""
    try:
        outputs = _graph_of(op, case)
    except Exception:  # a row broken for this case fails in test_ops_against_torch, not here
        return set()
    return {node._rule for node in _overwrite_nodes(outputs)}


@functools.lru_cache(maxsize=None)  # drawn once per session, when a test here first runs, not at collection
def _rows_reaching() -> Dict[Rule, List]:
    """For each overwriting rule, the op-table rows whose graphs (a few cases each) hold a node with it."""
    rows: Dict[Rule, List] = {}

    @_FIRST_DRAWS
    @given(st.tuples(*(op.cases for op in OPS)))  # one draw of every row at once: one Hypothesis run, not one per row
    def look(cases):
        for op, case in zip(OPS, cases):
            for rule in _overwriting_rules_of(op, case):
                if not any(row is op for row in rows.setdefault(rule, [])):
                    rows[rule].append(op)

    look()
    return rows


def test_every_overwrite_variant_is_met_by_some_row():
    assert OVERWRITING, "no rule with an overwrite variant found: the search is broken"
    missing = sorted(rule.op for rule in OVERWRITING if rule not in _rows_reaching())
    assert not missing, f"rules whose overwrite variant no op-table row reaches: {missing}"


class _Recorder:
    """Wraps every overwrite variant to note the nodes it ran on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.nodes: list = []
        for rule in OVERWRITING:
            monkeypatch.setattr(rule, "overwrite", self._wrap(rule.overwrite))

    def _wrap(self, variant):
        def counting(g, out, ins, node):
            self.nodes.append(node)
            return variant(g, out, ins, node)

        return counting

    def ran_on(self, node) -> bool:
        return any(n is node for n in self.nodes)


def _taugrad_grads(op, case, arrays, upstream, owned: bool, recorder: _Recorder):
    """Input gradients from backward(g) (borrowed) or (out * 1.0).backward(g) (owned)."""
    inputs = [TAUGRAD.tensor(a, requires_grad=True) for a in arrays]
    outputs = as_outputs(op.fn(TAUGRAD, *inputs, **case.kwargs))
    nodes = [(n, n._rule.op) for n in _overwrite_nodes(outputs)]  # the op's name: backward releases the rule
    given_grads = [TAUGRAD.const(g) for g in upstream]
    recorder.nodes.clear()
    for k, (o, g) in enumerate(zip(outputs, given_grads)):
        root = o * 1.0 if owned else o  # mul's rule makes a new array: the pass owns what reaches o
        root.backward(g, retain_graph=k < len(outputs) - 1)
    for g, want in zip(given_grads, upstream):
        np.testing.assert_array_equal(to_numpy(g), want, err_msg=f"{op.name}: the user's gradient was written")
    grads = [np.zeros(x.shape) if x.grad is None else to_numpy(x.grad) for x in inputs]
    return grads, nodes, outputs


@pytest.mark.parametrize("rule", OVERWRITING, ids=lambda rule: rule.op)
def test_owned_and_borrowed_gradients_both_match_torch(rule):
    """Every op-table row reaching ``rule``, with a borrowed and an owned gradient, against torch."""
    rows = _rows_reaching().get(rule)
    assert rows, f"no op-table row reaches the rule '{rule.op}'"
    for op in rows:
        _check_row(op)


@FEW_EXAMPLES
@given(data=st.data(), seed=SEEDS)
def _check_row(op, data, seed):
    case = data.draw(op.cases, label="case")
    assume(_overwrite_nodes(_graph_of(op, case)))
    arrays = make_inputs(op, case, seed)
    _, want_values, _ = run(TORCH, op, case, arrays, None)
    rng = np.random.default_rng(seed + 1)
    upstream = [rng.standard_normal(v.shape) for v in want_values]
    _, _, want_grads = run(TORCH, op, case, arrays, upstream)

    with pytest.MonkeyPatch.context() as monkeypatch:
        recorder = _Recorder(monkeypatch)
        for owned in (False, True):
            _check_one_way(op, case, arrays, upstream, want_grads, owned, recorder)


def _check_one_way(op, case, arrays, upstream, want_grads, owned: bool, recorder: _Recorder) -> None:
    where = f"{op.name} on shapes {case.shapes} with {case.kwargs}"
    how = "owned" if owned else "borrowed"
    grads, nodes, outputs = _taugrad_grads(op, case, arrays, upstream, owned, recorder)
    for i, (got, want) in enumerate(zip(grads, want_grads)):
        np.testing.assert_allclose(got, want, **GRAD_TOL, err_msg=f"{where}, {how} gradient: input {i} vs torch")
    at_outputs = [(n, name) for n, name in nodes if any(n is o for o in outputs)]
    if owned:
        # the pass made the array reaching each output node: each ran its variant
        # (a variant deeper in the graph: at least the one nearest the output)
        for node, name in at_outputs or nodes[-1:]:
            assert recorder.ran_on(node), f"{where}: the overwrite variant of '{name}' did not run on an owned gradient"
    else:
        # the user's array reached the output nodes: the variant must not touch it
        for node, name in at_outputs:
            assert not recorder.ran_on(node), f"{where}: the overwrite variant of '{name}' ran on the user's gradient"

"""Every rule keeps the promise its ``gives`` makes, on every op of the table.

The first-order pass writes in place into gradients it believes only it
holds (see ``tensor_engine._first_order_pass``).  That belief rests on each
rule's declaration:

* ``gives=NEW``: every gradient returned is a new array -- no memory shared
  with ``g``, the output, the inputs, or another returned gradient;
* ``gives=G_OR_NEW``: each is ``g`` itself or such a new array;
* an ``overwrite`` variant returns what the plain rule returns (same values),
  each gradient being ``g`` itself or a new array.

This test checks the declarations directly on the graphs of every op of
``op_table.py`` (Hypothesis shapes incl. size-0 and size-1 dims), so a rule
marked NEW that returns a view fails here, not as a silently wrong gradient.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from taugrad.autograd import topological_order
from taugrad.tensors.core.rule import G_OR_NEW, NEW

from .helpers import FEW_EXAMPLES, TAUGRAD, as_outputs, make_inputs
from .op_table import OPS

SEEDS = st.integers(0, 2**31 - 1)


def _shares(a, b) -> bool:
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.shares_memory(a, b)


def _check_new(results, g, node, ins, where):
    """Arrays other than ``g`` itself share memory with nothing the rule was given, nor with each other."""
    others = [r for r in results if r is not None and r is not g]
    for k, r in enumerate(others):
        for name, seen in [("g", g), ("the output", node.detach().numpy())] + [(f"input {i}", a) for i, a in enumerate(ins)]:
            assert not _shares(r, seen), f"{where}: a returned gradient shares memory with {name}"
        for r2 in others[k + 1:]:
            assert not _shares(r, r2), f"{where}: two returned gradients share memory"


def _nodes_of(op, case, seed):
    arrays = make_inputs(op, case, seed)
    inputs = [TAUGRAD.tensor(a, requires_grad=True) for a in arrays]
    outputs = [o for o in as_outputs(op.fn(TAUGRAD, *inputs, **case.kwargs)) if o.requires_grad]
    return topological_order(outputs)


@pytest.mark.parametrize("op", OPS, ids=str)
@FEW_EXAMPLES
@given(data=st.data(), seed=SEEDS)
def test_rules_keep_their_gives_promise(op, data, seed):
    case = data.draw(op.cases, label="case")
    rng = np.random.default_rng(seed)
    for node in _nodes_of(op, case, seed):
        rule = node._rule
        if rule.gives is None and rule.overwrite is None:
            continue
        where = f"{op.name} ({rule.op}) on shapes {case.shapes} with {case.kwargs}"
        ins = [p.detach().numpy() for p in node._prev]
        g = rng.standard_normal(node.shape).astype(node.dtype)
        plain = rule.backward(g, node.detach().numpy(), ins, node)
        if rule.gives is NEW:
            assert not any(r is g for r in plain), f"{where}: NEW rule returned g itself"
        if rule.gives in (NEW, G_OR_NEW):
            _check_new(plain, g, node, ins, where)
        if rule.overwrite is not None:
            owned = g.copy()
            overwritten = rule.overwrite(owned, node.detach().numpy(), ins, node)
            assert sum(r is owned for r in overwritten) <= 1, f"{where}: variant gave g to two parents"
            _check_new(overwritten, owned, node, ins, where)
            for r, p in zip(overwritten, plain):
                assert (r is None) == (p is None), f"{where}: variant and rule disagree on which parents get one"
                if r is not None:
                    np.testing.assert_array_equal(r, p, err_msg=f"{where}: variant and rule differ")

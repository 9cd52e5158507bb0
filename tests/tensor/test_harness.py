"""The harness itself must be able to fail: feed it ops that are wrong on purpose."""
import pytest

from .helpers import Case, Op, check_op, one_input

CASE = Case(((2, 3),))


def test_harness_passes_a_correct_op():
    check_op(Op("exp", lambda L, x: x.exp(), one_input()), CASE, seed=0)


def test_harness_catches_a_wrong_value():
    # taugrad's value off by one part in a million: torch comparison must object.
    off = Op("exp_off", lambda L, x: x.exp() * (1 + 1e-6) if L.name == "taugrad" else x.exp(), one_input())
    with pytest.raises(AssertionError, match="forward values"):
        check_op(off, CASE, seed=0)


def test_harness_catches_a_wrong_gradient_against_torch():
    # Right value exp(x), gradient 1 instead of exp(x), on the taugrad side only.
    wrong = Op("exp_wrong_grad",
               lambda L, x: x.exp().detach() + (x - x.detach()) if L.name == "taugrad" else x.exp(), one_input())
    with pytest.raises(AssertionError, match="vs torch"):
        check_op(wrong, CASE, seed=0)


def test_harness_catches_a_wrong_gradient_both_libraries_share():
    # Same wrong gradient in both libraries: only finite differences can see it.
    wrong = Op("exp_wrong_grad_everywhere", lambda L, x: x.exp().detach() + (x - x.detach()), one_input())
    with pytest.raises(AssertionError, match="finite differences"):
        check_op(wrong, CASE, seed=0)


def test_harness_catches_an_output_of_the_wrong_shape():
    # keepdim ignored, say: same numbers, an extra size-1 dim.
    extra = Op("sum_keepdim_wrong",
               lambda L, x: x.sum(dim=0, keepdim=L.name == "taugrad"), one_input())
    with pytest.raises(AssertionError, match="shape"):
        check_op(extra, CASE, seed=0)

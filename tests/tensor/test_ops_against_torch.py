"""Every op of the table in ``op_table.py``: values and gradients vs PyTorch and finite differences."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from .helpers import FEW_EXAMPLES, HYPOTHESIS, check_float32, check_op
from .op_table import OPS

SEEDS = st.integers(0, 2**31 - 1)


# torch's own remark about the strides of gradients of empty split pieces is noise here
@pytest.mark.filterwarnings("ignore:grad and param do not obey the gradient layout contract")
@pytest.mark.parametrize("op", OPS, ids=str)
@HYPOTHESIS
@given(data=st.data(), seed=SEEDS)
def test_op_float64_matches_torch_and_finite_differences(op, data, seed):
    check_op(op, data.draw(op.cases, label="case"), seed)


@pytest.mark.parametrize("op", OPS, ids=str)
@FEW_EXAMPLES
@given(data=st.data(), seed=SEEDS)
def test_op_float32_stays_float32(op, data, seed):
    check_float32(op, data.draw(op.cases, label="case"), seed)

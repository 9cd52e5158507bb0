"""The backend seam: every op-table row on the device backend equals the CPU run.

Rows come from ``tests/tensor/op_table*.py`` (every differentiable op).  On
the strict fake (``strict-fake``), which computes with NumPy but refuses every
NumPy call, values and gradients must be EQUAL to the CPU's: a failure is a
NumPy call that escaped the array module, and the message names the op and
the source line.  On real CuPy (``cupy``, marked ``cuda``) they must agree to
rounding.  Run one op with ``-k <op>``.
"""
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tensor.helpers import HYPOTHESIS
from tensor.op_table import OPS

from .seam import check_row_on_device

# A few drawn cases per row (the CPU suite checks the maths; this checks where
# it runs), and no shrinking: the first failing case already names the line.
SEAM = settings(HYPOTHESIS, max_examples=4, phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[*HYPOTHESIS.suppress_health_check, HealthCheck.function_scoped_fixture])


@pytest.mark.filterwarnings("ignore:grad and param do not obey the gradient layout contract")
@pytest.mark.parametrize("op", OPS, ids=str)
@SEAM
@given(data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_row_on_device_equals_cpu(device_backend, op, data, seed):
    _, tolerance = device_backend
    check_row_on_device(op, data.draw(op.cases, label="case"), seed, tolerance)

"""The statistics the tensor benchmark reports its verdict with (benchmarks/_timing.py, bench_tensor.py)."""
import os
import statistics
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from _timing import median_interval  # noqa: E402
from bench_tensor import step_verdict  # noqa: E402


def test_median_interval_brackets_the_median_and_narrows_with_more_rounds():
    rng = np.random.default_rng(0)
    few = list(1.08 + 0.05 * rng.standard_normal(10))
    many = list(1.08 + 0.05 * rng.standard_normal(1000))
    low_few, high_few = median_interval(few)
    low_many, high_many = median_interval(many)
    assert low_few <= statistics.median(few) <= high_few
    assert low_many <= statistics.median(many) <= high_many
    assert high_many - low_many < (high_few - low_few) / 3
    assert 1.07 < low_many and high_many < 1.09  # close around the true median, 1.08
    assert median_interval(few) == (low_few, high_few)  # seeded: reproducible


def test_median_interval_of_identical_values_is_that_value_and_of_one_value_is_undefined():
    assert median_interval([1.1] * 7) == (1.1, 1.1)
    low, high = median_interval([1.0])
    assert np.isnan(low) and np.isnan(high)


@pytest.mark.parametrize("ratio, low, high, verdict", [
    (1.05, 1.03, 1.07, "MET"),
    (1.12, 1.03, 1.07, "NOT SHOWN"),  # the ratio of medians is over the target
    (1.08, 1.05, 1.12, "NOT SHOWN"),  # the interval contains the target
    (1.15, 1.12, 1.18, "MISSED"),
])
def test_step_verdict(ratio, low, high, verdict):
    assert step_verdict(ratio, low, high, 1.10).startswith(verdict)

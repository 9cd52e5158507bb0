"""benchmarks/bench_conv_layouts.py times every layout on the same convolution: each must compute the numbers
the picked one does (its check, run here on small convolutions of each kind)."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from bench_conv_layouts import LAYOUTS, passes  # noqa: E402


@pytest.mark.parametrize("shape, filters, kernel, stride, padding, picked", [
    ((2, 1, 8, 8), 16, 3, 1, 1, "planes"),
    ((2, 12, 6, 6), 8, 3, 1, 1, "rows"),
    ((2, 2, 18, 18), 4, 5, 1, 2, "batch"),
    ((2, 8, 16, 16), 8, 3, 1, 1, "image"),
    ((2, 16, 18, 18), 8, 3, 2, 1, "samples"),
])
def test_every_layout_computes_the_picked_ones_numbers(shape, filters, kernel, stride, padding, picked):
    runs, chosen = passes(shape, filters, kernel, stride, padding)
    assert chosen == picked
    assert set(runs) == set(LAYOUTS) - ({"image"} if stride != 1 else set())
    out, grad_x, grad_w = runs[chosen]()
    assert out.shape == (shape[0], filters) + out.shape[2:] and grad_x.shape == shape
    assert grad_w.shape == (filters, shape[1], kernel, kernel)

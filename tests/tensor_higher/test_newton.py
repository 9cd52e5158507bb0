"""Newton's method with func.grad / func.hessian converges in a handful of steps.

f(x) = 1/2 x^T A x - b^T x + 1/4 sum x^4 (quadratic plus quartic, strictly
convex).  The gradient A x - b + x^3 and Hessian A + diag(3 x^2) are also
written out in NumPy here, so the checks do not trust taugrad's own numbers.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

import taugrad
from taugrad import Value, func

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(8)
M = RNG.normal(size=(5, 5))
A = M @ M.T / 5 + np.eye(5)  # symmetric positive definite
B = RNG.normal(size=5) * 3


def f(x):
    a, b = taugrad.tensor(A, dtype="float64"), taugrad.tensor(B, dtype="float64")
    return 0.5 * (x @ (a @ x)) - b @ x + 0.25 * (x**4).sum()


def test_gradient_and_hessian_match_the_closed_forms():
    x = RNG.normal(size=5)
    g = func.grad(f)(taugrad.tensor(x, dtype="float64"))
    H = func.hessian(f)(taugrad.tensor(x, dtype="float64"))
    np.testing.assert_allclose(g.detach().numpy(), A @ x - B + x**3, rtol=1e-12)
    assert H.shape == (5, 5)
    np.testing.assert_allclose(H.detach().numpy(), A + np.diag(3 * x**2), rtol=1e-12)


def test_newton_converges_quadratically_in_a_handful_of_steps():
    x = np.full(5, 2.0)
    norms = []
    for _ in range(12):
        xt = taugrad.tensor(x, dtype="float64")
        g = func.grad(f)(xt).detach().numpy()
        norms.append(np.linalg.norm(A @ x - B + x**3))  # closed-form gradient norm
        if norms[-1] < 1e-12:
            break
        x = x - np.linalg.solve(func.hessian(f)(xt).detach().numpy(), g)
    assert norms[-1] < 1e-12 and len(norms) - 1 <= 8, norms
    # quadratic convergence: the last steps square the error (up to a constant)
    tail = [n for n in norms if n < 1e-1]
    assert len(tail) >= 2
    for before, after in zip(tail, tail[1:]):
        assert after <= 10 * before**2 + 1e-13, norms


def test_newton_on_values_with_nested_grad():
    """One variable on the scalar engine: x <- x - g'(x) / g''(x), g''(x) from grad(grad(g))."""
    g = lambda v: 1.5 * v * v - 2.0 * v + 0.25 * v**4  # noqa: E731
    d1, d2 = func.grad(g), func.grad(func.grad(g))
    x = 3.0
    for steps in range(1, 20):
        x = x - d1(Value(x)).data / d2(Value(x)).data
        if abs(3 * x - 2 + x**3) < 1e-13:
            break
    assert steps <= 8 and abs(3 * x - 2 + x**3) < 1e-13


def test_example_script_runs_and_converges():
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "newton.py")], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    converged = [line for line in lines if line.startswith("converged in")]
    assert converged and int(converged[0].split()[2]) <= 8
    residual = [line for line in lines if line.startswith("closed-form gradient")][0]
    assert float(residual.rsplit("=", 1)[1]) < 1e-10

"""Newton's method with taugrad.func: the step needs the Hessian, a second derivative.

    python examples/newton.py

Minimise a quadratic-plus-quartic function of x in R^4,

    f(x) = 1/2 x^T A x - b^T x + 1/4 sum_i x_i^4      (A symmetric positive definite)

whose gradient is  A x - b + x^3  and Hessian  A + diag(3 x^2)  (positive
definite, so f has one minimum).  Each Newton step solves  H(x) dx = -g(x);
taugrad computes g with ``func.grad`` and H with ``func.hessian`` -- the
Jacobian of the gradient, i.e. backward through the backward pass.

Near the minimum the error is squared at every step (quadratic convergence):
the number of correct digits doubles, so a handful of steps reach machine
precision.  The same loop then runs on the scalar engine (Values).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import taugrad  # noqa: E402
from taugrad import Value, func  # noqa: E402

A = np.array([[4.0, 1.0, 0.0, 0.5],
              [1.0, 3.0, 0.5, 0.0],
              [0.0, 0.5, 2.0, 0.3],
              [0.5, 0.0, 0.3, 1.5]])
B = np.array([1.0, -2.0, 3.0, 0.5])


def f(x):
    """1/2 x^T A x - b^T x + 1/4 sum x^4, on a taugrad Tensor."""
    a = taugrad.tensor(A, dtype="float64")
    b = taugrad.tensor(B, dtype="float64")
    return 0.5 * (x @ (a @ x)) - (b @ x) + 0.25 * (x**4).sum()


def newton(f, x0, tol=1e-12, max_steps=20):
    """Minimise f from x0; returns (x, history) with one (step, f, |grad|) row per iterate."""
    grad_f, hess_f = func.grad(f), func.hessian(f)
    x = taugrad.tensor(x0, dtype="float64")
    history = []
    for step in range(max_steps):
        g = grad_f(x).numpy()
        history.append((step, f(x).item(), float(np.linalg.norm(g))))
        if np.linalg.norm(g) < tol:
            break
        H = hess_f(x).numpy()  # shape (4, 4): x.shape + x.shape
        x = taugrad.tensor(x.numpy() - np.linalg.solve(H, g), dtype="float64")
    return x, history


def newton_scalar(f, x0, tol=1e-12, max_steps=20):
    """The same for a function of one Value: x <- x - f'(x) / f''(x)."""
    d1, d2 = func.grad(f), func.grad(func.grad(f))
    x = Value(x0)
    history = []
    for step in range(max_steps):
        g = d1(x).data
        history.append((step, f(x).data, abs(g)))
        if abs(g) < tol:
            break
        x = Value(x.data - g / d2(x).data)
    return x, history


def main() -> int:
    x, history = newton(f, np.zeros(4))
    print("Newton's method on f(x) = 1/2 x^T A x - b^T x + 1/4 sum x^4  (x in R^4, float64 Tensors)")
    print(f"{'step':>4}  {'f(x)':>22}  {'|grad f(x)|':>12}")
    for step, value, gnorm in history:
        print(f"{step:>4}  {value:>22.16f}  {gnorm:>12.3e}")
    residual = A @ x.numpy() - B + x.numpy()**3  # the gradient in closed form, computed without taugrad
    print(f"x* = {np.array2string(x.numpy(), precision=10)}")
    print(f"closed-form gradient at x*: |A x - b + x^3| = {np.linalg.norm(residual):.1e}")
    print(f"converged in {len(history) - 1} Newton steps")

    def g(v):
        return 0.5 * 3.0 * v * v - 2.0 * v + 0.25 * v**4

    xs, history = newton_scalar(g, 3.0)
    print()
    print("the same on the scalar engine: g(x) = 3/2 x^2 - 2 x + 1/4 x^4 from x = 3 (Values)")
    for step, value, gnorm in history:
        print(f"{step:>4}  {value:>22.16f}  {gnorm:>12.3e}")
    print(f"x* = {xs.data:.15f}, g'(x*) closed form = {3 * xs.data - 2 + xs.data**3:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

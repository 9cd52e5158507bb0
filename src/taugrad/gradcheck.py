"""Check analytic gradients against central finite differences.

For every scalar input element ``w``::

    dL/dw  ~=  (L(w + eps) - L(w - eps)) / (2 * eps)

with an error of order ``eps**2``.  The analytic and numeric values agree when
``|analytic - numeric| <= atol + rtol * |numeric|`` (NumPy's ``isclose`` rule).

Works for ``Value`` inputs (``f`` returns a ``Value``) and for ``Tensor`` inputs
(``f`` returns a ``Tensor``; a non-scalar output is checked through a fixed
random projection ``sum(out * r)``, i.e. one vector-Jacobian product).
"""
from __future__ import annotations

from typing import Any, Callable, List, Sequence, Tuple

import numpy as np


class GradcheckError(AssertionError):
    """Analytic and finite-difference gradients disagree; the message lists where."""


def gradcheck(
    f: Callable[..., Any],
    inputs: Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """Return True if ``f``'s gradients match finite differences, else raise GradcheckError.

    ``inputs`` is a sequence of ``Value`` or ``Tensor`` objects (or one of them);
    ``f(*inputs)`` must return a ``Value`` or a ``Tensor``.  The inputs' ``.grad``
    and ``.data`` are left as they were.
    """
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    inputs = list(inputs)
    if not inputs:
        raise ValueError("gradcheck: inputs is empty; pass the Values or Tensors to differentiate")
    if eps <= 0:
        raise ValueError(f"gradcheck: eps must be positive, got {eps}")
    adapter = _ScalarAdapter() if all(_is_value(x) for x in inputs) else _TensorAdapter(inputs)
    analytic = adapter.analytic(f, inputs)
    problems: List[str] = []
    for index, (inp, grad) in enumerate(zip(inputs, analytic)):
        numeric = adapter.numeric(f, inputs, inp, eps)
        problems.extend(_disagreements(index, inp, grad, numeric, atol, rtol))
    if problems:
        raise GradcheckError("gradcheck failed:\n" + "\n".join(problems))
    return True


def _is_value(x: Any) -> bool:
    from taugrad.scalar import Value

    return isinstance(x, Value)


def _name(index: int, inp: Any) -> str:
    label = getattr(inp, "label", "") or ""
    return f"input {index}" + (f" ({label})" if label else "")


def _disagreements(index: int, inp: Any, analytic: Any, numeric: Any, atol: float, rtol: float) -> List[str]:
    a = np.asarray(analytic, dtype=np.float64)
    n = np.asarray(numeric, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(a - n) <= atol + rtol * np.abs(n))
    bad &= ~(np.isnan(a) & np.isnan(n)) & ~((a == n) & np.isinf(a))  # same special value agrees
    if a.ndim == 0:
        if bad:
            return [f"  {_name(index, inp)}: analytic {float(a)!r}, numeric {float(n)!r}"]
        return []
    lines = []
    for position in zip(*np.nonzero(bad)):
        pos = tuple(int(p) for p in position)
        lines.append(f"  {_name(index, inp)}[{', '.join(map(str, pos))}]: analytic {a[pos]!r}, numeric {n[pos]!r}")
    return lines


class _ScalarAdapter:
    """gradcheck for ``Value`` inputs and a ``Value`` output."""

    def analytic(self, f: Callable[..., Any], inputs: List[Any]) -> List[float]:
        saved = [inp.grad for inp in inputs]
        for inp in inputs:
            inp.grad = 0.0
        try:
            out = f(*inputs)
            out.backward()
            return [inp.grad for inp in inputs]
        finally:
            for inp, grad in zip(inputs, saved):
                inp.grad = grad

    def numeric(self, f: Callable[..., Any], inputs: List[Any], inp: Any, eps: float) -> float:
        original = inp.data
        try:
            inp.data = original + eps
            plus = f(*inputs).data
            inp.data = original - eps
            minus = f(*inputs).data
        finally:
            inp.data = original
        return (plus - minus) / (2.0 * eps)


class _TensorAdapter:
    """gradcheck for ``Tensor`` inputs; a non-scalar output is projected on a fixed random ``r``."""

    def __init__(self, inputs: List[Any]) -> None:
        for index, inp in enumerate(inputs):
            data = getattr(inp, "data", None)
            if not isinstance(data, np.ndarray):
                raise TypeError(f"gradcheck: input {index} is {type(inp).__name__}, expected a Value or a Tensor")
            if data.dtype != np.float64:
                raise TypeError(
                    f"gradcheck: input {index} has dtype {data.dtype}; finite differences need float64 "
                    "(create it with dtype=float64)"
                )
        self._projection: Any = None

    def _project(self, out: Any) -> Tuple[Any, float]:
        """Return (differentiable scalar, its float value) for the output ``out``."""
        if self._projection is None:
            rng = np.random.default_rng(12345)
            self._projection = rng.uniform(0.5, 1.5, size=out.data.shape)
        if out.data.shape == ():
            return out, float(out.data)
        from taugrad.tensor import Tensor

        r = Tensor(self._projection.astype(out.data.dtype))
        scalar = (out * r).sum()
        return scalar, float(scalar.data)

    def analytic(self, f: Callable[..., Any], inputs: List[Any]) -> List[np.ndarray]:
        import taugrad

        scalar, _ = self._project(f(*inputs))
        grads = taugrad.grad(scalar, inputs, allow_unused=True)
        return [np.zeros_like(inp.data) if g is None else np.asarray(g.data, dtype=np.float64) for inp, g in zip(inputs, grads)]

    def numeric(self, f: Callable[..., Any], inputs: List[Any], inp: Any, eps: float) -> np.ndarray:
        from taugrad.autograd import no_grad

        data = inp.data
        result = np.zeros(data.shape, dtype=np.float64)
        with no_grad():
            for position in np.ndindex(data.shape):
                original = data[position]
                try:
                    data[position] = original + eps
                    plus = self._project(f(*inputs))[1]
                    data[position] = original - eps
                    minus = self._project(f(*inputs))[1]
                finally:
                    data[position] = original
                result[position] = (plus - minus) / (2.0 * eps)
        return result

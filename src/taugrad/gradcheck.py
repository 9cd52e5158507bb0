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
        from taugrad._tensor import Tensor

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


# ---------------------------------------------------------------------------
# second order
# ---------------------------------------------------------------------------


def gradgradcheck(
    f: Callable[..., Any],
    inputs: Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """Return True if ``f``'s *second* derivatives match finite differences, else raise GradcheckError.

    The analytic gradient ``g(x) = d f / d x`` is computed with
    ``create_graph=True`` and differentiated again; the result is compared with
    central differences of the (first-order) analytic gradient::

        d/dx_j <g(x), v>  ~=  (<g(x + eps e_j), v> - <g(x - eps e_j), v>) / (2 eps)

    * ``Value`` inputs: ``v`` runs over the unit vectors, so the whole Hessian
      ``d2 f / dx_i dx_j`` is checked.
    * ``Tensor`` inputs (float64): ``v`` is a fixed random vector per input, so
      the check is on the Hessian-vector product ``H v``.  A non-scalar output
      is projected on a fixed random ``r`` (``sum(out * r)``, as in
      :func:`gradcheck`), and ``r`` is differentiated too: ``d <J^T r, v> / d r
      = J v`` checks the double-backward trick that forward-mode products use.

    The inputs' ``.grad`` and ``.data`` are left as they were.
    """
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    inputs = list(inputs)
    if not inputs:
        raise ValueError("gradgradcheck: inputs is empty; pass the Values or Tensors to differentiate")
    if eps <= 0:
        raise ValueError(f"gradgradcheck: eps must be positive, got {eps}")
    if all(_is_value(x) for x in inputs):
        problems = _value_gradgrad(f, inputs, eps, atol, rtol)
    else:
        _TensorAdapter(inputs)  # same input validation as gradcheck
        problems = _tensor_gradgrad(f, inputs, eps, atol, rtol)
    if problems:
        raise GradcheckError("gradgradcheck failed:\n" + "\n".join(problems))
    return True


def _value_gradgrad(f: Callable[..., Any], inputs: List[Any], eps: float, atol: float, rtol: float) -> List[str]:
    """Full Hessian of a ``Value`` function: analytic (grad of grad) vs differences of grad."""
    from taugrad.scalar.higher import grad

    def first(create_graph: bool) -> List[Any]:
        out = f(*inputs)
        return list(grad(out, inputs, create_graph=create_graph, allow_unused=True))

    n = len(inputs)
    analytic = np.zeros((n, n))
    for i, g in enumerate(first(create_graph=True)):
        if g is not None:
            second = grad(g, inputs, allow_unused=True)
            analytic[i] = [0.0 if s is None else s for s in second]
    numeric = np.zeros((n, n))
    for j, inp in enumerate(inputs):
        original = inp.data
        try:
            inp.data = original + eps
            plus = first(create_graph=False)
            inp.data = original - eps
            minus = first(create_graph=False)
        finally:
            inp.data = original
        for i in range(n):
            numeric[i, j] = ((plus[i] or 0.0) - (minus[i] or 0.0)) / (2.0 * eps)
    problems = []
    for i in range(n):
        for j in range(n):
            name = f"d2 f / d({_name(i, inputs[i])}) d({_name(j, inputs[j])})"
            problems.extend(_second_order_lines(name, analytic[i, j], numeric[i, j], atol, rtol))
    return problems


def _second_order_lines(name: str, analytic: Any, numeric: Any, atol: float, rtol: float) -> List[str]:
    """One line per element where ``analytic`` and ``numeric`` disagree (gradcheck's rule)."""
    a = np.asarray(analytic, dtype=np.float64)
    n = np.asarray(numeric, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(a - n) <= atol + rtol * np.abs(n))
    bad &= ~(np.isnan(a) & np.isnan(n)) & ~((a == n) & np.isinf(a))
    lines = []
    for position in zip(*np.nonzero(bad)) if a.ndim else ([()] if bad else []):
        pos = tuple(int(p) for p in position)
        where = f"[{', '.join(map(str, pos))}]" if pos else ""
        lines.append(f"  {name}{where}: analytic {float(a[pos])!r}, numeric {float(n[pos])!r}")
    return lines


class _SecondOrder:
    """The pieces of the Tensor second-order check, for one ``f`` and fixed ``r``, ``v``."""

    def __init__(self, f: Callable[..., Any], inputs: List[Any]) -> None:
        self.f = f
        self.inputs = inputs
        rng = np.random.default_rng(54321)
        self.v = [rng.uniform(0.5, 1.5, size=inp.data.shape) for inp in inputs]
        self.r: Any = None  # the projection of a non-scalar output, made on the first call

    def project(self, out: Any) -> Any:
        from taugrad._tensor import Tensor

        if out.data.shape == ():
            return out
        if self.r is None:
            rng = np.random.default_rng(12345)
            self.r = Tensor(rng.uniform(0.5, 1.5, size=out.data.shape).astype(out.data.dtype), requires_grad=True)
        return (out * self.r).sum()

    def gradient_dot_v(self, create_graph: bool) -> Any:
        """``<g, v>`` with ``g = d <f(x), r> / d x``: a Tensor (differentiable if create_graph) or a float."""
        import taugrad.tensor_engine as engine
        from taugrad._tensor import Tensor

        scalar = self.project(self.f(*self.inputs))
        if not scalar.requires_grad:
            return 0.0
        grads = engine.grad(scalar, self.inputs, create_graph=create_graph, allow_unused=True)
        total: Any = 0.0
        for g, v in zip(grads, self.v):
            if g is not None:
                total = total + (g * Tensor(v)).sum()
        if not create_graph:
            return float(np.asarray(total.data if isinstance(total, Tensor) else total))
        return total


def _tensor_gradgrad(f: Callable[..., Any], inputs: List[Any], eps: float, atol: float, rtol: float) -> List[str]:
    import taugrad.tensor_engine as engine
    from taugrad._tensor import Tensor

    check = _SecondOrder(f, inputs)
    phi = check.gradient_dot_v(create_graph=True)
    wrt = inputs + ([check.r] if check.r is not None else [])
    if isinstance(phi, Tensor) and phi.requires_grad:
        second = engine.grad(phi, wrt, allow_unused=True)
        analytic = [np.zeros(x.shape) if s is None else np.asarray(s.data, dtype=np.float64) for x, s in zip(wrt, second)]
    else:  # the gradient does not depend on the inputs: every second derivative is 0
        analytic = [np.zeros(x.shape) for x in wrt]
    problems: List[str] = []
    for index, x in enumerate(wrt):
        numeric = np.zeros(x.shape)
        data = x.data
        for position in np.ndindex(data.shape):
            original = data[position]
            try:
                data[position] = original + eps
                plus = check.gradient_dot_v(create_graph=False)
                data[position] = original - eps
                minus = check.gradient_dot_v(create_graph=False)
            finally:
                data[position] = original
            numeric[position] = (plus - minus) / (2.0 * eps)
        name = "(J v) via grad_output" if x is check.r else f"(H v) of {_name(index, x)}"
        problems.extend(_second_order_lines(name, analytic[index], numeric, atol, rtol))
    return problems

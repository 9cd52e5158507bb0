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

from taugrad.grad_mode import no_grad
from taugrad.scalar.higher import grad as value_grad
from taugrad.scalar.value import Value
from taugrad.tensors import engine
from taugrad.tensors.core.backend import move_like, to_host
from taugrad.tensors.core.node import Tensor


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

    ``inputs`` is a sequence of ``Value`` objects or of ``Tensor`` objects (or
    one of them); ``f(*inputs)`` returns a ``Value``/``Tensor`` or a tuple or
    list of them, and the Jacobian of every output is checked.  As in
    ``torch.autograd.gradcheck``, Tensor inputs that do not require grad are
    passed to ``f`` but not checked, and so are integer outputs.  The inputs'
    ``.grad`` and ``.data`` are left as they were.
    """
    inputs = _prepare(inputs, eps, "gradcheck")
    adapter = _ScalarAdapter(inputs) if _is_value(inputs[0]) else _TensorAdapter(inputs, "gradcheck")
    outputs = adapter.outputs(f(*inputs))
    problems: List[str] = []
    for k in adapter.checked_outputs(outputs):
        analytic = adapter.analytic(f, inputs, k)
        for (index, inp), grad in zip(adapter.checked, analytic):
            numeric = adapter.numeric(f, inputs, inp, eps, k)
            name = _name(index, inp) if len(outputs) == 1 else f"output {k}, {_name(index, inp)}"
            problems.extend(_second_order_lines(name, grad, numeric, atol, rtol))
    if problems:
        raise GradcheckError("gradcheck failed:\n" + "\n".join(problems))
    return True


def _prepare(inputs: Any, eps: float, op: str) -> List[Any]:
    """``inputs`` as a non-empty list of all Values or all Tensors; clear errors otherwise."""
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    inputs = list(inputs)
    if not inputs:
        raise ValueError(f"{op}: inputs is empty; pass the Values or Tensors to differentiate")
    if eps <= 0:
        raise ValueError(f"{op}: eps must be positive, got {eps}")
    for index, inp in enumerate(inputs):
        if not (_is_value(inp) or isinstance(inp, Tensor)):
            raise TypeError(f"{op}: input {index} is {type(inp).__name__}, expected a Value or a Tensor")
    kinds = {type(inp).__name__ for inp in inputs}
    if len(kinds) > 1 and any(_is_value(inp) for inp in inputs):
        raise TypeError(f"{op}: inputs must be all Values or all Tensors, got a mix of {', '.join(sorted(kinds))}")
    return inputs


def _as_outputs(out: Any, kind: type, op: str) -> List[Any]:
    """``f``'s result as a list of outputs of type ``kind``; a one-line TypeError otherwise."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not outs:
        raise TypeError(f"{op}: f returned an empty {type(out).__name__}; expected at least one {kind.__name__}")
    for k, o in enumerate(outs):
        if not isinstance(o, kind):
            where = f"output {k} of f is" if isinstance(out, (tuple, list)) else "f returned"
            raise TypeError(
                f"{op}: {where} {type(o).__name__}; expected a {kind.__name__} or a tuple/list of {kind.__name__}s"
            )
    return outs


def _is_value(x: Any) -> bool:
    return isinstance(x, Value)


def _name(index: int, inp: Any) -> str:
    label = getattr(inp, "label", "") or ""
    return f"input {index}" + (f" ({label})" if label else "")


def _host64(array: Any) -> np.ndarray:
    """An analytic gradient as float64 on the host, where it is compared."""
    return np.asarray(to_host(array), dtype=np.float64)


def _element(data: Any, position: tuple) -> Any:
    """``data[position]``, kept apart from ``data`` (a device array's element is a 0-d view of it)."""
    value = data[position]
    return value if type(data) is np.ndarray else value.copy()


class _ScalarAdapter:
    """gradcheck for ``Value`` inputs and ``Value`` outputs (every input is checked)."""

    def __init__(self, inputs: List[Any]) -> None:
        self.checked = list(enumerate(inputs))

    def outputs(self, out: Any) -> List[Any]:
        return _as_outputs(out, Value, "gradcheck")

    def checked_outputs(self, outputs: List[Any]) -> range:
        return range(len(outputs))

    def analytic(self, f: Callable[..., Any], inputs: List[Any], k: int) -> List[float]:
        saved = [inp.grad for inp in inputs]
        for inp in inputs:
            inp.grad = 0.0
        try:
            self.outputs(f(*inputs))[k].backward()
            return [inp.grad for inp in inputs]
        finally:
            for inp, grad in zip(inputs, saved):
                inp.grad = grad

    def numeric(self, f: Callable[..., Any], inputs: List[Any], inp: Any, eps: float, k: int) -> float:
        original = inp.data
        try:
            inp.data = original + eps
            plus = self.outputs(f(*inputs))[k].data
            inp.data = original - eps
            minus = self.outputs(f(*inputs))[k].data
        finally:
            inp.data = original
        return (plus - minus) / (2.0 * eps)


class _TensorAdapter:
    """gradcheck for ``Tensor`` inputs; each non-scalar output is projected on a fixed random ``r``.

    Only the inputs that require grad are checked (``self.checked``, pairs of
    position and input), as torch does; the others are constants for ``f``.
    """

    def __init__(self, inputs: List[Any], op: str) -> None:
        self.checked = [(index, inp) for index, inp in enumerate(inputs) if inp.requires_grad]
        if not self.checked:
            raise ValueError(f"{op}: at least one input must require grad")
        for index, inp in self.checked:
            if inp._data.dtype != np.float64:
                raise TypeError(
                    f"{op}: input {index} has dtype {inp._data.dtype}; finite differences need float64 "
                    "(create it with dtype=float64)"
                )
        self._projections: dict = {}

    def outputs(self, out: Any) -> List[Any]:
        return _as_outputs(out, Tensor, "gradcheck")

    def checked_outputs(self, outputs: List[Any]) -> List[int]:
        # integer and bool outputs (indices, masks) have no gradient to check
        return [k for k, o in enumerate(outputs) if o._data.dtype.kind in "fc"]

    def _project(self, out: Any, k: int) -> Tuple[Any, float]:
        """Return (differentiable scalar, its float value) for output ``k``, ``out``."""
        if out._data.shape == ():
            return out, float(out._data)
        if k not in self._projections:
            rng = np.random.default_rng(12345 + k)
            self._projections[k] = rng.uniform(0.5, 1.5, size=out._data.shape)
        scalar = (out * Tensor(move_like(self._projections[k].astype(out._data.dtype), out._data))).sum()
        return scalar, float(scalar._data)

    def analytic(self, f: Callable[..., Any], inputs: List[Any], k: int) -> List[np.ndarray]:
        scalar, _ = self._project(self.outputs(f(*inputs))[k], k)
        wrt = [inp for _, inp in self.checked]
        if not scalar.requires_grad:  # the output does not depend on the inputs
            return [np.zeros(inp.shape) for inp in wrt]
        grads = engine.grad(scalar, wrt, allow_unused=True)
        return [np.zeros(inp.shape) if g is None else _host64(g._data) for inp, g in zip(wrt, grads)]

    def numeric(self, f: Callable[..., Any], inputs: List[Any], inp: Any, eps: float, k: int) -> np.ndarray:
        data = inp._data
        result = np.zeros(data.shape, dtype=np.float64)
        with no_grad():
            for position in np.ndindex(data.shape):
                original = _element(data, position)
                try:
                    data[position] = original + eps
                    plus = self._project(self.outputs(f(*inputs))[k], k)[1]
                    data[position] = original - eps
                    minus = self._project(self.outputs(f(*inputs))[k], k)[1]
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
      the check is on the Hessian-vector product ``H v``.  Inputs that do not
      require grad are passed to ``f`` but not differentiated (as in torch).  A non-scalar output
      is projected on a fixed random ``r`` (``sum(out * r)``, as in
      :func:`gradcheck`), and ``r`` is differentiated too: ``d <J^T r, v> / d r
      = J v`` checks the double-backward trick that forward-mode products use.

    The inputs' ``.grad`` and ``.data`` are left as they were.
    """
    inputs = _prepare(inputs, eps, "gradgradcheck")
    if _is_value(inputs[0]):
        problems = _value_gradgrad(f, inputs, eps, atol, rtol)
    else:
        checked = _TensorAdapter(inputs, "gradgradcheck").checked  # gradcheck's validation
        problems = _tensor_gradgrad(f, inputs, checked, eps, atol, rtol)
    if problems:
        raise GradcheckError("gradgradcheck failed:\n" + "\n".join(problems))
    return True


def _value_gradgrad(f: Callable[..., Any], inputs: List[Any], eps: float, atol: float, rtol: float) -> List[str]:
    """Full Hessian of a ``Value`` function: analytic (grad of grad) vs differences of grad."""
    def first(create_graph: bool) -> List[Any]:
        out = f(*inputs)
        return list(value_grad(out, inputs, create_graph=create_graph, allow_unused=True))

    n = len(inputs)
    analytic = np.zeros((n, n))
    for i, g in enumerate(first(create_graph=True)):
        if g is not None:
            second = value_grad(g, inputs, allow_unused=True)
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

    def __init__(self, f: Callable[..., Any], inputs: List[Any], wrt: List[Any]) -> None:
        self.f = f
        self.inputs = inputs  # what f is called with
        self.wrt = wrt  # the inputs that require grad: the ones differentiated
        rng = np.random.default_rng(54321)
        self.v = [rng.uniform(0.5, 1.5, size=inp._data.shape) for inp in wrt]
        self.r: Any = None  # the projection of a non-scalar output, made on the first call

    def project(self, out: Any) -> Any:
        if not isinstance(out, Tensor):
            raise TypeError(f"gradgradcheck: f returned {type(out).__name__}; expected one Tensor")
        if out._data.shape == ():
            return out
        if self.r is None:
            rng = np.random.default_rng(12345)
            r = rng.uniform(0.5, 1.5, size=out._data.shape).astype(out._data.dtype)
            self.r = Tensor(move_like(r, out._data), requires_grad=True)
        return (out * self.r).sum()

    def gradient_dot_v(self, create_graph: bool) -> Any:
        """``<g, v>`` with ``g = d <f(x), r> / d x``: a Tensor (differentiable if create_graph) or a float."""
        scalar = self.project(self.f(*self.inputs))
        if not scalar.requires_grad:
            return 0.0
        grads = engine.grad(scalar, self.wrt, create_graph=create_graph, allow_unused=True)
        total: Any = 0.0
        for g, v in zip(grads, self.v):
            if g is not None:
                total = total + (g * Tensor(move_like(v, g._data))).sum()
        if not create_graph:
            return float(total._data if isinstance(total, Tensor) else total)
        return total


def _tensor_gradgrad(
    f: Callable[..., Any], inputs: List[Any], checked: List[Tuple[int, Any]], eps: float, atol: float, rtol: float
) -> List[str]:
    """``H v`` for every input in ``checked`` (pairs of position and input), and ``J v`` through ``r``."""
    check = _SecondOrder(f, inputs, [inp for _, inp in checked])
    phi = check.gradient_dot_v(create_graph=True)
    wrt = check.wrt + ([check.r] if check.r is not None else [])
    positions = [index for index, _ in checked]
    if isinstance(phi, Tensor) and phi.requires_grad:
        second = engine.grad(phi, wrt, allow_unused=True)
        analytic = [np.zeros(x.shape) if s is None else _host64(s._data) for x, s in zip(wrt, second)]
    else:  # the gradient does not depend on the inputs: every second derivative is 0
        analytic = [np.zeros(x.shape) for x in wrt]
    problems: List[str] = []
    for index, x in enumerate(wrt):
        numeric = np.zeros(x.shape)
        data = x._data
        for position in np.ndindex(data.shape):
            original = _element(data, position)
            try:
                data[position] = original + eps
                plus = check.gradient_dot_v(create_graph=False)
                data[position] = original - eps
                minus = check.gradient_dot_v(create_graph=False)
            finally:
                data[position] = original
            numeric[position] = (plus - minus) / (2.0 * eps)
        name = "(J v) via grad_output" if x is check.r else f"(H v) of {_name(positions[index], x)}"
        problems.extend(_second_order_lines(name, analytic[index], numeric, atol, rtol))
    return problems

"""L-BFGS: a quasi-Newton method from the last few steps' gradient changes (Nocedal, 1980; Liu & Nocedal, 1989).

The algorithm is the one of ``torch.optim.LBFGS`` (itself after Schmidt's
minFunc), so the same closure gives the same iterates: the two-loop
recursion for the direction, a first step scaled to ``min(1, 1/|g|_1) * lr``,
then either fixed steps of ``lr`` or a strong-Wolfe line search.  It works
on one flat vector of all the parameters (host or device array), the
parameters being read and written in place.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from taugrad.grad_mode import enable_grad, no_grad
from taugrad.optim.optimizer import Optimizer, array_of, check_number, grad_array
from taugrad.optim.state import state_tensor
from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.inplace import bump_version

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    r"""L-BFGS as ``torch.optim.LBFGS``: ``step(closure)`` runs up to ``max_iter`` iterations.

    With ``g`` the flat gradient, ``s_i = x_{i+1} - x_i`` and
    ``y_i = g_{i+1} - g_i`` for the last ``history_size`` steps with
    ``y_i . s_i > 1e-10``, the direction is ``d = -H g``, where ``H``
    (the inverse Hessian estimate, starting from ``H0 = (y.s / y.y) I``) is
    applied by the two-loop recursion:

    .. code-block:: text

        q = -g;  for i newest..oldest:  a_i = rho_i s_i.q;  q = q - a_i y_i      (rho_i = 1 / y_i.s_i)
        r = H0 q; for i oldest..newest: b_i = rho_i y_i.r;  r = r + (a_i - b_i) s_i
        d = r;  x = x + t d

    ``t`` is ``min(1, 1/|g|_1) * lr`` on the first iteration and ``lr``
    after, or the point a strong-Wolfe line search finds
    (``line_search_fn="strong_wolfe"``).  It stops when
    ``max|g| <= tolerance_grad``, when a step or the loss changes by less
    than ``tolerance_change``, or after ``max_iter`` iterations or
    ``max_eval`` evaluations.  One parameter group only, as in PyTorch.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1,
        max_iter: int = 20,
        max_eval: Optional[int] = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: Optional[str] = None,
    ) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got {group['line_search_fn']!r}")

    # -- the flat vector ----------------------------------------------------

    def _flat_grad(self):
        arrays = [array_of(p) for p in self._params]
        xp = array_module(arrays[0])
        parts = []
        for p, array in zip(self._params, arrays):
            grad = grad_array(p)
            parts.append(xp.zeros(array.size, dtype=array.dtype) if grad is None else grad.reshape(-1))
        return xp.concatenate(parts)

    def _add(self, step: float, direction) -> None:
        """``x = x + step * direction`` for the flat ``x`` of all the parameters, in place."""
        offset = 0
        for p in self._params:
            array = array_of(p)
            array += step * direction[offset:offset + array.size].reshape(array.shape)
            offset += array.size
            if isinstance(p, Tensor):
                bump_version(p)

    def _copy_params(self) -> list:
        return [array_of(p).copy() for p in self._params]

    def _set_params(self, arrays: list) -> None:
        for p, array in zip(self._params, arrays):
            array_of(p)[...] = array
            if isinstance(p, Tensor):
                bump_version(p)

    def _evaluate(self, closure: Callable[[], Any]) -> float:
        with enable_grad():
            return float(closure())

    # -- one step -----------------------------------------------------------

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` iterations; ``closure`` re-evaluates the loss (with ``backward()``) and returns it."""
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that re-evaluates the model and returns the loss")
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = group["lr"].item() if isinstance(group["lr"], Tensor) else group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            first_loss = closure()
        loss = float(first_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        xp = array_module(flat_grad)
        if float(xp.abs(flat_grad).max()) <= tolerance_grad:
            return first_loss

        saved = _HistoryView(state)
        d, t = saved.d, saved.t
        old_dirs, old_steps, ro, h_diag = saved.old_dirs, saved.old_steps, saved.ro, saved.h_diag
        prev_flat_grad, prev_loss = saved.prev_flat_grad, saved.prev_loss
        # torch keeps the two-loop coefficients in state["al"] (history_size slots, None until first
        # used); it is part of the state_dict, so it is kept here too
        al_kept = saved.al

        iteration = 0
        while iteration < max_iter:
            iteration += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_steps, ro, h_diag = [], [], [], 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y @ s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_steps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_steps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y @ y)
                al = [0.0] * len(old_dirs)
                if al_kept is None:
                    al_kept = [None] * history_size
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = float(old_steps[i] @ q) * ro[i]
                    al_kept[i] = al[i]
                    q -= al[i] * old_dirs[i]
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = float(old_dirs[i] @ r) * ro[i]
                    r += (al[i] - be_i) * old_steps[i]

            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(xp.abs(flat_grad).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float(flat_grad @ d)
            if gtd > -tolerance_change:
                break

            used = 0
            if group["line_search_fn"] is not None:
                start = self._copy_params()

                def evaluate(step: float, direction) -> Tuple[float, Any]:
                    self._add(step, direction)
                    value = self._evaluate(closure)
                    grad = self._flat_grad()
                    self._set_params(start)
                    return value, grad

                loss, flat_grad, t, used = strong_wolfe(evaluate, t, d, loss, flat_grad, gtd,
                                                        tolerance_change=tolerance_change, max_ls=max_eval - evals)
                self._add(t, d)
                converged = float(xp.abs(flat_grad).max()) <= tolerance_grad
            else:
                self._add(t, d)
                converged = False
                if iteration != max_iter:
                    loss = self._evaluate(closure)
                    flat_grad = self._flat_grad()
                    converged = float(xp.abs(flat_grad).max()) <= tolerance_grad
                    used = 1
            evals += used
            state["func_evals"] += used

            if iteration == max_iter or evals >= max_eval or converged:
                break
            if float(xp.abs(d * t).max()) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = state_tensor(d)
        state["t"] = t
        state["old_dirs"] = [state_tensor(v) for v in old_dirs]
        state["old_stps"] = [state_tensor(v) for v in old_steps]
        state["ro"] = list(ro)
        state["H_diag"] = h_diag
        state["prev_flat_grad"] = state_tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss
        if al_kept is not None:
            state["al"] = list(al_kept)
        return first_loss


class _HistoryView:
    """The arrays and numbers of the last step's history, read from ``state`` (tensors there)."""

    def __init__(self, state: Dict[str, Any]) -> None:
        def array(value):
            return value._data if isinstance(value, Tensor) else value

        def number(value):
            return value.item() if isinstance(value, Tensor) else value

        self.d = array(state.get("d"))
        self.t = number(state.get("t"))
        self.old_dirs: List[Any] = [array(v) for v in state.get("old_dirs") or []]
        self.old_steps: List[Any] = [array(v) for v in state.get("old_stps") or []]
        self.ro: List[float] = [number(v) for v in state.get("ro") or []]
        self.h_diag = number(state.get("H_diag"))
        self.prev_flat_grad = array(state.get("prev_flat_grad"))
        self.prev_loss = number(state.get("prev_loss"))
        self.al: Optional[List[Any]] = None if state.get("al") is None else [
            None if v is None else number(v) for v in state["al"]]


def cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                  bounds: Optional[Tuple[float, float]] = None) -> float:
    r"""The minimiser of the cubic through ``(x1, f1)``, ``(x2, f2)`` with slopes ``g1``, ``g2``, within ``bounds``.

    ``d1 = g1 + g2 - 3 (f1 - f2) / (x1 - x2)``, ``d2 = sqrt(d1^2 - g1 g2)``;
    for ``x1 <= x2`` the minimum is at ``x2 - (x2 - x1) (g2 + d2 - d1) / (g2 - g1 + 2 d2)``
    (symmetrically otherwise), clamped to the bounds; the bounds' midpoint
    when the cubic has no real critical point.
    """
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


def strong_wolfe(evaluate: Callable[[float, Any], Tuple[float, Any]], t: float, d, f: float, g, gtd: float,
                 c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9, max_ls: int = 25):
    r"""A step ``t`` along ``d`` meeting the strong Wolfe conditions (Nocedal & Wright, algorithms 3.5 and 3.6).

    Sufficient decrease ``f(t) <= f + c1 t g.d`` and curvature
    ``|g(t).d| <= -c2 g.d``: first bracket such a step (growing ``t`` by
    cubic extrapolation), then shrink the bracket by cubic interpolation,
    safeguarded away from its ends.  Returns ``(f(t), g(t), t, evaluations)``.
    """
    xp = array_module(d)
    d_norm = float(xp.abs(d).max())
    g = g.copy()
    f_new, g_new = evaluate(t, d)
    evals = 1
    gtd_new = float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    bracket, bracket_f, bracket_g, bracket_gtd = [], [], [], []
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        grown = cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                              bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.copy(), gtd_new
        t = grown
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]

    insufficient = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals

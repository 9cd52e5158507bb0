"""Gradient-flow diagnostics: which layers' gradients vanish or explode, which ReLUs are dead.

:class:`GradientFlowMonitor` watches a :class:`taugrad.nn.Module` during training:

* a forward hook on every ``ReLU`` module records which of its units were
  positive for at least one sample; a unit that never fired during an epoch
  is *dead* for that epoch (its gradient was zero for every sample, so its
  incoming weights did not learn);
* :meth:`~GradientFlowMonitor.record_gradients`, called after each
  ``backward()``, records every parameterised layer's gradient norm
  ``sqrt(sum over its parameters of sum(grad ** 2))``;
* :meth:`~GradientFlowMonitor.end_epoch` turns the epoch's records into one
  point per layer: the mean gradient norm over the epoch's steps and the dead
  fraction of each ReLU.

:func:`format_table` / :func:`print_table` show the result (with ``rich`` when
it is installed), :func:`plot_gradient_flow` draws both curves per layer to a
PNG (matplotlib).  ``taugrad train --diagnose`` uses all three.

The hooks keep only a weak reference to the monitor and read arrays at once,
so they hold no graph and add no reference cycle; :meth:`close` removes them.
"""
from __future__ import annotations

import math
import os
import weakref
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from taugrad.learn.plots import _new_figure, _save
from taugrad.nn.layers import ReLU

__all__ = ["GradientFlowMonitor", "format_table", "print_table", "plot_gradient_flow"]

#: a layer whose gradient norm is below this fraction of the largest one is flagged "vanishing"
VANISHING_RATIO = 1e-3
#: a gradient norm above this (or not finite) is flagged "exploding"
EXPLODING_NORM = 1e3
#: a ReLU with more than this fraction of dead units is flagged
DEAD_WARNING = 0.5


class GradientFlowMonitor:
    """Record per-layer gradient norms and dead-ReLU fractions of ``model``, epoch by epoch.

    Usage::

        monitor = GradientFlowMonitor(model)
        for epoch in range(n):
            for xb, yb in loader:
                loss = loss_fn(model(xb), yb)
                optimizer.zero_grad(); loss.backward()
                monitor.record_gradients()
                optimizer.step()
            monitor.end_epoch()
        print_table(monitor)

    ``grad_norms[name]`` and ``dead_fractions[name]`` hold one value per
    finished epoch.  Only forward passes in training mode (``model.train()``)
    count towards dead units, so evaluation passes do not dilute them.
    """

    def __init__(self, model: Any) -> None:
        self.layers: List[Tuple[str, Any]] = [
            (name or type(model).__name__, module)
            for name, module in model.named_modules()
            if any(p is not None for p in module._parameters.values())
        ]
        self.relus: List[Tuple[str, Any]] = [
            (name or type(model).__name__, module) for name, module in model.named_modules() if isinstance(module, ReLU)
        ]
        self._order = {name or type(model).__name__: i for i, (name, _) in enumerate(model.named_modules())}
        self.grad_norms: Dict[str, List[float]] = {name: [] for name, _ in self.layers}
        self.dead_fractions: Dict[str, List[float]] = {name: [] for name, _ in self.relus}
        self.units: Dict[str, int] = {}
        self.epochs = 0
        self._norm_sums = {name: 0.0 for name, _ in self.layers}
        self._steps = 0
        self._alive: Dict[str, Optional[np.ndarray]] = {name: None for name, _ in self.relus}
        monitor = weakref.ref(self)
        self._handles = [module.register_forward_hook(_relu_hook(monitor, name)) for name, module in self.relus]

    # -- recording ------------------------------------------------------------------

    def _see_activation(self, name: str, output: Any) -> None:
        data = np.asarray(getattr(output, "_data", output))
        fired = data > 0
        fired = fired.reshape(fired.shape[0], -1).any(axis=0) if fired.ndim >= 2 else fired.reshape(-1)
        alive = self._alive[name]
        if alive is None or alive.shape != fired.shape:
            self._alive[name] = fired
        else:
            alive |= fired

    def record_gradients(self) -> Dict[str, float]:
        """Add this step's gradient norm of every layer (call after ``backward()``); returns them."""
        norms = {}
        for name, module in self.layers:
            total = 0.0
            for param in module._parameters.values():
                if param is not None and param.grad is not None:
                    g = np.asarray(param.grad._data, dtype=np.float64)
                    total += float(np.vdot(g, g).real)
            norms[name] = math.sqrt(total)
            self._norm_sums[name] += norms[name]
        self._steps += 1
        return norms

    def end_epoch(self) -> None:
        """Close the epoch: one gradient-norm and one dead-fraction point per layer."""
        for name, _ in self.layers:
            self.grad_norms[name].append(self._norm_sums[name] / self._steps if self._steps else math.nan)
            self._norm_sums[name] = 0.0
        for name, _ in self.relus:
            alive = self._alive[name]
            if alive is None:
                self.dead_fractions[name].append(math.nan)
            else:
                self.units[name] = alive.size
                self.dead_fractions[name].append(1.0 - float(alive.mean()) if alive.size else 0.0)
            self._alive[name] = None
        self._steps = 0
        self.epochs += 1

    def close(self) -> None:
        """Remove the forward hooks from the model."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    # -- reading ----------------------------------------------------------------------

    def rows(self) -> List[Dict[str, str]]:
        """One row per layer in network order: layer, kind, first/last epoch value, note."""
        rows = []
        finite = [v[-1] for v in self.grad_norms.values() if v and math.isfinite(v[-1])]
        largest = max(finite) if finite else 0.0
        for name, module in self.layers:
            values = self.grad_norms[name]
            if not values:
                continue
            last = values[-1]
            note = ""
            if not math.isfinite(last) or last > EXPLODING_NORM:
                note = "exploding"
            elif largest > 0 and last < VANISHING_RATIO * largest:
                note = "vanishing"
            rows.append({"layer": name, "kind": type(module).__name__, "measure": "grad norm",
                         "first": _number(values[0]), "last": _number(last), "note": note})
        for name, module in self.relus:
            values = self.dead_fractions[name]
            if not values:
                continue
            last = values[-1]
            units = self.units.get(name, 0)
            dead_units = "" if not math.isfinite(last) else f" ({round(last * units)}/{units} units)"
            rows.append({"layer": name, "kind": "ReLU", "measure": "dead units",
                         "first": _percent(values[0]), "last": _percent(last) + dead_units,
                         "note": "mostly dead" if math.isfinite(last) and last > DEAD_WARNING else ""})
        return sorted(rows, key=lambda row: self._order.get(row["layer"], 0))


def _relu_hook(monitor_ref: "weakref.ref[GradientFlowMonitor]", name: str) -> Any:
    def hook(module: Any, inputs: tuple, output: Any) -> None:
        monitor = monitor_ref()
        if monitor is not None and module.training:
            monitor._see_activation(name, output)

    return hook


def _number(x: float) -> str:
    return f"{x:.3g}" if math.isfinite(x) else str(x)


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%" if math.isfinite(x) else "n/a"


_COLUMNS = (("layer", "layer"), ("kind", "kind"), ("measure", "measure"), ("first", "first epoch"),
            ("last", "last epoch"), ("note", "note"))


def format_table(monitor: GradientFlowMonitor) -> str:
    """The diagnostics as a plain-text table (one line per layer)."""
    rows = monitor.rows()
    widths = [max(len(title), *(len(row[key]) for row in rows)) if rows else len(title) for key, title in _COLUMNS]
    lines = ["  ".join(title.ljust(w) for (_, title), w in zip(_COLUMNS, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(row[key].ljust(w) for (key, _), w in zip(_COLUMNS, widths)).rstrip())
    return "\n".join(lines)


def print_table(monitor: GradientFlowMonitor, title: str = "gradient flow", file: Any = None) -> None:
    """Print the table: a ``rich`` table when rich is installed (and ``file`` is None), plain text otherwise."""
    try:
        if file is not None:
            raise ImportError
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(f"{title} ({monitor.epochs} epochs)", file=file)
        print(format_table(monitor), file=file)
        return
    table = Table(title=f"{title} ({monitor.epochs} epochs)")
    for key, heading in _COLUMNS:
        table.add_column(heading, justify="right" if key in ("first", "last") else "left")
    for row in monitor.rows():
        style = "bold red" if row["note"] else None
        table.add_row(*(row[key] for key, _ in _COLUMNS), style=style)
    Console().print(table)


def plot_gradient_flow(monitor: GradientFlowMonitor, path: "str | os.PathLike[str]", title: Optional[str] = None) -> str:
    """Two panels to a PNG at ``path``: gradient norm per layer and dead-ReLU fraction, against epoch."""
    panels = 2 if monitor.relus else 1
    figure = _new_figure(5.5 * panels, 4.0)
    axes = figure.add_subplot(1, panels, 1)
    for name, values in monitor.grad_norms.items():
        values = np.asarray(values, dtype=np.float64)
        axes.plot(np.arange(1, len(values) + 1), values, label=name)
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.set_xlabel("epoch")
    axes.set_ylabel("gradient norm (mean over steps)")
    if all(np.all(np.asarray(v) > 0) for v in monitor.grad_norms.values() if v):
        axes.set_yscale("log")
    axes.grid(True, alpha=0.3)
    if monitor.grad_norms:
        axes.legend(title="layer")
    if monitor.relus:
        axes = figure.add_subplot(1, panels, 2)
        for name, values in monitor.dead_fractions.items():
            values = 100 * np.asarray(values, dtype=np.float64)
            axes.plot(np.arange(1, len(values) + 1), values, label=name)
        axes.xaxis.get_major_locator().set_params(integer=True)
        axes.set_xlabel("epoch")
        axes.set_ylabel("dead ReLU units (%)")
        axes.set_ylim(-2, 102)
        axes.grid(True, alpha=0.3)
        axes.legend(title="ReLU")
    if title:
        figure.suptitle(title)
    return _save(figure, path)

"""The grader's verdict: one :class:`Check` per check (and per op), gathered in a :class:`Report`.

A report prints as a text table (``str``), renders as an HTML table in Jupyter
(``_repr_html_``) and serialises to the documented JSON (``to_dict``).
"""
from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional

NAMES = ("forward", "seed", "rule", "accumulation", "order", "depth", "backward_twice", "random")
SEVERITIES = ("error", "warning", "info")
_MARK = {("error", True): "PASS", ("warning", True): "PASS", ("info", True): "info",
         ("error", False): "FAIL", ("warning", False): "WARN", ("info", False): "info"}


@dataclass
class Check:
    """One check's outcome; ``expected``/``got`` are the first wrong value or gradient."""

    name: str
    op: Optional[str]
    ok: bool
    severity: str = "error"
    expression: Optional[str] = None
    inputs: Dict[str, float] = field(default_factory=dict)
    expected: Optional[float] = None
    got: Optional[float] = None
    diagnosis: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "op": self.op, "ok": self.ok, "severity": self.severity,
                "expression": self.expression, "inputs": dict(self.inputs), "expected": _plain(self.expected),
                "got": _plain(self.got), "diagnosis": self.diagnosis}

    @property
    def mark(self) -> str:
        return _MARK[(self.severity, self.ok)]


@dataclass
class Report:
    """Everything ``taugrad check`` found about one engine."""

    class_name: str
    ops: List[str]
    checks: List[Check]
    reflected: List[str] = field(default_factory=list)
    attributes: Dict[str, Optional[str]] = field(default_factory=dict)
    source: Optional[str] = None

    @property
    def ok(self) -> bool:
        """True when no error-severity check failed (warnings and info never fail)."""
        return all(c.ok for c in self.checks if c.severity == "error")

    @property
    def failures(self) -> List[Check]:
        return [c for c in self.checks if not c.ok and c.severity == "error"]

    def find(self, name: str, op: Optional[str] = None) -> List[Check]:
        """The checks called ``name`` (and about ``op``, when given)."""
        return [c for c in self.checks if c.name == name and (op is None or c.op == op)]

    def to_dict(self) -> dict:
        return {"class": self.class_name, "ops": list(self.ops), "ok": self.ok,
                "checks": [c.to_dict() for c in self.checks]}

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    # -- text ------------------------------------------------------------------
    def header(self) -> List[str]:
        where = f" from {self.source}" if self.source else ""
        missing = [op for op in _ALL_OPS if op not in self.ops]
        attrs = ", ".join(f"{k}: {v}" for k, v in self.attributes.items() if v) or "-"
        return [
            f"taugrad check: class {self.class_name}{where}",
            f"  ops found:     {' '.join(self.ops) or '(none)'}"
            + (f"   reflected: {' '.join(_DUNDERS[op] for op in self.reflected)}" if self.reflected else ""),
            f"  not found:     {' '.join(missing) or '(none)'} (not graded)",
            f"  attributes:    {attrs}",
        ]

    def __str__(self) -> str:
        lines = self.header() + [""]
        for c in self.checks:
            op = c.op or ""
            lines.append(f"  {c.mark:<5} {c.name:<15} {op:<8} {_summary(c)}")
            if c.diagnosis and (not c.ok or c.severity != "error") and c.expression:
                lines += [f"{'':<32}{part}" for part in c.diagnosis.split("\n")]
        failed = len(self.failures)
        warned = sum(1 for c in self.checks if not c.ok and c.severity == "warning")
        lines.append("")
        if failed:
            lines.append(f"FAILED: {failed} check{'s' * (failed != 1)} failed"
                         + (f", {warned} warning{'s' * (warned != 1)}" if warned else ""))
        else:
            lines.append("OK: every check passed" + (f" ({warned} warning{'s' * (warned != 1)})" if warned else ""))
        return "\n".join(lines)

    # -- Jupyter ----------------------------------------------------------------
    def _repr_html_(self) -> str:
        e = html.escape
        colour = {"PASS": "#1a7f37", "FAIL": "#cf222e", "WARN": "#9a6700", "info": "#57606a"}
        rows = []
        for c in self.checks:
            inputs = ", ".join(f"{k}={_num(v)}" for k, v in c.inputs.items())
            rows.append(
                f"<tr><td style='color:{colour[c.mark]};font-weight:bold'>{c.mark}</td><td>{e(c.name)}</td>"
                f"<td>{e(c.op or '')}</td><td><code>{e(c.expression or '')}</code></td><td>{e(inputs)}</td>"
                f"<td>{e(_num(c.expected))}</td><td>{e(_num(c.got))}</td>"
                f"<td style='text-align:left'>{e(c.diagnosis)}</td></tr>")
        head = "".join(f"<p style='margin:0'>{e(line.strip())}</p>" for line in self.header())
        verdict = "OK: every check passed" if self.ok else f"FAILED: {len(self.failures)} check(s) failed"
        return (f"<div>{head}<table><thead><tr><th></th><th>check</th><th>op</th><th>expression</th><th>inputs</th>"
                f"<th>expected</th><th>got</th><th>diagnosis</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
                f"<p><b>{e(verdict)}</b></p></div>")

    def __repr__(self) -> str:
        return f"<Report {self.class_name}: {'ok' if self.ok else f'{len(self.failures)} failed'}>"


_DUNDERS = {"add": "__radd__", "mul": "__rmul__", "sub": "__rsub__", "div": "__rtruediv__", "pow": "__rpow__"}
_ALL_OPS = ("add", "mul", "pow", "sub", "div", "neg", "relu", "tanh", "exp", "log", "sigmoid")


def _plain(x: Optional[float]) -> Optional[float]:
    """JSON has no nan or inf: they become null (the diagnosis says what they were)."""
    return None if x is None or not math.isfinite(x) else float(x)


def _num(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.6g}"


def _summary(c: Check) -> str:
    if c.ok and c.severity == "error":
        return f"e.g. {c.expression}" if c.expression else c.diagnosis
    if not c.expression:
        return c.diagnosis
    parts = []
    if c.expression:
        at = ", ".join(f"{k}={_num(v)}" for k, v in c.inputs.items())
        parts.append(f"{c.expression}" + (f" at {at}" if at else ""))
    values = [f"{label} {_num(x)}" for label, x in (("expected", c.expected), ("got", c.got)) if x is not None]
    if values:
        parts.append(", ".join(values))
    return ": ".join(parts)

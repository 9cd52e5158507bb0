"""`taugrad gradcheck`: check the engine on random expressions (the chapter's Investigate).

Generates ``--count`` random expressions (``--seed``, ``--depth``) with reused
subexpressions at well-conditioned points, compares ``Value.backward()`` with
central finite differences for every input, prints a summary table (overall,
and per operation so a broken rule stands out) and the worst disagreement.
Exit status 0 when every gradient agrees, 1 on any mismatch.
"""
from __future__ import annotations

import sys
from collections import Counter
from typing import List, Sequence, TextIO

from taugrad.cli.common import CommandError, check_eps
from taugrad.graph import topological_order
from taugrad.learn.expr import build
from taugrad.learn.progress import rich_available
from taugrad.learn.randexpr import MAX_DEPTH, VARIABLES, check_random_expressions

MAX_COUNT = 100_000


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "gradcheck",
        help="compare analytic and finite-difference gradients on random expressions",
        description="Gradient-check random expressions against central finite differences.",
    )
    parser.add_argument("--count", type=int, default=100, help="number of expressions (default: 100)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--depth", type=int, default=3, help="nesting depth, 1 to 8 (default: 3)")
    parser.add_argument("--variables", type=int, default=3, help="number of variables, 1 to 8 (default: 3)")
    parser.add_argument("--eps", type=float, default=1e-6, help="finite-difference step (default: 1e-6)")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance (default: 1e-5)")
    parser.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance (default: 1e-3)")
    parser.add_argument("--plain", action="store_true", help="plain-text tables even when rich is installed")
    parser.set_defaults(run=run)


def run(args) -> int:
    if not 1 <= args.count <= MAX_COUNT:
        raise CommandError(f"--count must be between 1 and {MAX_COUNT:,}, got {args.count}")
    if not 1 <= args.depth <= MAX_DEPTH:
        raise CommandError(f"--depth must be between 1 and {MAX_DEPTH}, got {args.depth}")
    if not 1 <= args.variables <= len(VARIABLES):
        raise CommandError(f"--variables must be between 1 and {len(VARIABLES)}, got {args.variables}")
    check_eps(args.eps)
    for option in ("atol", "rtol"):
        value = getattr(args, option)
        if not value >= 0:
            raise CommandError(f"--{option} must be non-negative, got {value}")
    results = check_random_expressions(args.count, args.seed, args.depth, args.variables, args.eps, args.atol,
                                       args.rtol)
    use_rich = not args.plain and sys.stdout.isatty() and rich_available()
    report(results, args, sys.stdout, use_rich)
    return 0 if all(r.passed for r in results) else 1


def _operations(result) -> List[str]:
    """The engine operations in one checked expression's graph (once each)."""
    graph = build(result.expression.text, result.expression.values)
    ops = {("**k" if node._op.startswith("**") and len(node._prev) == 1 else
            "k**" if node._op.endswith("**") and len(node._prev) == 1 else node._op)
           for node in topological_order([graph.root])}
    return sorted(ops)


def report(results, args, stream: TextIO, use_rich: bool) -> None:
    """Print the summary tables, the worst disagreement and the verdict."""
    comparisons = [c for r in results for c in r.comparisons]
    failed = [r for r in results if not r.passed]
    worst = max(comparisons, key=lambda c: c.error, default=None)
    mismatched_inputs = sum(1 for r in results for c in r.comparisons
                            if not c.error <= args.atol + args.rtol * abs(c.numeric))
    nodes = [r.nodes for r in results]
    finite_errors = [c.error for c in comparisons if c.error != float("inf")]
    summary = [
        ("expressions checked", f"{len(results)}"),
        ("expressions with a mismatch", f"{len(failed)}"),
        ("gradients compared", f"{len(comparisons)}"),
        ("gradients that disagree", f"{mismatched_inputs}"),
        ("graph nodes (mean / max)", f"{sum(nodes) / len(nodes):.1f} / {max(nodes)}"),
        ("reused subexpressions", f"{sum(r.expression.reused for r in results)}"),
        ("max |analytic - numeric|", f"{max(finite_errors):.2e}" if finite_errors else "-"),
        ("max |a - n| / max(1, |n|)", f"{max(c.scaled_error for c in comparisons):.2e}" if comparisons else "-"),
    ]
    used: Counter = Counter()
    broken: Counter = Counter()
    for r in results:
        for op in _operations(r):
            used[op] += 1
            if not r.passed:
                broken[op] += 1
    by_op = [(op, str(used[op]), str(broken[op])) for op in sorted(used, key=lambda o: (-broken[o], o))]

    title = (f"taugrad gradcheck: {len(results)} random expressions (seed {args.seed}, depth {args.depth}, "
             f"up to {args.variables} variables); eps {args.eps:g}, pass if |analytic - numeric| <= "
             f"{args.atol:g} + {args.rtol:g} * |numeric|")
    print(title, file=stream)
    _print_table(stream, use_rich, "summary", ("", "value"), summary)
    _print_table(stream, use_rich, "by operation", ("operation", "expressions using it", "with a mismatch"), by_op)
    if worst is not None:
        where = next(r for r in results if worst in r.comparisons)
        at = ", ".join(f"{k}={v:g}" for k, v in worst.values.items())
        print(f"worst disagreement: expression #{where.index}, d/d{worst.name} of  {worst.expression}  at {at}",
              file=stream)
        print(f"  analytic {worst.analytic!r}  numeric {worst.numeric!r}  |difference| {worst.error:.2e}"
              f"  (reproduce: taugrad trace \"{worst.expression}\" {' '.join(f'{k}={v:g}' for k, v in worst.values.items())})",
              file=stream)
    for r in failed[:5]:
        bad = [c for c in r.comparisons if not c.error <= args.atol + args.rtol * abs(c.numeric)]
        detail = "; ".join(f"d/d{c.name}: analytic {c.analytic:.6g} vs numeric {c.numeric:.6g}" for c in bad)
        print(f"MISMATCH #{r.index}: {r.expression.text}  ({detail})", file=stream)
    if len(failed) > 5:
        print(f"... and {len(failed) - 5} more expressions with a mismatch", file=stream)
    if failed:
        print(f"FAILED: {mismatched_inputs} of {len(comparisons)} gradients disagree with finite differences",
              file=stream)
    else:
        agree = "the gradient agrees" if len(comparisons) == 1 else f"all {len(comparisons)} gradients agree"
        print(f"OK: {agree} with finite differences", file=stream)


def _print_table(stream: TextIO, use_rich: bool, title: str, header: Sequence[str], rows) -> None:
    if use_rich:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, title_justify="left")
        for i, name in enumerate(header):
            table.add_column(name, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*row)
        Console(file=stream).print(table)
        return
    widths = [max(len(str(r[i])) for r in [header] + list(rows)) for i in range(len(header))]
    print(f"{title}:", file=stream)
    for row in [header] + list(rows):
        cells = [str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        print("  " + "  ".join(cells).rstrip(), file=stream)

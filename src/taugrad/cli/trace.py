"""`taugrad trace "EXPR" NAME=VALUE ...`: backpropagation written out step by step.

Prints the forward pass in topological order, then every local rule of the
backward pass in reverse topological order with its numbers filled in, then
each input's gradient next to ``Value.backward()`` and a central finite
difference.  ``--assign`` and ``--order forward`` run the chapter's Break
experiment; ``--json`` prints the same trace as JSON.
"""
from __future__ import annotations

import argparse
import json

from taugrad.cli.common import CommandError, check_eps
from taugrad.learn.expr import ExpressionError, parse, parse_bindings
from taugrad.learn.trace import trace

EPILOG = """examples:
  taugrad trace "(a*b)+c" a=2 b=3 c=4
  taugrad trace "a*a + a" a=3 --assign          # '=' instead of '+=': a loses gradient
  taugrad trace "(a*b)+c" a=2 b=3 c=4 --order forward
  taugrad trace -- "-a*b" a=2 b=3                # '--' before an expression starting with '-'

expressions: numbers, names, + - * / **, unary -, parentheses and
relu() tanh() exp() log() sigmoid(); nothing else is accepted or executed."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "trace",
        help="show forward and backward passes of an expression step by step",
        description="Trace backpropagation through an expression, one local rule per line.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("expression", metavar="EXPR", help='the expression, e.g. "(a*b)+c"')
    parser.add_argument("bindings", metavar="NAME=VALUE", nargs="*", help="a value for each name, e.g. a=2")
    parser.add_argument("--assign", action="store_true",
                        help="Break experiment: replay the rules with '=' instead of '+='")
    parser.add_argument("--order", choices=("reverse", "forward"), default="reverse",
                        help="order of the local rules (forward = the Break experiment; default: reverse)")
    parser.add_argument("--json", action="store_true", help="print the trace as JSON")
    parser.add_argument("--eps", type=float, default=1e-6,
                        help="relative step of the finite difference (default: 1e-6)")
    parser.set_defaults(run=run)


def run(args) -> int:
    check_eps(args.eps)
    try:
        values = parse_bindings(args.bindings)
        expression = parse(args.expression)
        result = trace(expression, values, assign=args.assign, order=args.order, eps=args.eps)
    except ExpressionError as err:
        raise CommandError(str(err)) from None
    unused = [name for name in values if name not in expression.names]
    if args.json:
        data = result.to_dict()
        if unused:
            data["unused"] = unused
        print(json.dumps(data, indent=2))
    else:
        print(result.text())
        if unused:
            print(f"note: not in the expression, ignored: {', '.join(unused)}")
    return 0

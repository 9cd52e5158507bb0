"""`taugrad trace "EXPR" NAME=VALUE ...`: backpropagation written out step by step.

Prints the forward pass in topological order, then every local rule of the
backward pass in reverse topological order with its numbers filled in, then
each input's gradient next to ``Value.backward()`` and a central finite
difference.  ``--order forward`` and ``--order breadth-first`` are exercise 3
(Predict: why reverse topological order?), ``--assign`` is exercise 4 (Break:
``=`` instead of ``+=``); ``--quiz`` asks for each gradient before showing it
(answers read from stdin, one per line); ``--json`` prints the trace as JSON.
"""
from __future__ import annotations

import argparse
import json
import sys

from taugrad.cli.common import CommandError, check_eps
from taugrad.learn.expr import ExpressionError, parse, parse_bindings
from taugrad.learn.quiz import quiz
from taugrad.learn.trace import ORDERS, trace

EPILOG = """examples:
  taugrad trace "(a*b)+c" a=2 b=3 c=4
  taugrad trace "a*a + a" a=3 --assign          # '=' instead of '+=': a loses gradient
  taugrad trace "(a*b)+c" a=2 b=3 c=4 --order forward   # exercise 3: why reverse order?
  taugrad trace "a*b + a*b*c*d" a=1 b=2 c=3 d=4 --order breadth-first
  taugrad trace "(a*b)+c" a=2 b=3 c=4 --quiz     # exercise 2: work each gradient out first
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
                        help="exercise 4 (Break): replay the rules with '=' instead of '+='")
    parser.add_argument("--order", choices=ORDERS, default="reverse",
                        help="order of the local rules: reverse (default, right), forward or breadth-first "
                             "(exercise 3, Predict: two wrong orders, one obvious, one subtle)")
    parser.add_argument("--quiz", action="store_true",
                        help="ask for each gradient (one answer per line on stdin) before showing it")
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
    if args.quiz:
        if args.json:
            raise CommandError("--quiz asks questions on the terminal; it cannot be combined with --json")
        return quiz(result, sys.stdin, print)
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

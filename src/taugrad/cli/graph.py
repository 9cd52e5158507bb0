"""`taugrad graph "EXPR" NAME=VALUE ... [-o FILE]`: draw the computation graph.

Builds the expression's graph, runs ``backward()`` and draws every value (its
label, data and grad) and every operation, as ``taugrad.draw_dot`` does.
``--assign`` and ``--order`` draw the wrong gradients of exercises 4 and 3
instead; ``--contributions`` labels each edge with what its rule passes back.  The
format comes from FILE's extension: ``.dot`` needs nothing; ``.svg``, ``.png``
and ``.pdf`` need Graphviz's ``dot`` program (without it the ``.dot`` file is
written instead and the error says how to install Graphviz).  Without ``-o``
the dot text is printed.
"""
from __future__ import annotations

import os

from taugrad.cli.common import CommandError
from taugrad.learn.draw import PICTURE_FORMATS, DotGraph, GraphvizNotFound, graph_source, write_graph
from taugrad.graph import topological_order
from taugrad.learn.expr import ExpressionError, build, format_number, parse_bindings
from taugrad.learn.trace import ORDERS, contributions, label_graph, replay_grads


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "graph",
        help="draw an expression's computation graph (.dot, .svg, .png)",
        description="Draw the computation graph of an expression after backward().",
    )
    parser.add_argument("expression", metavar="EXPR", help='the expression, e.g. "tanh(a*b + c)"')
    parser.add_argument("bindings", metavar="NAME=VALUE", nargs="*", help="a value for each name, e.g. a=2")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="file to write: .dot (always works), .svg/.png/.pdf (need Graphviz); "
                             "default: print the dot text")
    parser.add_argument("--rankdir", choices=("LR", "TB", "RL", "BT"), default="LR",
                        help="layout direction (default: LR, left to right)")
    parser.add_argument("--no-backward", action="store_true", help="draw before backward() (all grads 0)")
    parser.add_argument("--assign", action="store_true",
                        help="exercise 4 (Break): draw the gradients the rules give with '=' instead of '+='")
    parser.add_argument("--order", choices=ORDERS, default="reverse",
                        help="exercise 3 (Predict): draw the gradients of rules run in this order (default: reverse)")
    parser.add_argument("--contributions", action="store_true",
                        help="label each edge with the gradient its rule adds to the parent")
    parser.set_defaults(run=run)


def run(args) -> int:
    try:
        graph = build(args.expression, parse_bindings(args.bindings))
    except ExpressionError as err:
        raise CommandError(str(err)) from None
    label_graph(graph)
    broken = args.assign or args.order != "reverse"
    if args.no_backward and (broken or args.contributions):
        raise CommandError("--no-backward draws no gradients: it cannot be combined with --assign, --order or "
                           "--contributions")
    grads = {}
    if broken:  # the replayed (wrong) gradients, written into the nodes that are drawn
        grads = replay_grads(graph, assign=args.assign, order=args.order)
        for node in topological_order([graph.root]) + list(graph.inputs.values()):
            node.grad = grads.get(id(node), 0.0)
    elif not args.no_backward:
        graph.root.backward()
    labels = None
    if args.contributions:
        nodes = topological_order([graph.root]) + list(graph.inputs.values())
        shares = contributions(graph.root, grads or {id(n): n.grad for n in nodes})
        labels = {key: [f"+{format_number(x)}" if not args.assign else f"={format_number(x)}" for x in amounts]
                  for key, amounts in shares.items()}
    drawing = DotGraph(graph_source(graph.root, args.rankdir, labels))
    if not args.output:
        print(drawing.source, end="")
        return 0

    path = args.output
    stem, extension = os.path.splitext(path)
    fmt = extension.lower().lstrip(".")
    if fmt in ("", "gv"):
        fmt = "dot"
    if fmt != "dot" and fmt not in PICTURE_FORMATS:
        raise CommandError(f"cannot write {extension!r} files; use .dot, .svg, .png or .pdf")
    try:
        write_graph(drawing, path, fmt)
    except GraphvizNotFound as err:
        dot_path = stem + ".dot"
        write_graph(drawing, dot_path, "dot")
        raise CommandError(f"wrote {dot_path} instead of {path}: {err}") from None
    except (OSError, RuntimeError) as err:
        raise CommandError(f"cannot write {path}: {err}") from None
    count = len(graph.inputs)
    print(f"wrote {path} ({count} input{'' if count == 1 else 's'}, root {graph.root.label} = {graph.root.data:g})")
    return 0

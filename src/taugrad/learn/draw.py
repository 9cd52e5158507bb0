"""Draw a computation graph, as in the micrograd lecture: ``draw_dot(root)``.

Every value is a box ``{ label | data ... | grad ... }`` (a ``Tensor`` shows its
shape and dtype too); every operation is a separate small node (``+``, ``*``,
``tanh`` ...) with arrows from its inputs and to its result.

Three levels of dependency, each optional:

* the ``.dot`` text (:attr:`source`, :func:`write_graph` to ``x.dot``) needs
  nothing at all;
* ``draw_dot`` returns a real ``graphviz.Digraph`` (a subclass of it) when the
  ``graphviz`` Python package is installed, else a small :class:`DotGraph` with
  the same ``source`` / ``render`` / ``pipe`` / ``save`` methods;
* drawing pictures (``.svg``, ``.png``, Jupyter's inline display) needs the
  Graphviz ``dot`` program; without it you get :class:`GraphvizNotFound`, whose
  message says how to install it (in Jupyter the cell shows the dot text).

Nodes are read duck-typed: anything with ``_prev`` (its parents), ``data`` and
``grad`` is drawn, so ``Value`` and ``Tensor`` graphs both work.
"""
from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

INSTALL_HINT = (
    "get it with 'apt-get install graphviz' (Debian/Ubuntu), 'brew install graphviz' (macOS) "
    "or 'conda install graphviz' ('pip install graphviz' is only the Python package, used for Jupyter display)"
)

RANKDIRS = ("LR", "TB", "RL", "BT")
PICTURE_FORMATS = ("svg", "png", "pdf", "jpg", "jpeg", "gif")
FORMATS = ("dot",) + PICTURE_FORMATS


class GraphvizNotFound(RuntimeError):
    """Drawing a picture needs Graphviz's ``dot`` program, which is not on PATH."""

    def __init__(self, what: str = "drawing the graph"):
        super().__init__(f"{what} needs Graphviz's 'dot' program, which is not on PATH; {INSTALL_HINT}")


# ---------------------------------------------------------------------------
# reading the graph
# ---------------------------------------------------------------------------


def _collect(root: Any) -> List[Any]:
    """Every node reachable from ``root`` (leaves included), root first, each once.

    Iterative, so a graph deeper than Python's recursion limit is fine.
    """
    seen = {id(root)}
    order = [root]
    stack = [root]
    while stack:
        node = stack.pop()
        for parent in getattr(node, "_prev", ()) or ():
            if id(parent) not in seen:
                seen.add(id(parent))
                order.append(parent)
                stack.append(parent)
    return order


def _op_name(node: Any) -> str:
    """The operation that made ``node`` ('' for a leaf), whatever the engine calls it."""
    for attribute in ("_op", "op", "_op_name"):
        op = getattr(node, attribute, None)
        if isinstance(op, str):
            return op
    ctx = getattr(node, "_ctx", None)  # engines that keep a context object for the op
    name = getattr(ctx, "name", None) or getattr(type(ctx), "__name__", None) if ctx is not None else None
    return name if isinstance(name, str) else ""


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and getattr(x, "shape", ()) != ()


def _summary(x: Any) -> str:
    """A short text for data or grad: a number, a few entries, or a range."""
    if x is None:
        return "None"
    inner = getattr(x, "_data", None)  # a Tensor gradient: look at its array
    if inner is not None and hasattr(inner, "dtype") and not hasattr(x, "tobytes"):
        x = inner
    if _is_array(x):
        array = np.asarray(x)
        if not (np.issubdtype(array.dtype, np.number) or array.dtype == bool) or np.iscomplexobj(array):
            return "..."
        if array.size <= 4:
            return " ".join(f"{float(v):.4g}" for v in array.ravel())
        return f"{float(np.min(array)):.4g} .. {float(np.max(array)):.4g}"
    try:
        return _number(float(x))
    except (TypeError, ValueError):
        return str(x)


def _number(x: float) -> str:
    """micrograd's ``%.4f`` for ordinary magnitudes; ``%.4g`` where ``%.4f`` would print
    300 digits (1e300) or hide the value (1e-300 as 0.0000)."""
    if x == 0 or not math.isfinite(x) or 1e-3 <= abs(x) < 1e6:
        return f"{x:.4f}"
    return f"{x:.4g}"


def _node_label(node: Any) -> str:
    """The record label ``{ label | shape dtype | data ... | grad ... }``."""
    fields = []
    label = getattr(node, "label", "") or getattr(node, "name", "") or ""
    if isinstance(label, str) and label:
        fields.append(_escape(label))
    data = getattr(node, "_data", None)  # a Tensor's array
    if data is None:
        data = getattr(node, "data", None)  # a Value's number
    if _is_array(data) or hasattr(data, "dtype"):
        shape = tuple(getattr(data, "shape", ()))
        fields.append(_escape(f"shape {shape} {data.dtype}"))
    fields.append(_escape(f"data {_summary(data)}"))
    fields.append(_escape(f"grad {_summary(getattr(node, 'grad', None))}"))
    return "{ " + " | ".join(fields) + " }"


_RECORD_SPECIAL = re.compile(r'([\\{}|<>"])')


def _escape(text: str, limit: int = 60) -> str:
    """Make ``text`` safe inside a quoted record label: one line, specials escaped."""
    text = re.sub(r"[\x00-\x1f\x7f]+", " ", text)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return _RECORD_SPECIAL.sub(r"\\\1", text)


def _records(root: Any, edge_labels: Optional[Dict[Tuple[int, int], List[str]]] = None
             ) -> Tuple[List[Tuple[str, Dict[str, str]]], List[Tuple[str, str, Dict[str, str]]]]:
    """Nodes ``(name, attributes)`` and edges ``(tail, head, attributes)`` of the drawing.

    ``edge_labels[(id(parent), id(node))]`` labels the edges from ``parent`` into
    ``node``'s operation, one label per time ``parent`` is an operand (e.g. the
    gradient each carries back).
    """
    nodes: List[Tuple[str, Dict[str, str]]] = []
    edges: List[Tuple[str, str, Dict[str, str]]] = []
    edge_labels = edge_labels or {}
    ids: Dict[int, str] = {}
    order = _collect(root)
    for index, node in enumerate(order):
        ids[id(node)] = f"n{index}"
    for node in order:
        name = ids[id(node)]
        nodes.append((name, {"label": _node_label(node), "shape": "record"}))
        parents = getattr(node, "_prev", ()) or ()
        op = _op_name(node)
        if op == "released" and not parents:
            # a Tensor whose backward() freed the graph (PyTorch's behaviour): say so instead of a bare node
            op = "graph freed by backward(); use backward(retain_graph=True) to draw it"
        if op:
            op_id = name + "_op"
            nodes.append((op_id, {"label": _escape(op, limit=100), "shape": "ellipse"}))
            edges.append((op_id, name, {}))
            target = op_id
        else:
            target = name
        seen: Dict[int, int] = {}
        for parent in parents:  # a * a draws two edges from a, each with its own share
            occurrence = seen[id(parent)] = seen.get(id(parent), -1) + 1
            labels = edge_labels.get((id(parent), id(node))) or []
            label = labels[occurrence] if occurrence < len(labels) else None
            edges.append((ids[id(parent)], target, {"label": _escape(label)} if label else {}))
    return nodes, edges


def graph_source(root: Any, rankdir: str = "LR",
                 edge_labels: Optional[Dict[Tuple[int, int], List[str]]] = None) -> str:
    """The graph in the dot language (no dependency); ``edge_labels`` as for :func:`_records`."""
    _check_rankdir(rankdir)
    nodes, edges = _records(root, edge_labels)
    lines = ["digraph {", f"\tgraph [rankdir={rankdir}]"]
    for name, attributes in nodes:
        attrs = " ".join(f'{key}="{value}"' for key, value in attributes.items())
        lines.append(f"\t{name} [{attrs}]")
    for tail, head, attributes in edges:
        attrs = " ".join(f'{key}="{value}"' for key, value in attributes.items())
        lines.append(f"\t{tail} -> {head}" + (f" [{attrs}]" if attrs else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _check_rankdir(rankdir: str) -> None:
    if rankdir not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, got {rankdir!r}")


def _check_format(fmt: str) -> str:
    fmt = str(fmt).lower().lstrip(".")
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return fmt


# ---------------------------------------------------------------------------
# rendering with the dot program
# ---------------------------------------------------------------------------


def dot_program() -> Optional[str]:
    """Path of Graphviz's ``dot`` program, or None when it is not installed."""
    return shutil.which("dot")


def render_source(source: str, fmt: str) -> bytes:
    """Run ``dot -T<fmt>`` on ``source`` and return the picture's bytes."""
    fmt = _check_format(fmt)
    if fmt == "dot":
        return source.encode("utf-8")
    program = dot_program()
    if program is None:
        raise GraphvizNotFound(f"drawing .{fmt}")
    done = subprocess.run([program, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True, check=False)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"dot failed (exit {done.returncode}): {message[0] if message else 'no message'}")
    return done.stdout


def write_graph(graph: Any, path: str, fmt: Optional[str] = None) -> str:
    """Write ``graph`` (anything with ``.source``) to ``path``; the format comes
    from ``fmt`` or the file extension (``.dot``/``.gv`` need no Graphviz).
    Returns the path written."""
    if fmt is None:
        extension = os.path.splitext(path)[1].lower().lstrip(".")
        fmt = "dot" if extension in ("dot", "gv", "") else extension
    data = render_source(graph.source, fmt)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


class _Display:
    """Jupyter display and file output shared by both graph classes."""

    source: str

    def _repr_svg_(self) -> Optional[str]:
        """SVG for Jupyter, or None (Jupyter then shows the text form) without ``dot``."""
        if dot_program() is None:
            return None
        return render_source(self.source, "svg").decode("utf-8")

    def _repr_mimebundle_(self, include: Optional[Iterable[str]] = None,
                          exclude: Optional[Iterable[str]] = None, **_: Any) -> Dict[str, Any]:
        """Jupyter's rich display: the SVG when ``dot`` is installed, else the
        dot text with a line saying how to get pictures."""
        if dot_program() is not None:
            bundle: Dict[str, Any] = {"image/svg+xml": self._repr_svg_()}
        else:
            bundle = {"text/plain": f"(no picture: Graphviz's 'dot' program is not installed; {INSTALL_HINT})\n"
                                    f"{self.source}"}
        wanted = set(include) if include is not None else set(bundle)
        wanted -= set(exclude or ())
        return {mime: data for mime, data in bundle.items() if mime in wanted}

    def write(self, path: str, fmt: Optional[str] = None) -> str:
        """Write the graph to ``path`` (format from ``fmt`` or the extension)."""
        return write_graph(self, path, fmt)


class DotGraph(_Display):
    """The dot text of a graph, with the rendering methods of ``graphviz.Digraph``
    that matter here; used when the ``graphviz`` package is not installed."""

    def __init__(self, source: str, format: str = "svg"):  # noqa: A002 - graphviz's name
        self.source = source
        self.format = _check_format(format)

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"<DotGraph: {self.source.count(chr(10)) - 3} lines of dot; format={self.format!r}>"

    def pipe(self, format: Optional[str] = None, encoding: Optional[str] = None):  # noqa: A002
        """The rendered picture as bytes (or text with ``encoding``)."""
        data = render_source(self.source, format or self.format)
        return data.decode(encoding) if encoding else data

    def save(self, filename: str) -> str:
        """Write the dot text to ``filename`` (no Graphviz needed)."""
        return write_graph(self, filename, "dot")

    def render(self, filename: str = "graph", format: Optional[str] = None) -> str:  # noqa: A002
        """Write ``filename.<format>`` like ``graphviz.Digraph.render``; returns its path."""
        fmt = _check_format(format or self.format)
        path = filename if filename.endswith("." + fmt) else f"{filename}.{fmt}"
        return write_graph(self, path, fmt)


_DIGRAPH_CLASS: Any = None


def _digraph_class() -> Any:
    """A ``graphviz.Digraph`` subclass whose missing-``dot`` errors say how to
    install it, or None when the ``graphviz`` package is not installed."""
    global _DIGRAPH_CLASS
    if _DIGRAPH_CLASS is None:
        try:
            import graphviz
        except ImportError:
            return None

        class Digraph(_Display, graphviz.Digraph):
            """``graphviz.Digraph`` with install hints and a text fallback in Jupyter."""

            def pipe(self, *args: Any, **kwargs: Any):
                try:
                    return super().pipe(*args, **kwargs)
                except graphviz.ExecutableNotFound:
                    raise GraphvizNotFound() from None

            def render(self, *args: Any, **kwargs: Any):
                try:
                    return super().render(*args, **kwargs)
                except graphviz.ExecutableNotFound:
                    raise GraphvizNotFound() from None

        _DIGRAPH_CLASS = Digraph
    return _DIGRAPH_CLASS


def draw_dot(root: Any, format: str = "svg", rankdir: str = "LR") -> Any:  # noqa: A002
    """Draw the graph that produced ``root`` (call ``root.backward()`` first to see grads).

    Returns a ``graphviz.Digraph`` (subclass) when the ``graphviz`` package is
    installed, else a :class:`DotGraph`.  Both have ``.source`` (the dot text),
    ``.render(filename)``, ``.pipe()`` and display inline in Jupyter; pictures
    need Graphviz's ``dot`` program (:class:`GraphvizNotFound` says how to get it).
    ``rankdir='LR'`` draws left to right, ``'TB'`` top to bottom.
    A ``Tensor``'s ``backward()`` frees the graph as in PyTorch: call
    ``backward(retain_graph=True)`` to draw a tensor graph with its gradients.
    """
    fmt = _check_format(format)
    _check_rankdir(rankdir)
    digraph_class = _digraph_class()
    if digraph_class is None:
        return DotGraph(graph_source(root, rankdir), fmt)
    nodes, edges = _records(root)
    graph = digraph_class(format=fmt if fmt != "dot" else "svg", graph_attr={"rankdir": rankdir})
    for name, attributes in nodes:
        graph.node(name, **attributes)
    for tail, head, attributes in edges:
        graph.edge(tail, head, **attributes)
    return graph


__all__ = [
    "DotGraph",
    "GraphvizNotFound",
    "INSTALL_HINT",
    "dot_program",
    "draw_dot",
    "graph_source",
    "render_source",
    "write_graph",
]

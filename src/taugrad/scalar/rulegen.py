"""The two kinds of derivative definition: one scalar op, and one fused neuron.

A definition holds each parent's gradient once, as a :mod:`formula
<taugrad.scalar.formula>`, and builds from it, at import:

* ``rule(out)``: the first-order local rule ``Value.backward()`` runs, adding
  floats into the parents' ``.grad``: straight-line code generated from the
  formula and checked in as :mod:`taugrad.scalar.rules` (``python -m
  taugrad.scalar.write_rules`` rewrites it), so it has a real file and line;
* ``graph(out, g)``: the ``create_graph=True`` rule, returning
  ``((parent, dL/d parent term), ...)`` as differentiable ``Value``s;
* ``contributions(out, g)``: the floats ``rule`` would add (``None`` where a
  mask passes nothing), computed by the same generated expressions;
* ``explain(node, g, text, number)``: the trace's lines, formula and numbers.

``rule.derivative`` points back to the definition, so a node's rule tells the
trace how to write itself out.
"""
from __future__ import annotations

import ast
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from taugrad.scalar import formula as f
from taugrad.scalar import rules
from taugrad.scalar.formula import Term

Env = Dict[str, Tuple[str, float, bool]]


def _term(spec: Union[str, Term]) -> Term:
    return Term(spec) if isinstance(spec, str) else spec


class Derivative:
    """The local derivative of one op ``out = op(operands)``, each parent's term written once.

    ``Derivative("mul_rule", "out = a * b", a="b * g", b="a * g")``: the keyword
    order is the operand order of ``out._prev``; ``constant`` names the op's
    number (``out._aux``) for ``a ** k`` and ``k ** b``.
    """

    def __init__(self, rule_name: str, forward: str, doc: str, constant: Optional[str] = None,
                 **terms: Union[str, Term]):
        self.rule_name, self.forward, self.constant = rule_name, forward, constant
        self.operands: Tuple[str, ...] = tuple(terms)
        self.terms: Tuple[Term, ...] = tuple(_term(t) for t in terms.values())
        names = [*self.operands, "out", "g", *([constant] if constant else [])]
        self.trees = [f.parse(t.formula, names) for t in self.terms]
        self.none_where = [None if t.none_where is None else f.parse(t.none_where, names, True) for t in self.terms]
        self.zero_where = [None if t.zero_where is None else f.parse(t.zero_where, names, True) for t in self.terms]
        self.__doc__ = f"{forward}:  " + "; ".join(f"d{p} += {t.formula}" for p, t in zip(self.operands, self.terms)) \
            + "\n\n" + doc.strip()
        self.rule = self._compile_rule()
        self.graph = self._compile_graph()
        self.contributions = self._compile_contributions()
        self.rule.derivative = self

    def term(self, operand: str) -> ast.expr:
        """The parsed formula of ``operand``'s term (to reuse it in another definition)."""
        return self.trees[self.operands.index(operand)]

    # -- generated code ----------------------------------------------------
    def _float_names(self) -> Tuple[Dict[str, Tuple[str, bool]], List[str]]:
        """Names for float code: data read once into a local where it is used twice."""
        uses: Counter = Counter()
        for tree in [*self.trees, *self.none_where, *self.zero_where]:
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.BinOp) and f._is_square(node) and isinstance(node.left, ast.Name):
                    uses[node.left.id] += 1  # x ** 2 reads x twice (x * x)
                if isinstance(node, ast.Name):
                    uses[node.id] += 1
        names: Dict[str, Tuple[str, bool]] = {"g": ("g", False)}
        setup = []
        if self.constant:
            names[self.constant] = (self.constant, True)
            setup.append(f"    {self.constant} = out._aux")
        for n in (*self.operands, "out"):
            if uses[n] >= 2:
                names[n] = (f"y_{n}", False)
                setup.append(f"    y_{n} = {n}.data")
            else:
                names[n] = (f"{n}.data", False)
        return names, setup

    def _unpack(self) -> str:
        return f"    {', '.join(self.operands)}{',' if len(self.operands) == 1 else ''} = out._prev"

    def rule_lines(self) -> List[str]:
        """The first-order rule's source, as checked in to :mod:`taugrad.scalar.rules` (without its docstring)."""
        names, setup = self._float_names()
        lines = [f"def {self.rule_name}(out):", self._unpack(), "    g = out.grad", *setup]
        for p, tree, none, zero in zip(self.operands, self.trees, self.none_where, self.zero_where):
            expr = _bare(f.source(tree, names, graph=False)[0])
            if none is not None:
                lines += [f"    if not {f.source(none, names, False)[0]}:", f"        {p}.grad += {expr}"]
            elif zero is not None:
                lines.append(f"    {p}.grad += g * 0.0 if {f.source(zero, names, False)[0]} else {expr}")
            else:
                lines.append(f"    {p}.grad += {expr}")
        return lines

    def _compile_rule(self) -> Callable:
        return _checked_in(self.rule_name, self.rule_lines(), self.__doc__)

    def _compile_contributions(self) -> Callable:
        names, setup = self._float_names()
        lines = ["def contributions(out, g):", self._unpack(), *setup]
        parts = []
        for tree, none, zero in zip(self.trees, self.none_where, self.zero_where):
            expr = f.source(tree, names, graph=False)[0]
            if none is not None:
                expr = f"None if {f.source(none, names, False)[0]} else {expr}"
            elif zero is not None:
                expr = f"g * 0.0 if {f.source(zero, names, False)[0]} else {expr}"
            parts.append(f"({expr})")
        lines.append(f"    return ({', '.join(parts)},)")
        return f.compile_function("contributions", lines, f"{self.rule_name} contributions")

    def _compile_graph(self) -> Callable:
        data = {n: (f"{n}.data", False) for n in (*self.operands, "out")}
        values = {n: (n, False) for n in (*self.operands, "out", "g")}
        setup = []
        if self.constant:
            data[self.constant] = values[self.constant] = (self.constant, True)
            setup.append(f"    {self.constant} = out._aux")
        lines = ["def graph(out, g):", self._unpack(), *setup, "    terms = []"]
        for p, tree, none, zero in zip(self.operands, self.trees, self.none_where, self.zero_where):
            expr = f.source(tree, values, graph=True)[0]
            if none is not None:
                lines += [f"    if not {f.source(none, data, False)[0]}:", f"        terms.append(({p}, {expr}))"]
            elif zero is not None:
                lines.append(f"    terms.append(({p}, g * 0.0 if {f.source(zero, data, False)[0]} else {expr}))")
            else:
                lines.append(f"    terms.append(({p}, {expr}))")
        lines.append("    return tuple(terms)")
        return f.compile_function("graph", lines, f"{self.rule_name} graph")

    # -- the trace ---------------------------------------------------------
    def _env(self, node: Any, g: float, text: Callable[[Any], str], number: Callable[[float], str]) -> Env:
        env: Env = {n: (text(p), p.data, False) for n, p in zip(self.operands, node._prev)}
        env["out"] = (text(node), node.data, False)
        env["g"] = ("g", g, False)
        if self.constant:
            env[self.constant] = (number(node._aux), node._aux, True)
        return env

    def explain(self, node: Any, g: float, text: Callable[[Any], str], number: Callable[[float], str]) -> List[f.Line]:
        """The trace's lines ``(parent, formula, numbers, contribution)`` for ``node`` with upstream ``g``.

        ``text(v)`` writes a node's data in a formula (``'b.data'``, or ``'2'`` for
        a constant); ``number(x)`` writes a number.
        """
        env = self._env(node, g, text, number)
        added = self.contributions(node, g)
        return [f.explain_term(p, tree, none, zero, c, env, number)
                for p, tree, none, zero, c in zip(node._prev, self.trees, self.none_where, self.zero_where, added)]


class NeuronDerivative:
    """A fused neuron ``out = act(s)``, ``s = b + sum_i w_i * x_i``, by the chain rule.

    ``g_s = d out/d s * g`` is the activation's own term (``None``: linear,
    ``g_s = g``) with ``out`` the neuron's output; then ``b``, each ``w_i`` and
    each ``x_i`` get the terms of ``s``'s sum and products with ``g := g_s``.
    Parents are ``(b, w_0 .. w_{n-1}, x_0 .. x_{n-1})``.
    """

    def __init__(self, rule_name: str, activation: Optional[Derivative], bias: ast.expr, weight: ast.expr,
                 input: ast.expr, doc: str):  # noqa: A002 - the neuron's input x
        self.rule_name, self.activation = rule_name, activation
        self.bias, self.weight, self.input = bias, weight, input
        if activation is not None:
            (term,) = activation.terms
            if term.zero_where is not None or {n.id for n in ast.walk(activation.trees[0])
                                               if isinstance(n, ast.Name)} - {"out", "g"}:
                raise ValueError(f"{rule_name}: a fused activation's term may use only out and g, and no zero_where")
            g_s = activation.trees[0]  # None when the activation passes g unchanged (relu)
            self.g_s: Optional[ast.expr] = None if isinstance(g_s, ast.Name) and g_s.id == "g" else g_s
            self.gate: Optional[ast.expr] = activation.none_where[0]
        else:
            self.g_s = self.gate = None
        self.__doc__ = doc.strip()
        self.rule = self._compile(graph=False)
        self.graph = self._compile(graph=True)
        self.contributions = self._compile(graph=False, contributions=True)
        self.rule.derivative = self

    def rule_lines(self) -> List[str]:
        """The first-order rule's source, as checked in to :mod:`taugrad.scalar.rules` (without its docstring)."""
        return self._lines(graph=False)

    def _compile(self, graph: bool, contributions: bool = False) -> Callable:
        name = "graph" if graph else ("contributions" if contributions else self.rule_name)
        lines = self._lines(graph, contributions)
        if name == self.rule_name:
            return _checked_in(self.rule_name, lines, self.__doc__)
        function = f.compile_function(name, lines, f"{self.rule_name} {name}")
        function.__doc__ = self.__doc__
        return function

    def _lines(self, graph: bool, contributions: bool = False) -> List[str]:
        if graph:
            names = {"out": ("out", False), "g": ("g", False), "b": ("b", False), "w": ("w", False), "x": ("x", False)}
        else:
            names = {"out": ("out.data", False), "g": ("g", False), "b": ("b.data", False),
                     "w": ("w.data", False), "x": ("x.data", False)}
        data = {"out": ("out.data", False)}
        name = "graph" if graph else ("contributions" if contributions else self.rule_name)
        lines = [f"def {name}(out{', g' if graph or contributions else ''}):"]
        if not (graph or contributions):
            lines.append("    g = out.grad")
        if self.gate is not None:
            lines.append(f"    if {f.source(self.gate, data, False)[0]}:")
            lines.append("        return ()" if graph else ("        return None" if contributions else "        return"))
        if self.g_s is not None:
            lines.append(f"    g = {f.source(self.g_s, names, graph)[0]}")
        lines += ["    prev = out._prev", "    n = len(prev) >> 1", "    b = prev[0]"]
        bias, weight, inp = (f.source(t, names, graph)[0] for t in (self.bias, self.weight, self.input))
        loop = "    for w, x in zip(prev[1 : n + 1], prev[n + 1 :]):"
        if graph or contributions:
            pair = ("(w, {}), (x, {})" if graph else "{}, {}").format(weight, inp)
            lines += [f"    terms = [{'(b, ' + bias + ')' if graph else bias}]", loop, f"        terms.extend(({pair}))"]
            lines.append("    return tuple(terms)")
        else:
            lines += [f"    b.grad += {_bare(bias)}", loop, f"        w.grad += {_bare(weight)}",
                      f"        x.grad += {_bare(inp)}"]
        return lines

    def explain(self, node: Any, g: float, text: Callable[[Any], str], number: Callable[[float], str]) -> List[f.Line]:
        """The trace's lines for a fused neuron: bias, then each weight and input, as its rule runs."""
        prev = node._prev
        n = len(prev) >> 1
        added = self.contributions(node, g)
        order = [(prev[0], "b", self.bias, {"b": prev[0]})]
        for w, x in zip(prev[1 : n + 1], prev[n + 1 :]):
            order += [(w, "w", self.weight, {"w": w, "x": x}), (x, "x", self.input, {"w": w, "x": x})]
        lines = []
        for i, (parent, _, tree, operands) in enumerate(order):
            env: Env = {k: (text(v), v.data, False) for k, v in operands.items()}
            env["out"], env["g"] = (text(node), node.data, False), ("g", g, False)
            if self.g_s is not None:
                tree = f.substitute(tree, "g", self.g_s)
            lines.append(f.explain_term(parent, tree, self.gate, None, None if added is None else added[i], env, number))
        return lines


def _bare(expr: str) -> str:
    """``expr`` without one pair of parentheses around all of it: ``a.grad += b.data * g``, as the chapter writes it."""
    if not (expr.startswith("(") and expr.endswith(")")):
        return expr
    depth = 0
    for i, ch in enumerate(expr):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and i < len(expr) - 1:
            return expr  # the first parenthesis closes early: (a) * (b)
    return expr[1:-1]


def with_docstring(lines: List[str], doc: str) -> List[str]:
    """A generated function's lines with ``doc`` as its docstring, as written to :mod:`taugrad.scalar.rules`."""
    text = doc.strip().splitlines()
    body = [f'    """{text[0]}'] + [f"    {line.strip()}" if line.strip() else "" for line in text[1:]]
    body = [body[0] + '"""'] if len(text) == 1 else body + ['    """']
    return [lines[0], *body, *lines[1:]]


def _checked_in(name: str, lines: List[str], doc: str) -> Callable:
    """The rule ``name`` from the checked-in :mod:`taugrad.scalar.rules`: a real file a debugger can step through.

    The definition's own code is compiled too, and the checked-in function is
    used only when it is the same code: a definition that differs from the
    file (a new or changed derivative before the file is regenerated, a test's
    deliberately wrong one) runs as defined.  ``tests/scalar/test_rules_file.py``
    fails whenever the file and the definitions differ.
    """
    compiled = f.compile_function(name, with_docstring(lines, doc), name)
    written = getattr(rules, name, None)
    if written is not None and _same_code(written.__code__, compiled.__code__):
        return written
    return compiled


def _same_code(a, b) -> bool:
    return (a.co_code, a.co_consts, a.co_names, a.co_varnames) == (b.co_code, b.co_consts, b.co_names, b.co_varnames)


def neuron(rule_name: str, activation: Optional[Derivative], add: Derivative, mul: Derivative, doc: str) -> NeuronDerivative:
    """A fused neuron whose sum and products reuse ``add``'s and ``mul``'s terms."""
    as_neuron = {"a": "w", "b": "x"}
    return NeuronDerivative(rule_name, activation, bias=add.term("a"), weight=f.rename(mul.term("a"), as_neuron),
                            input=f.rename(mul.term("b"), as_neuron), doc=doc)


__all__ = ["Derivative", "NeuronDerivative", "Term", "neuron"]

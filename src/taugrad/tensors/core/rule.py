"""The rule record: what the backward pass knows about one local derivative rule.

A rule computes, for an op ``out = f(a, b, ...)``, the gradients of its inputs
from the gradient ``g`` of its output (the chain rule's local step)::

    rule.backward(g, out, ins, node) -> (grad_a, grad_b, ...)

``node`` is the output Tensor (its ``_ctx`` holds the op's constants, its
``_prev`` the input Tensors).  The same function serves two modes:

* first order (the fast path): ``g``, ``out`` and ``ins`` are raw arrays;
* ``create_graph=True``: they are the Tensors themselves, so the rule's
  arithmetic records a graph that can be differentiated again.

Rules therefore use only what arrays and Tensors share: operators, array-style
methods, and :mod:`taugrad.tensors.ops.anyarray` for functions.

This module also holds the op registry (:func:`register`): every public tensor
op is listed once, with the ``Tensor`` methods and operators it provides, and
:mod:`taugrad.tensors.methods` binds them.  It imports nothing from the engine
or the ops, so every layer above can use it.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

#: ``gives`` values: what a rule's first-order gradients are (see :class:`Rule`)
NEW = "new"
G_OR_NEW = "g or new"


class Rule:
    """One local derivative rule and the facts the backward pass needs about it.

    * ``op`` -- the op's name, for ``grad_fn`` and error messages;
    * ``backward(g, out, ins, node)`` -- the rule itself (see the module docstring);
    * ``reads`` -- which saved values the rule reads: parent indices and/or
      ``'out'``, or a function ``node -> such a tuple``.  Only these are
      checked for in-place changes before the rule runs;
    * ``twice`` -- False if the rule cannot run on Tensors (``create_graph``);
    * ``gives`` -- what the first-order rule returns, so the pass knows which
      gradients it alone holds: :data:`NEW` (arrays the rule made, kept nowhere
      else), :data:`G_OR_NEW` (``g`` itself or such new arrays), or None
      (anything, e.g. views of ``g``);
    * ``overwrite`` -- optional variant of ``backward`` that may write into
      ``g`` when the pass owns it (ReLU masks ``g`` in place, as a
      hand-written backward does); it returns ``g`` once or new arrays;
    * ``name_of`` -- optional ``node -> name`` when one rule serves several
      names (a custom Function reports the user's class);
    * ``shows`` -- optional ``node -> (name, inputs)``: the node as PyTorch's
      ``grad_fn`` shows the same code, where that is not one node named after
      the op (``linear`` is PyTorch's ``addmm`` of a ``t``).  ``inputs`` lists,
      in PyTorch's order, parent indices, None (an input PyTorch records but
      that takes no gradient) and nested ``(name, inputs)`` for PyTorch's
      inner nodes.  After ``backward()`` freed the node it has no parents and
      ``shows`` gives what the output alone tells.
    """

    __slots__ = ("op", "backward", "reads", "twice", "gives", "overwrite", "name_of", "shows")

    def __init__(self, op: str, backward: Callable, reads=(), twice: bool = True, gives: Optional[str] = None,
                 overwrite: Optional[Callable] = None, name_of: Optional[Callable] = None,
                 shows: Optional[Callable] = None):
        self.op = op
        self.backward = backward
        self.reads = reads if callable(reads) else tuple(reads)
        self.twice = twice
        self.gives = gives
        self.overwrite = overwrite
        self.name_of = name_of
        self.shows = shows

    def __repr__(self) -> str:
        return f"<rule {self.op}>"

    def maths(self) -> str:
        """The derivative the rule implements, as written in its docstring."""
        return self.backward.__doc__ or ""


def rule(op: str, reads=(), twice: bool = True, gives: Optional[str] = None, name_of: Optional[Callable] = None,
         shows: Optional[Callable] = None):
    """Decorator: make a :class:`Rule` of the decorated ``backward`` function."""

    def make_rule(backward: Callable) -> Rule:
        return Rule(op, backward, reads, twice, gives, name_of=name_of, shows=shows)

    return make_rule


def shown_as(name: str) -> Callable:
    """A ``shows`` for an op that PyTorch records as one node of another name, with the same inputs."""

    def shows(node) -> tuple:
        return name, tuple(range(len(node._prev)))

    return shows


def overwriting(base: Rule):
    """Decorator: the decorated function is ``base``'s in-place variant (see ``Rule.overwrite``)."""

    def attach(fn: Callable) -> Callable:
        base.overwrite = fn
        return fn

    return attach


def _never_called(g, out, ins, node):  # pragma: no cover - released nodes are caught before their rule runs
    raise AssertionError("the rule of a released node ran")


#: the rule of an interior node after ``backward()`` freed its graph
RELEASED = Rule("released", _never_called)


# ---------------------------------------------------------------------------
# the op registry
# ---------------------------------------------------------------------------


class OpEntry:
    """A public tensor op: its name, forward function and the Tensor attributes it provides."""

    __slots__ = ("name", "forward", "methods", "properties")

    def __init__(self, name: str, forward: Callable, methods: Tuple[str, ...], properties: Tuple[str, ...]):
        self.name = name
        self.forward = forward
        self.methods = methods
        self.properties = properties

    def __repr__(self) -> str:
        return f"<op {self.name}>"


#: op name -> entry, in registration order
OPS: Dict[str, OpEntry] = {}


def register(name: str, methods: Tuple[str, ...] = (), properties: Tuple[str, ...] = ()):
    """Decorator listing a forward function as the op ``name``.

    ``methods``: the ``Tensor`` methods and operators it becomes (``'sub'``,
    ``'__sub__'``); ``properties``: read-only ``Tensor`` properties (``'T'``).
    The function is returned unchanged.  Ops that need another op at run time
    (a rule on Tensors calling ``where``) look it up with :func:`forward_of`
    instead of importing its module, so no op family imports another.
    """

    def add(fn: Callable) -> Callable:
        if name in OPS:
            raise ValueError(f"op {name!r} is registered twice")
        OPS[name] = OpEntry(name, fn, tuple(methods), tuple(properties))
        return fn

    return add


def forward_of(name: str) -> Callable:
    """The forward function of a registered op (for ops that call another op at run time)."""
    return OPS[name].forward

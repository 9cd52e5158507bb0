"""``Tensor.grad_fn``: a view of one graph node shaped like PyTorch's autograd nodes.

PyTorch code inspects graphs through ``y.grad_fn.name()`` and
``y.grad_fn.next_functions``, a tuple with one ``(function, 0)`` pair per
input: the input's own ``grad_fn`` if an op made it, an ``AccumulateGrad``
(whose ``variable`` is the input) for a leaf that requires grad, and ``None``
for an input that needs no gradient.

The node's rule is shared by every node of that op, so these objects are made
on request, wrapping the node; two made for the same node compare equal.
Names follow PyTorch's pattern from the rule's op name: ``mul`` ->
``MulBackward0``.  Where taugrad computes in one node what PyTorch records
as several (``linear`` is PyTorch's ``t`` and ``addmm``, ``cross_entropy``
its ``log_softmax`` and ``nll_loss``), or names an op differently, the rule's
``shows`` gives PyTorch's picture of the node (see :class:`~taugrad.tensors.core.rule.Rule`),
so code written for PyTorch's graphs reads the graph it expects.
"""
from __future__ import annotations


def op_name(node) -> str:
    """Name of the op that made ``node`` ('' for a leaf)."""
    rule = node._rule
    if rule is None:
        return ""
    name_of = rule.name_of
    return name_of(node) if name_of is not None and node._ctx is not None else rule.op


def backward_name(op: str) -> str:
    """PyTorch's style of node name for an op: ``'log_softmax'`` -> ``'LogSoftmaxBackward0'``."""
    words = [w for w in op.replace(".", "_").split("_") if w]
    camel = "".join(w[:1].upper() + w[1:] for w in words)
    # PyTorch also starts a word after a digit: log1p -> Log1P, deg2rad -> Deg2Rad, max_pool2d -> MaxPool2D
    camel = "".join(c.upper() if i and camel[i - 1].isdigit() else c for i, c in enumerate(camel))
    return camel + "Backward0"


def grad_fn_of(node):
    """``node.grad_fn``: a :class:`GradFn` for an op's output, None for a leaf."""
    return None if node._rule is None else GradFn(node)


def _next_function(parent):
    if parent._rule is not None:
        return GradFn(parent)
    if parent._requires_grad:
        return AccumulateGrad(parent)
    return None


def _picture(node):
    """``(name, inputs)`` as PyTorch shows ``node``, or None where its rule has no ``shows``.

    After ``backward()`` freed the graph the node keeps its rule in ``_ctx``
    and no parents: ``shows`` then gives the name it can tell from the output.
    """
    rule = node._rule
    if rule.op == "released":
        rule = node._ctx
        if getattr(rule, "shows", None) is None:
            return None
    return None if rule.shows is None else rule.shows(node)


def _resolved(node, item, path):
    """An entry of a picture's inputs as a ``next_functions`` function (None: no gradient flows there).

    An int is the node's parent of that index; a nested ``(name, inputs)`` is
    one of PyTorch's inner nodes, absent (None) when nothing below it needs a
    gradient, as PyTorch records no node there.
    """
    if item is None:
        return None
    if isinstance(item, int):
        return _next_function(node._prev[item])
    if all(_resolved(node, inner, path + (i,)) is None for i, inner in enumerate(item[1])):
        return None
    return _Inner(node, item, path)


class GradFn:
    """The backward node of one op output (``y.grad_fn``)."""

    __slots__ = ("_node",)

    def __init__(self, node) -> None:
        self._node = node

    def name(self) -> str:
        """``'MulBackward0'`` for a product (see the module docstring)."""
        node = self._node
        picture = _picture(node)
        if picture is not None:
            return picture[0]
        if node._rule.op == "released":  # backward freed the graph; the op's name survives in _ctx
            return backward_name(getattr(node._ctx, "op", "released"))
        return backward_name(op_name(node))

    @property
    def next_functions(self) -> tuple:
        """``((function, 0), ...)``, one pair per input of the op (empty once backward freed the graph)."""
        node = self._node
        if not node._prev:
            return ()
        picture = _picture(node)
        if picture is None:
            return tuple((_next_function(p), 0) for p in node._prev)
        return tuple((_resolved(node, item, (i,)), 0) for i, item in enumerate(picture[1]))

    @property
    def metadata(self) -> dict:
        return {}

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._node is self._node

    def __hash__(self) -> int:
        return hash((type(self), id(self._node)))

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self._node):#x}>"


class _Inner(GradFn):
    """One of the PyTorch nodes that a taugrad node computes inside itself (the ``t`` of a ``linear``)."""

    __slots__ = ("_picture", "_path")

    def __init__(self, node, picture, path) -> None:
        super().__init__(node)
        self._picture = picture
        self._path = path

    def name(self) -> str:
        return self._picture[0]

    @property
    def next_functions(self) -> tuple:
        node = self._node
        return tuple((_resolved(node, item, self._path + (i,)), 0) for i, item in enumerate(self._picture[1]))

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._node is self._node and other._path == self._path

    def __hash__(self) -> int:
        return hash((type(self), id(self._node), self._path))

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self._node):#x}>"


class AccumulateGrad(GradFn):
    """Where a leaf's gradient is added into ``leaf.grad``; ``variable`` is the leaf."""

    __slots__ = ()

    @property
    def variable(self):
        return self._node

    def name(self) -> str:
        return "AccumulateGrad"  # torch says "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self._node):#x}>"

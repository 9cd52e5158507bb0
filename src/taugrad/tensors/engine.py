"""Reverse-mode differentiation for ``Tensor``: ``backward()`` and ``grad()``.

The pass is the scalar engine's: order the graph with the shared
:func:`taugrad.graph.topological_order`, then run each node's local rule in
reverse order, adding up the gradients each parent receives.  Differences that
arrays bring:

* Gradients travel in a dict ``{node: gradient}`` during the pass; only leaves
  get a ``.grad`` (as in PyTorch), written at the end.
* First-order passes move raw arrays (no Tensor wrapping); ``create_graph=True``
  moves Tensors and runs the rules in grad mode, so the gradients are
  themselves differentiable.
* ``retain_graph=False`` frees each node's parents and saved constants right
  after its rule ran; running backward through such a node again raises an
  error that says ``retain_graph``.
* A node whose inputs were changed in place after it was recorded raises
  instead of computing a wrong gradient (the version check below, with the
  clock of :mod:`taugrad.tensors.core.node`).
* The first-order pass knows which gradient arrays it alone holds: each rule
  declares whether it returns new arrays (``Rule.gives``).  Those it may
  overwrite -- ReLU masks its gradient in place, as a hand-written backward
  does -- or add to in place, and a leaf takes one as its ``.grad`` without a
  copy.  Anything else (the user's ``gradient=``, an array a hook saw, a view)
  is copied, found by its reference count: ``.grad`` never aliases another
  tensor's gradient, the user's ``gradient=`` or a view.

This module never imports an op: it sees ops only through the rule records
that :mod:`taugrad.tensors.core.node` stores on each node.
"""
from __future__ import annotations

import sys
from typing import Optional

import numpy as np

from taugrad.debug.anomaly import check_backward, is_anomaly_enabled
from taugrad.grad_mode import enable_grad
from taugrad.graph import topological_order
from taugrad.tensors.core.backend import ARRAY_MODULES, array_module, device_of, same_backend, to_device
from taugrad.tensors.core.errstate import restore, silence
from taugrad.tensors.hooks import run_hooks
from taugrad.tensors.core.node import ANOMALY, CLOCK, Tensor, constant, op_name, to_array
from taugrad.tensors.core.rebase import HISTORY, check_views, parents_when_recorded
from taugrad.tensors.core.rule import G_OR_NEW, RELEASED

_getrefcount = sys.getrefcount
ndarray = np.ndarray


class GraphReleasedError(RuntimeError):
    """backward() reached a graph an earlier backward() already freed."""


def _released_error(node: Tensor) -> GraphReleasedError:
    return GraphReleasedError(
        f"backward through a graph that was already freed (a tensor of shape {tuple(node.shape)} "
        f"made by an op whose saved values were released by an earlier backward()); "
        f"pass retain_graph=True to the first backward() to backward through it again"
    )


# ---------------------------------------------------------------------------
# in-place check
# ---------------------------------------------------------------------------


def _storage_version(t: Tensor) -> int:
    return t._version if t._base is None else max(t._version, t._base._version)


def _check_versions(node: Tensor) -> None:
    """Raise if a value ``node``'s rule reads was changed in place after recording."""
    rule = node._rule
    op = op_name(node)
    reads = rule.reads
    if callable(reads):
        reads = reads(node)
    for which in reads:
        t = node if which == "out" else node._prev[which]
        if _storage_version(t) > node._clock:
            role = "its output" if which == "out" else f"its input {which}"
            raise RuntimeError(
                f"backward of '{op}': {role} (a tensor of shape {tuple(t.shape)}, {t.dtype}), which '{op}' "
                f"saved for its gradient, was modified by an in-place operation after '{op}' saved it (its "
                f"version is newer than the one '{op}' recorded); the gradient would be wrong. Use an "
                f"out-of-place op (x = x + 1) or clone() before changing it"
            )


# ---------------------------------------------------------------------------
# the pass
# ---------------------------------------------------------------------------


def _reverse_pass(roots, root_grads, retain_graph: bool, create_graph: bool, capture):
    """Run the local rules from ``roots`` back to the leaves, IEEE special values left silent.

    Returns ``(leaf_grads, captured, owned)``: the gradients that reached
    leaves (and released nodes, which the caller reports), those of the
    ``capture``d interior nodes (for ``grad()``), and the nodes whose gradient
    array only the pass holds (see :func:`_run_rules`).
    """
    token = silence()  # quiet() without a with block: two Python calls fewer per backward()
    try:
        grads = {}
        for root, g in zip(roots, root_grads):
            old = grads.get(root)
            grads[root] = g if old is None else old + g
        order = topological_order(roots)
        if HISTORY:  # some live tensor was changed by a recorded in-place op
            check_views(order)
        anomaly = ANOMALY[0] and is_anomaly_enabled()
        captured, owned = _run_rules(order, grads, retain_graph, create_graph, capture, anomaly)
        return grads, captured, owned
    finally:
        restore(token)


def _run_rules(order: list, grads: dict, retain_graph: bool, create_graph: bool, capture, anomaly: bool):
    """The backward loop, for every entry point: ``backward()``, ``grad()``, ``create_graph``, anomaly mode.

    Pops each node's complete gradient from ``grads`` (parents come after
    children in ``reversed(order)``), runs the node's hooks, checks what its
    rule reads for in-place changes, runs the rule and adds each parent's share
    into ``grads``.  With ``create_graph`` the rule runs on Tensors; otherwise
    on the raw arrays.

    Ownership (first order without ``capture`` only, the usual
    ``loss.backward()``): a gradient array a rule just made (``Rule.gives``)
    is seen by nothing outside the pass.  A node whose gradient is owned runs
    its rule's ``overwrite`` variant if it has one, and a second gradient for
    an owned one is added in place.  The user's ``gradient=``, cached arrays,
    anything a hook saw and anything ``grad()`` returns are never owned, so
    they are never written to.

    Returns ``(captured, owned)``: the gradients of the ``capture``d nodes
    (``grad()``'s interior inputs) and the owned nodes, whose leaves take their
    gradient without a copy.
    """
    clock = CLOCK[0]
    pop = grads.pop
    get = grads.get
    # ownership is tracked on the plain first-order pass only (anomaly mode reads g after the rule)
    track = capture is None and not create_graph and not anomaly
    owned = set()  # nodes whose pending gradient only this pass refers to
    own = owned.add
    captured = {}
    # grad(): only the rules between the outputs and the wanted tensors run, and
    # the graph behind them is left as it is (PyTorch too)
    leading = None if capture is None else _nodes_leading_to(order, capture, clock)
    for node in reversed(order):
        g = pop(node, None)
        rule = node._rule
        if leading is not None and node not in leading:
            if g is not None and node in capture:
                extras = node._extras
                captured[node] = g if extras is None else run_hooks(extras, g, node, create_graph)
            continue
        if g is not None:
            if rule is RELEASED:
                raise _released_error(node)
            mine = node in owned
            if node._extras is not None:  # register_hook / retain_grad
                g = run_hooks(node._extras, g, node, create_graph)
                mine = False  # a hook (or .grad via retain_grad) may keep the array
            if capture is not None and node in capture:
                captured[node] = g
            if node._clock != clock:  # some in-place op ran since the node was recorded
                _check_versions(node)
                prev = parents_when_recorded(node)  # a parent rebased since then: its old node
            else:
                prev = node._prev
            if create_graph:
                if not rule.twice:
                    raise RuntimeError(
                        f"create_graph=True: the backward of '{op_name(node)}' is not differentiable "
                        f"(a custom Function's backward computes plain arrays); build the op from "
                        f"taugrad's ops to differentiate it twice"
                    )
                parent_grads = rule.backward(g, node, prev, node)
                new_is_ours = g_is_ours = False
            else:
                # the parents' arrays; spelled out for one or two parents, the usual
                # cases, because a list comprehension is a function call before 3.12
                n_prev = len(prev)
                if n_prev == 2:
                    ins = [prev[0]._data, prev[1]._data]
                elif n_prev == 1:
                    ins = [prev[0]._data]
                else:
                    ins = [p._data for p in prev]
                if mine and rule.overwrite is not None:
                    parent_grads = rule.overwrite(g, node._data, ins, node)
                    new_is_ours = g_is_ours = True  # the variant returns g (once) or new arrays
                else:
                    parent_grads = rule.backward(g, node._data, ins, node)
                    gives = rule.gives
                    new_is_ours = track and gives is not None
                    # g itself stays ours if the rule hands it to one parent only
                    g_is_ours = mine and gives is G_OR_NEW and _identical_count(g, parent_grads) == 1
            if anomaly:
                check_backward(node, g, parent_grads, op_name(node))
            for p, pg in zip(prev, parent_grads):
                if pg is None or not p._requires_grad:
                    continue
                ours = g_is_ours if pg is g else new_is_ours
                dtype = p._data.dtype
                if pg.dtype is not dtype and pg.dtype != dtype:  # mixed precision: the cast is new
                    pg = pg.astype(dtype)
                    ours = track
                old = get(p)
                if old is None:
                    grads[p] = pg
                    if ours:
                        own(p)
                elif p in owned and (type(old) is ndarray or type(old) in ARRAY_MODULES) and old.shape == pg.shape:
                    old += pg  # the pass's own array: accumulate in place (a 0-d NumPy result may be a scalar)
                else:
                    grads[p] = old + pg
                    if track:
                        own(p)
        # else: no gradient reached this node (e.g. it only fed indices)
        if not retain_graph:
            # free what the node keeps for backward (node -> parents is the only
            # edge); a later backward through it raises an error naming retain_graph
            node._prev = ()
            node._rule = RELEASED
            node._ctx = rule  # only so repr can still name the op
    return captured, owned


def _nodes_leading_to(order: list, wanted, clock: int) -> set:
    """The interior nodes of ``order`` with a ``wanted`` tensor among their ancestors.

    A node recorded before an in-place op is followed to the parents its rule
    will use (the rebased parent's old node), as the backward loop does.
    """
    leading = set()
    for node in order:  # parents come first
        parents = parents_when_recorded(node) if node._clock != clock else node._prev
        for parent in parents:
            if parent in wanted or parent in leading:
                leading.add(node)
                break
    return leading


def _identical_count(g, parent_grads) -> int:
    """How many of ``parent_grads`` are ``g`` itself (by identity: ``==`` would compare elements)."""
    count = 0
    for pg in parent_grads:
        if pg is g:
            count += 1
    return count


def _refs_seen_by_callee(array) -> int:
    return _getrefcount(array)


def _calibrate_owned_refs() -> int:
    """What getrefcount reports inside a function for an array only its caller's variable holds."""
    array = np.empty(1)
    return _refs_seen_by_callee(array)


#: measured, not assumed: interpreters differ in how many references a call adds
_OWNED_REFS = _calibrate_owned_refs()


def _as_gradient(array) -> Tensor:
    """A leaf's new ``.grad`` from a pass result, copied unless exclusively owned.

    If nothing but the caller's one variable refers to ``array`` (and it owns
    its memory), it becomes the ``.grad`` without a copy -- PyTorch's
    AccumulateGrad steals gradients the same way.  Any other reference
    (another leaf's pending gradient, the user's ``gradient=``, a tensor's
    ``data``) forces a copy, as does a view or a read-only array.  An array
    of another backend is taken only if it says it owns its memory (``base``
    None: CuPy's arrays are never read-only).
    """
    if type(array) is np.ndarray:
        if not (array.base is None and array.flags.writeable and _getrefcount(array) <= _OWNED_REFS):
            array = array.copy()
    elif not (getattr(array, "base", False) is None and _getrefcount(array) <= _OWNED_REFS):
        array = array.copy()
    return constant(array)


def _keeps_layout(g, like) -> bool:
    """True when ``g`` is laid out as ``like`` (the same strides over every axis longer than 1).

    PyTorch's AccumulateGrad stores a gradient with its variable's strides
    (a row-major variable gets a row-major ``.grad``, a channels-last one a
    channels-last ``.grad``): a rule's result can be a view of a larger
    buffer (a convolution's cropped padding) or of another memory order.
    """
    if g.strides == like.strides or g.shape != like.shape:
        return True
    return all(a == b for a, b, n in zip(g.strides, like.strides, like.shape) if n > 1)


def _in_layout_of(g, like):
    """A copy of ``g`` in ``like``'s memory order (row-major if ``like``'s strides are not dense)."""
    xp = array_module(g)
    out = xp.empty_like(like, dtype=g.dtype)
    if not _keeps_layout(out, like):
        out = xp.empty(like.shape, dtype=g.dtype)
    out[...] = g
    return out


_ONES = {}


def _ones(like):
    """A read-only array of ones shaped like ``like`` (cached: every backward() starts with one).

    Only NumPy's are cached: another backend's array may live on one of several
    devices, and cannot be made read-only.
    """
    if type(like) is not ndarray:
        return array_module(like).ones(like.shape, dtype=like.dtype)
    key = (like.shape, like.dtype)
    ones = _ONES.get(key)
    if ones is None:
        ones = np.ones(like.shape, dtype=like.dtype)
        ones.flags.writeable = False
        if len(_ONES) < 64:
            _ONES[key] = ones
    return ones


def _root_grads(roots, gradients, create_graph: bool, op: str) -> list:
    out = []
    for i, (root, gradient) in enumerate(zip(roots, gradients)):
        if not isinstance(root, Tensor):
            raise TypeError(f"{op}: outputs must be Tensors, got {type(root).__name__}")
        if not root.requires_grad:
            raise RuntimeError(
                f"{op}: output {i} does not require grad (no input requires grad, or it was "
                f"computed under no_grad())"
            )
        if root._rule is RELEASED:
            raise _released_error(root)
        if gradient is None:
            if root._data.size != 1:
                raise RuntimeError(
                    f"{op}: output {i} has shape {tuple(root.shape)}; a gradient can be created implicitly "
                    f"only for a single-element output. Pass gradient= (a tensor of shape {tuple(root.shape)})"
                )
            g = _ones(root._data)
            out.append(constant(g.copy()) if create_graph else g)
            continue
        if isinstance(gradient, Tensor):
            g = gradient
            if not same_backend(g._data, root._data) or \
                    type(g._data) is not ndarray and device_of(g._data) != device_of(root._data):
                raise RuntimeError(f"{op}: gradient {i} is on {device_of(g._data)} but output {i} is on "
                                   f"{device_of(root._data)}")
        else:
            g = to_array(gradient)
            if not same_backend(g, root._data):  # a host gradient (a list, a NumPy array) for a device output
                g = to_device(g, device_of(root._data))
            g = constant(g)
        if g.shape != root.shape:
            raise ValueError(f"{op}: gradient has shape {tuple(g.shape)} but output {i} has shape {tuple(root.shape)}")
        if g.dtype != root.dtype:
            g = g.astype(root.dtype)
        out.append(g if create_graph else g._data)
    return out


def backward(self: Tensor, gradient=None, retain_graph: Optional[bool] = None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate ``d self / d leaf`` into ``leaf.grad`` for every leaf that requires grad.

    ``gradient``: d(something)/d(self), required unless ``self`` has one element
    (then it is 1).  The graph's saved values are freed afterwards unless
    ``retain_graph=True`` (default: ``create_graph``).  ``create_graph=True``
    records the backward pass itself, so the ``.grad`` tensors can be
    differentiated again.  ``inputs``: if given, only these tensors (leaves or
    not) accumulate their gradient into ``.grad``.
    """
    if inputs is not None:
        backward_into((self,), (gradient,), retain_graph, create_graph, inputs)
        return
    if retain_graph is None:
        retain_graph = create_graph
    if gradient is None and not create_graph and self._rule is not None and self._rule is not RELEASED \
            and self._data.size == 1:  # the usual loss.backward(): skip the general checks
        g = _ones(self._data)
    else:
        (g,) = _root_grads((self,), (gradient,), create_graph, "backward")
    if create_graph:
        retain_graph = True
        with enable_grad():
            grads, _, owned = _reverse_pass((self,), (g,), True, True, None)
    else:
        grads, _, owned = _reverse_pass((self,), (g,), retain_graph, False, None)
        del g
    for node in grads:
        if node._rule is not None:  # only released nodes are left besides leaves
            raise _released_error(node)
    while grads:
        leaf, g = grads.popitem()
        mine = leaf in owned  # made by the pass, seen by nobody: it needs no copy
        if leaf._extras is not None:  # hooks on a leaf run before accumulation, as in PyTorch
            g = run_hooks(leaf._extras, g, leaf, create_graph)
            mine = False  # a hook may have kept the array, or returned one of its own
        if create_graph:
            leaf._grad = _wrap_grad(g) if leaf._grad is None else leaf._grad + g
        elif leaf._grad is None:
            if not _keeps_layout(g, leaf._data):
                g, mine = _in_layout_of(g, leaf._data), True
            leaf._grad = constant(g) if mine else _as_gradient(g)
        else:
            current = leaf._grad._data
            if current.shape == g.shape and current.dtype == g.dtype and \
                    (type(current) is not ndarray or current.flags.writeable):
                current += g  # in place, as PyTorch
            else:
                leaf._grad = constant(current + g)


def backward_into(roots: tuple, gradients: tuple, retain_graph: Optional[bool], create_graph: bool, inputs) -> None:
    """``backward(inputs=...)``: accumulate into ``t.grad`` the gradient of the roots for each ``t`` of ``inputs``.

    An input the roots do not reach keeps its ``.grad``, as in PyTorch.
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    grads = grad(roots, inputs, gradients, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
    for t, g in zip(inputs, grads):
        if g is None:
            continue
        if t._grad is None or create_graph:
            t._grad = g if t._grad is None else t._grad + g
        else:
            current = t._grad._data
            if current.shape == g._data.shape and current.dtype == g._data.dtype and \
                    (type(current) is not ndarray or current.flags.writeable):
                current += g._data  # in place, as PyTorch accumulates
            else:
                t._grad = constant(current + g._data)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         allow_unused: Optional[bool] = None, materialize_grads: bool = False) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned, not stored.

    ``grad(y, [a, b])`` is ``(dy/da, dy/db)``; with several outputs, the sum of
    their gradients weighted by ``grad_outputs`` (needed for non-scalar ones).
    ``.grad`` attributes are left alone.  An input the outputs do not depend on
    is an error unless ``allow_unused=True`` (then its gradient is None) or
    ``materialize_grads=True`` (then it is zeros, as the gradient of a
    function that does not depend on it).  ``retain_graph`` defaults to
    ``create_graph``.
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         f"but got: allow_unused={allow_unused}.")
    allow_unused = materialize_grads or bool(allow_unused)
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    single_input = isinstance(inputs, Tensor)
    inputs = (inputs,) if single_input else tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor) or not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = (grad_outputs,)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs must be Tensors, got {type(t).__name__} at position {i}")
        if not t.requires_grad:
            raise RuntimeError(f"grad: input {i} (shape {tuple(t.shape)}) does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(outputs, grad_outputs, create_graph, "grad")
    wanted = set(inputs)
    if create_graph:
        with enable_grad():
            grads, captured, _ = _reverse_pass(outputs, roots, retain_graph, True, wanted)
    else:
        grads, captured, _ = _reverse_pass(outputs, roots, retain_graph, False, wanted)
    del roots
    for node in grads:
        if node._rule is not None and node not in wanted:
            raise _released_error(node)
    result = []
    given = {}  # input -> its result: a tensor listed twice gets the same gradient twice
    for i, t in enumerate(inputs):
        if t in given:
            earlier = given[t]
            # a copy for the first-order result, so the two never alias one array
            result.append(earlier if earlier is None or create_graph else constant(earlier._data.copy()))
            continue
        g = captured.pop(t, None)
        if g is None:
            g = grads.pop(t, None)
            if g is not None and t._extras is not None:  # a leaf input's hooks (interior ones ran in the pass)
                g = run_hooks(t._extras, g, t, create_graph)
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"grad: input {i} (shape {tuple(t.shape)}) was not used to compute the outputs; "
                    f"pass allow_unused=True to get None for it"
                )
            result.append(constant(array_module(t._data).zeros_like(t._data)) if materialize_grads else None)
        elif create_graph:
            result.append(g)
        else:
            result.append(_as_gradient(g))
            del g
        given[t] = result[-1]
    return tuple(result)


def _wrap_grad(g) -> Tensor:
    return g if isinstance(g, Tensor) else constant(g)


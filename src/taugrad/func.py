"""Function transforms: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``hvp``.

These turn a Python function into the function that computes its
derivatives, with the argument conventions and result shapes of ``torch.func``
(``jacobian`` is ``jacrev``, ``hvp`` is ``torch.autograd.functional.hvp``)::

    from taugrad import func

    f = lambda x: (x ** 3).sum()
    func.grad(f)(x)                 # 3 x^2, shape of x
    func.hessian(f)(x)              # diag(6 x), shape x.shape + x.shape
    func.grad(func.grad(g))(x)      # transforms nest, to any order

Everything is reverse mode over the engine's own graphs: a transform marks
its arguments as the inputs to differentiate, runs ``f`` while the graph is
recorded, and calls :func:`taugrad.grad`.  When the result has to be
differentiated again (an argument already requires grad, as inside another
transform) the backward pass itself is recorded (``create_graph=True``), so
higher derivatives are gradients of gradients.  Forward-mode products are
exact too: ``jvp`` uses the double-backward trick (below), not differences.

Arguments selected by ``argnums`` must be Tensors (floating) or Values; the
other arguments, and keyword arguments (``grad``, ``value_and_grad``,
``grad_and_value``, ``jacobian``, ``hessian``), are passed through untouched.
With ``has_aux=True`` the aux output comes back detached from the
transform's internal graph, as in ``torch.func``.  For ``Value`` functions the
results are Values (differentiable, ``.data`` holds the number).  Like
``torch.func``, the derivatives are with respect to the *arguments*: tensors
that ``f`` closes over are constants for this transform, but a result that
depends on them stays on their graph, so an outer transform (or
``backward()``) can differentiate through it.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from taugrad.autograd import grad as _engine_grad
from taugrad.grad_mode import enable_grad, is_grad_enabled
from taugrad.graph import topological_order
from taugrad.scalar.value import Value
from taugrad.tensors.core.backend import array_module, device_of, is_array, to_device
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.shape import stack

ArgNums = Union[int, Tuple[int, ...]]

__all__ = ["grad", "value_and_grad", "grad_and_value", "vjp", "jvp", "jacobian", "jacrev", "hessian", "hvp"]


# ---------------------------------------------------------------------------
# marking inputs and differentiating
# ---------------------------------------------------------------------------


def _argnums(argnums: ArgNums, nargs: int, op: str) -> Tuple[int, ...]:
    """``argnums`` as a tuple of valid, distinct argument positions."""
    many = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if many else (argnums,)
    if not nums:
        raise ValueError(f"func.{op}: argnums is empty")
    result = []
    for n in nums:
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"func.{op}: argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -nargs <= n < nargs:
            raise ValueError(f"func.{op}: argnums {n} is out of range for a function called with {nargs} argument(s)")
        result.append(n % nargs)
    if len(set(result)) != len(result):
        raise ValueError(f"func.{op}: argnums {argnums!r} repeats an argument")
    return tuple(result)


def _track(x: Any, index: int, op: str) -> Any:
    """A fresh graph node standing for argument ``x``: the transform differentiates with respect to it.

    A new node (rather than ``x`` itself) keeps nested transforms apart: the
    inner derivative only follows paths through the inner argument, while the
    node still hangs off ``x``'s graph so an outer transform can differentiate
    the result again.
    """
    if isinstance(x, Tensor):
        if x.dtype.kind not in "fc":
            raise TypeError(f"func.{op}: argument {index} has dtype {x.dtype}; only floating tensors can be differentiated")
        if x.requires_grad:
            return x.reshape(x.shape)  # a view node on x's graph, no copy
        return x.detach().requires_grad_()
    if isinstance(x, Value):
        return x + 0.0
    raise TypeError(f"func.{op}: argument {index} must be a Tensor or a Value, got {type(x).__name__}")


def _needs_graph(originals: Sequence[Any], outs: Sequence[Any] = (), tracked: Sequence[Any] = ()) -> bool:
    """Will somebody differentiate the transform's result again?

    Yes when grad mode is on and the result depends on a graph outside the
    transform: an argument already requires grad (an outer transform, or the
    user, is tracking it), or ``f`` closes over a tensor that requires grad
    (``grad(lambda a: a * grad(lambda b: a * b)(y))``: the inner gradient is
    ``a`` and the outer transform differentiates it).  Values always keep
    their graph: the scalar engine is cheap and has no ``requires_grad``.
    """
    if any(isinstance(x, Value) for x in originals):
        return True
    if not is_grad_enabled():
        return False
    return any(x.requires_grad for x in originals) or _reaches_outside(outs, tracked)


def _reaches_outside(outs: Sequence[Any], tracked: Sequence[Any]) -> bool:
    """Does the graph of ``outs`` reach a tensor requiring grad other than the ``tracked`` inputs?"""
    inside = {id(t) for t in tracked}
    seen = set(inside)
    stack = [o for o in outs if isinstance(o, Tensor) and o.requires_grad]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if not node._prev:
            return True  # a leaf that requires grad and is not one of ours
        stack.extend(p for p in node._prev if p.requires_grad)
    return False


def _zeros_like(x: Any) -> Any:
    if isinstance(x, Value):
        return Value(0.0)
    return Tensor(array_module(x._data).zeros(x.shape, dtype=x.dtype))


def _depends(out: Any) -> bool:
    """Can ``out`` carry a gradient at all (is it on a graph)?"""
    return bool(out._prev) if isinstance(out, Value) else out.requires_grad


def _differentiate(outputs: Sequence[Any], inputs: Sequence[Any], seeds: Sequence[Any], create_graph: bool) -> List[Any]:
    """``d sum_k <seeds[k], outputs[k]> / d inputs``, zeros for inputs not reached.

    Keeps the graph (``retain_graph``) so several products can share one forward.
    """
    pairs = [(o, s) for o, s in zip(outputs, seeds) if _depends(o)]
    if not pairs:
        return [_zeros_like(x) for x in inputs]
    outs, given = [p[0] for p in pairs], [p[1] for p in pairs]
    if all(s is None for s in given):
        given = None  # ones for single-element outputs (the only ones given None)
    grads = _engine_grad(outs, list(inputs), given, retain_graph=True, create_graph=create_graph, allow_unused=True)
    result = []
    for x, g in zip(inputs, grads):
        if g is None:
            g = _zeros_like(x)
        elif not create_graph and isinstance(g, float):  # Value engine without a graph: keep Values
            g = Value(g)
        result.append(g)
    return result


def _detach(x: Any, keep: bool) -> Any:
    """Drop the transform's internal graph from a result nobody will differentiate."""
    if keep or not isinstance(x, Tensor) or not x.requires_grad:
        return x
    return x.detach()


def _scalar_output(out: Any, op: str) -> None:
    if isinstance(out, Value):
        return
    if not isinstance(out, Tensor):
        raise TypeError(f"func.{op}: f must return a Tensor or a Value, got {type(out).__name__}")
    if out._data.size != 1:
        raise ValueError(f"func.{op}: f must return a single-element Tensor, got shape {tuple(out.shape)}")


def _call(
    f: Callable, args: tuple, nums: Tuple[int, ...], op: str, kwargs: Optional[dict] = None
) -> Tuple[Any, List[Any], list]:
    """Run ``f`` on ``args`` with the ``nums`` arguments replaced by tracked nodes.

    Keyword arguments go to ``f`` unchanged: as in ``torch.func`` they are
    never differentiated.
    """
    originals = [args[i] for i in nums]
    call_args = list(args)
    with enable_grad():  # like torch.func: the transform works inside no_grad() too
        tracked = [_track(args[i], i, op) for i in nums]
        for i, t in zip(nums, tracked):
            call_args[i] = t
        out = f(*call_args, **(kwargs or {}))
    return out, tracked, originals


def _split_aux(out: Any, has_aux: bool, op: str) -> Tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"func.{op}: with has_aux=True, f must return a pair (output, aux)")
    return out


def _release_aux(aux: Any, tracked: Sequence[Any], keep: bool) -> Any:
    """``aux`` without a graph into the transform's internal leaves (torch.func returns it detached).

    When the result is differentiated again (``keep``) the tracked nodes hang
    off the caller's arguments, so the graph is the caller's and stays.
    Otherwise a Tensor in ``aux`` that reaches a tracked leaf is detached;
    one that only depends on tensors ``f`` closed over keeps that graph.
    """
    if isinstance(aux, (tuple, list)):
        return type(aux)(_release_aux(a, tracked, keep) for a in aux)
    if isinstance(aux, dict):
        return {key: _release_aux(a, tracked, keep) for key, a in aux.items()}
    if keep or not _on_graph(aux) or not _reaches_any(aux, tracked):
        return aux
    return aux.detach()


def _reaches_any(out: Tensor, targets: Sequence[Any]) -> bool:
    """Does the graph of ``out`` reach one of ``targets``? (The engine's own walk, so no recursion.)"""
    wanted = {id(t) for t in targets}
    return id(out) in wanted or any(id(p) in wanted for node in topological_order([out]) for p in node._prev)


def _pack(values: Sequence[Any], argnums: ArgNums) -> Any:
    """One result per argnum: a single one for an int ``argnums``, a tuple otherwise."""
    return tuple(values) if isinstance(argnums, (tuple, list)) else values[0]


# ---------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------


def value_and_grad(f: Callable, argnums: ArgNums = 0, has_aux: bool = False) -> Callable:
    """``f -> (lambda *args: (f(*args), d f / d args[argnums]))`` for a scalar-valued ``f``.

    ``f`` returns a single-element Tensor or a Value (with ``has_aux=True``: a
    pair ``(output, aux)``, and the transform returns ``((output, aux), grad)``).
    The gradient has the argument's shape; for a tuple ``argnums`` it is a
    tuple of gradients.
    """

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), "grad")
        out, tracked, originals = _call(f, args, nums, "grad", kwargs)
        out, aux = _split_aux(out, has_aux, "grad")
        _scalar_output(out, "grad")
        keep = _needs_graph(originals, [out], tracked)
        aux = _release_aux(aux, tracked, keep)
        with enable_grad():
            grads = _differentiate([out], tracked, [None], keep)
        grads = [_detach(g, keep) for g in grads]
        value = _detach(out, keep)
        return ((value, aux) if has_aux else value), _pack(grads, argnums)

    return wrapper


def grad(f: Callable, argnums: ArgNums = 0, has_aux: bool = False) -> Callable:
    """``f -> (lambda *args: d f / d args[argnums])``: the gradient of a scalar-valued ``f``.

    The result has the shape of the argument (a tuple of gradients for a tuple
    ``argnums``; with ``has_aux=True`` a pair ``(grad, aux)``).  Nesting gives
    higher derivatives: ``grad(grad(f))`` is ``f''`` for a scalar function.
    """
    with_value = value_and_grad(f, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value, g = with_value(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def grad_and_value(f: Callable, argnums: ArgNums = 0, has_aux: bool = False) -> Callable:
    """``torch.func.grad_and_value``: like :func:`value_and_grad`, results in the order ``(grad, value)``."""
    with_value = value_and_grad(f, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value, g = with_value(*args, **kwargs)
        return g, value

    return wrapper


# ---------------------------------------------------------------------------
# vector-Jacobian and Jacobian-vector products
# ---------------------------------------------------------------------------


def _outputs(out: Any, op: str) -> Tuple[Tuple[Any, ...], bool]:
    """``(tuple of outputs, whether f returned a tuple)``."""
    if isinstance(out, (tuple, list)):
        outs = tuple(out)
        many = True
    else:
        outs, many = (out,), False
    for o in outs:
        if not isinstance(o, (Tensor, Value)):
            raise TypeError(f"func.{op}: f must return Tensors or Values, got {type(o).__name__}")
    return outs, many


def _check_like(vectors: Sequence[Any], likes: Sequence[Any], what: str, op: str) -> List[Any]:
    """Tangents/cotangents as nodes of the same kind and shape as what they pair with."""
    if len(vectors) != len(likes):
        raise ValueError(f"func.{op}: {len(vectors)} {what} for {len(likes)} {'outputs' if what == 'cotangents' else 'primals'}")
    result = []
    for i, (v, like) in enumerate(zip(vectors, likes)):
        if isinstance(like, Value):
            result.append(v if isinstance(v, Value) else Value(float(v)))
            continue
        if not isinstance(v, Tensor):  # a host value: on the device of what it pairs with
            array = v.astype(like.dtype, copy=False) if is_array(v) else np.asarray(v, dtype=like.dtype)
            v = Tensor(to_device(array, device_of(like._data)))
        if v.shape != like.shape:
            raise ValueError(f"func.{op}: {what} {i} has shape {tuple(v.shape)}, expected {tuple(like.shape)}")
        result.append(v)
    return result


def vjp(f: Callable, *primals: Any, has_aux: bool = False) -> Tuple[Any, ...]:
    """``(f(*primals), vjp_fn)`` with ``vjp_fn(cotangents) = cotangents^T J``, one result per primal.

    ``vjp_fn`` takes one cotangent per output of ``f`` (shaped like it) and
    returns a tuple with ``sum_k <cotangent_k, d out_k / d primal_i>`` for
    every primal, as ``torch.func.vjp``.  It may be called several times.
    """
    nums = tuple(range(len(primals)))
    if not nums:
        raise ValueError("func.vjp: needs at least one primal")
    out, tracked, originals = _call(f, primals, nums, "vjp")
    out, aux = _split_aux(out, has_aux, "vjp")
    outs, many = _outputs(out, "vjp")
    keep = _needs_graph(originals, outs, tracked)
    aux = _release_aux(aux, tracked, keep)

    def vjp_fn(*cotangents: Any) -> Tuple[Any, ...]:
        if not many and len(cotangents) == 1 and isinstance(cotangents[0], (tuple, list)):
            cotangents = tuple(cotangents[0])
        if many and len(cotangents) == 1 and isinstance(cotangents[0], (tuple, list)):
            cotangents = tuple(cotangents[0])
        seeds = _check_like(cotangents, outs, "cotangents", "vjp")
        with enable_grad():
            grads = _differentiate(outs, tracked, seeds, keep or any(_on_graph(s) for s in seeds))
        return tuple(_detach(g, keep) for g in grads)

    value = tuple(_detach(o, keep) for o in outs) if many else _detach(outs[0], keep)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def _on_graph(x: Any) -> bool:
    return isinstance(x, Tensor) and x.requires_grad


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False) -> Tuple[Any, ...]:
    """``(f(*primals), J @ tangents)``: the Jacobian-vector product, exactly.

    Reverse mode gives ``g(u) = J^T u`` for any cotangent ``u``.  That map is
    linear in ``u``, so differentiating ``<g(u), v>`` with respect to ``u``
    gives back ``J v`` -- the *double-backward trick*: two reverse passes
    (the first recorded with ``create_graph=True``), no finite differences.
    The value of ``u`` does not matter; zeros are used.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("func.jvp: primals and tangents must be tuples (as torch.func.jvp)")
    nums = tuple(range(len(primals)))
    if not nums:
        raise ValueError("func.jvp: needs at least one primal")
    out, tracked, originals = _call(f, tuple(primals), nums, "jvp")
    out, aux = _split_aux(out, has_aux, "jvp")
    outs, many = _outputs(out, "jvp")
    vs = _check_like(tuple(tangents), tracked, "tangents", "jvp")
    keep = _needs_graph(originals, outs, tracked) or any(_on_graph(v) for v in vs)
    aux = _release_aux(aux, tracked, keep)
    with enable_grad():
        us = [_dummy_cotangent(o) for o in outs]
        g = _differentiate(outs, tracked, us, create_graph=True)  # g = J^T u, a graph in u
        pairing = [_inner(gi, vi) for gi, vi in zip(g, vs)]
        total = _sum_nodes(pairing)
        if total is None or not _depends(total):
            products = [_zeros_like(o) for o in outs]
        else:
            products = _differentiate([total], us, [None], keep)
    products = [_detach(p, keep) for p in products]
    values = [_detach(o, keep) for o in outs]
    result = (tuple(values), tuple(products)) if many else (values[0], products[0])
    return result + (aux,) if has_aux else result


def _dummy_cotangent(out: Any) -> Any:
    """A leaf ``u`` shaped like ``out`` to differentiate with respect to (its value is irrelevant)."""
    if isinstance(out, Value):
        return Value(0.0)
    return Tensor(array_module(out._data).zeros(out.shape, dtype=out.dtype), requires_grad=True)


def _inner(a: Any, b: Any) -> Any:
    """``<a, b>`` summed over all elements (a node)."""
    if isinstance(a, Value):
        return a * b
    return (a * b).sum()


def _sum_nodes(nodes: Sequence[Any]) -> Any:
    total = None
    for node in nodes:
        total = node if total is None else total + node
    return total


# ---------------------------------------------------------------------------
# Jacobians and Hessians
# ---------------------------------------------------------------------------


def jacobian(f: Callable, argnums: ArgNums = 0, has_aux: bool = False) -> Callable:
    """``f -> (lambda *args: d f / d args[argnums])`` as a full Jacobian (reverse mode, ``torch.func.jacrev``).

    For an output of shape ``O`` and an argument of shape ``I`` the Jacobian has
    shape ``O + I`` (one reverse pass per output element).  A tuple ``argnums``
    gives a tuple of Jacobians; a function returning a tuple gives a tuple (per
    output) of those.  Value functions give Values (``J[i]`` = d out / d arg i).
    """

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), "jacobian")
        out, tracked, originals = _call(f, args, nums, "jacobian", kwargs)
        out, aux = _split_aux(out, has_aux, "jacobian")
        outs, many = _outputs(out, "jacobian")
        keep = _needs_graph(originals, outs, tracked)
        aux = _release_aux(aux, tracked, keep)
        per_output = []
        with enable_grad():
            for o in outs:
                per_output.append(_jacobian_blocks(o, tracked, keep))
        result = [_pack([_detach(b, keep) for b in blocks], argnums) for blocks in per_output]
        result = tuple(result) if many else result[0]
        return (result, aux) if has_aux else result

    return wrapper


jacrev = jacobian


def _jacobian_blocks(out: Any, inputs: List[Any], create_graph: bool) -> List[Any]:
    """``[d out / d x for x in inputs]``, each of shape ``out.shape + x.shape``."""
    if isinstance(out, Value):
        return _differentiate([out], inputs, [None], create_graph)
    rows: List[List[Any]] = [[] for _ in inputs]
    n = out._data.size
    xp = array_module(out._data)
    for k in range(n):
        seed = xp.zeros(n, dtype=out.dtype)
        seed[k] = 1.0
        grads = _differentiate([out], inputs, [Tensor(seed.reshape(out.shape))], create_graph)
        for row, g in zip(rows, grads):
            row.append(g)
    blocks = []
    for x, row in zip(inputs, rows):
        if n == 0:
            blocks.append(Tensor(xp.zeros(out.shape + x.shape, dtype=x.dtype)))
        elif create_graph:
            blocks.append(stack(row).reshape(out.shape + x.shape))
        else:
            blocks.append(Tensor(xp.stack([g._data for g in row]).reshape(out.shape + x.shape)))
    return blocks


def hessian(f: Callable, argnums: ArgNums = 0) -> Callable:
    """``f -> (lambda *args: d^2 f / d args[argnums]^2)`` for a scalar-valued ``f``.

    The Jacobian of the gradient (reverse over reverse).  For an argument of
    shape ``I`` the Hessian has shape ``I + I`` (``(n, n)`` for a vector); a
    tuple ``argnums`` gives a tuple of tuples, ``H[i][j] = d^2 f / d arg_i d arg_j``
    of shape ``I_i + I_j``, as ``torch.func.hessian``.
    """
    return jacobian(grad(f, argnums), argnums)


def hvp(f: Callable, primals: Any, tangents: Any) -> Tuple[Any, Any]:
    """``(f(*primals), H @ tangents)`` for a scalar-valued ``f``, without forming ``H``.

    Two reverse passes: ``g = grad f`` recorded with ``create_graph=True``, then
    ``d <g, v> / d x = H v`` (the Hessian is symmetric).  ``primals`` and
    ``tangents`` are a tuple each (or a single Tensor/Value each); the product
    has the same structure, as ``torch.autograd.functional.hvp``.
    """
    single = not isinstance(primals, (tuple, list))
    primals = (primals,) if single else tuple(primals)
    tangents = (tangents,) if not isinstance(tangents, (tuple, list)) else tuple(tangents)
    nums = tuple(range(len(primals)))
    if not nums:
        raise ValueError("func.hvp: needs at least one primal")
    out, tracked, originals = _call(f, primals, nums, "hvp")
    _scalar_output(out, "hvp")
    vs = _check_like(tangents, tracked, "tangents", "hvp")
    keep = _needs_graph(originals, [out], tracked) or any(_on_graph(v) for v in vs)
    with enable_grad():
        g = _differentiate([out], tracked, [None], create_graph=True)
        total = _sum_nodes([_inner(gi, vi) for gi, vi in zip(g, vs)])
        if total is None or not _depends(total):
            products = [_zeros_like(x) for x in tracked]
        else:
            products = _differentiate([total], tracked, [None], keep)
    products = [_detach(p, keep) for p in products]
    value = _detach(out, keep)
    return value, (products[0] if single else tuple(products))

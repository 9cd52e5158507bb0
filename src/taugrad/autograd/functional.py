"""``taugrad.autograd.functional``: derivatives of whole functions, as ``torch.autograd.functional``.

``f`` takes Tensors (one, or a tuple) and returns a Tensor (or a tuple).  Each
helper runs ``f`` on fresh copies of the inputs that require grad, then uses
reverse mode (:func:`taugrad.tensors.engine.grad`):

* ``vjp(f, inputs, v)``   -> ``(f(inputs), v^T J)``           (one backward pass);
* ``jvp(f, inputs, v)``   -> ``(f(inputs), J v)``             (the double-vjp trick: J v = d/du (u^T J) v);
* ``jacobian(f, inputs)`` -> ``J``, shaped ``output.shape + input.shape`` (one pass per output element);
* ``hessian(f, inputs)``  -> the Jacobian of the gradient of a scalar ``f``;
* ``hvp(f, inputs, v)``   -> ``(f(inputs), H v)``;  ``vhp`` -> ``(f(inputs), v^T H)`` (H is symmetric).

Several inputs or outputs give tuples (tuples of tuples for ``jacobian`` and
``hessian``), as PyTorch.  ``create_graph=True`` keeps the results
differentiable; otherwise they are detached.
"""
from __future__ import annotations

from typing import Any, Callable, Tuple

from taugrad.grad_mode import enable_grad
from taugrad.tensors import engine
from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.core.rule import forward_of

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x: Any, what: str, op: str) -> Tuple[bool, tuple]:
    if isinstance(x, Tensor):
        return True, (x,)
    if isinstance(x, (tuple, list)) and all(isinstance(t, Tensor) for t in x):
        return False, tuple(x)
    raise TypeError(f"{op}: {what} must be a Tensor or a tuple of Tensors, got {type(x).__name__}")


def _tracked(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs that require grad: the inputs themselves under create_graph (to stay in their graph), else copies."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t)
        else:
            out.append(Tensor(t.detach()._data, requires_grad=True) if t.dtype.kind == "f" else t.detach())
    return tuple(out)


def _call(func: Callable, inputs: tuple, single: bool, op: str):
    with enable_grad():
        out = func(*inputs)
    single_out, outs = _as_tuple(out, "the function's output", op)
    return single_out, outs


def _grads(outputs, inputs, grad_outputs, create_graph: bool) -> list:
    """d(sum grad_outputs * outputs)/d inputs; zeros for inputs the outputs do not reach."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    wanted = [t for t in inputs if t.requires_grad]
    found = {}
    if pairs and wanted:
        grads = engine.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], retain_graph=True,
                            create_graph=create_graph, allow_unused=True)
        found = {id(t): g for t, g in zip(wanted, grads)}
    result = []
    for t in inputs:
        g = found.get(id(t))
        result.append(Tensor(_xp(t).zeros(t.shape, dtype=t.dtype)) if g is None else g)
    return result


def _xp(t: Tensor):
    """The array module of ``t``'s device: new arrays made beside it."""
    return array_module(t._data)


def _finish(x, create_graph: bool):
    if isinstance(x, tuple):
        return tuple(_finish(e, create_graph) for e in x)
    return x if create_graph else x.detach()


def _check_vectors(v, likes: tuple, what: str, op: str) -> tuple:
    if v is None:
        if len(likes) != 1 or likes[0].numel() != 1:
            raise RuntimeError(f"{op}: v can be omitted only for a single one-element {what}")
        return (Tensor(_xp(likes[0]).ones(likes[0].shape, dtype=likes[0].dtype)),)
    _, vs = _as_tuple(v, "v", op)
    if len(vs) != len(likes):
        raise RuntimeError(f"{op}: v has {len(vs)} tensors, the {what} has {len(likes)}")
    for a, b in zip(vs, likes):
        if a.shape != b.shape:
            raise RuntimeError(f"{op}: v has shape {tuple(a.shape)}, the {what} has shape {tuple(b.shape)}")
    return vs


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    single_in, ins = _as_tuple(inputs, "inputs", "vjp")
    ins = _tracked(ins, create_graph)
    single_out, outs = _call(func, ins, single_in, "vjp")
    vs = _check_vectors(v, outs, "output", "vjp")
    grads = tuple(_grads(outs, ins, vs, create_graph))
    return (_finish(outs[0] if single_out else outs, create_graph),
            _finish(grads[0] if single_in else grads, create_graph))


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs``."""
    single_in, ins = _as_tuple(inputs, "inputs", "jvp")
    ins = _tracked(ins, create_graph)
    vs = _check_vectors(v, ins, "input", "jvp")
    single_out, outs = _call(func, ins, single_in, "jvp")
    with enable_grad():
        dummies = tuple(Tensor(_xp(o).zeros(o.shape, dtype=o.dtype), requires_grad=True) for o in outs)
        grads = _grads(outs, ins, dummies, True)  # u^T J, linear in u
        pairs = [(g, w) for g, w in zip(grads, vs) if g.requires_grad]
        if pairs:
            jv = engine.grad([g for g, _ in pairs], dummies, [w for _, w in pairs], retain_graph=True,
                             create_graph=create_graph, allow_unused=True)
        else:
            jv = (None,) * len(dummies)
    jv = tuple(Tensor(_xp(o).zeros(o.shape, dtype=o.dtype)) if g is None else g for g, o in zip(jv, outs))
    return (_finish(outs[0] if single_out else outs, create_graph),
            _finish(jv[0] if single_out else jv, create_graph))


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``J[out_index + in_index] = d out[out_index] / d in[in_index]``.

    One Tensor for one input and one output; a tuple over inputs, over
    outputs, or a tuple (outputs) of tuples (inputs) when both are several.
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f"jacobian: unknown strategy {strategy!r}")
    single_in, ins = _as_tuple(inputs, "inputs", "jacobian")
    ins = _tracked(ins, create_graph)
    single_out, outs = _call(func, ins, single_in, "jacobian")
    blocks = []
    for out in outs:
        rows = [[] for _ in ins]
        for k in range(out.numel()):
            seed = _xp(out).zeros(out.numel(), dtype=out.dtype)
            seed[k] = 1
            grads = _grads([out], ins, [Tensor(seed.reshape(out.shape))], create_graph)
            for i, g in enumerate(grads):
                rows[i].append(g)
        per_input = []
        for i, t in enumerate(ins):
            if rows[i]:
                stacked = rows[i][0].reshape(1, *t.shape) if len(rows[i]) == 1 else _stack(rows[i])
                per_input.append(stacked.reshape(*out.shape, *t.shape))
            else:
                per_input.append(Tensor(_xp(t).zeros(out.shape + t.shape, dtype=t.dtype)))
        blocks.append(tuple(per_input))
    result = tuple(b[0] if single_in else b for b in blocks)
    return _finish(result[0] if single_out else result, create_graph)


def _stack(tensors: list) -> Tensor:
    return forward_of("stack")(tensors, 0)


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: ``H[i_index + j_index]`` (tuple of tuples for several inputs)."""
    single_in, ins = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        single_out, outs = _call(func, xs, single_in, "hessian")
        if not single_out or outs[0].numel() != 1:
            raise RuntimeError("hessian: the function must return a single Tensor with one element")
        grads = tuple(_grads([outs[0].reshape(())], xs, [Tensor(_xp(outs[0]).ones((), dtype=outs[0].dtype))], True))
        return grads[0] if single_in else grads

    return jacobian(gradient, inputs, create_graph=create_graph)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a scalar ``func``."""
    single_in, ins = _as_tuple(inputs, "inputs", "hvp")
    ins = _tracked(ins, create_graph)
    vs = _check_vectors(v, ins, "input", "hvp")
    single_out, outs = _call(func, ins, single_in, "hvp")
    if not single_out or outs[0].numel() != 1:
        raise RuntimeError("hvp: the function must return a single Tensor with one element")
    with enable_grad():
        grads = _grads([outs[0]], ins, [Tensor(_xp(outs[0]).ones(outs[0].shape, dtype=outs[0].dtype))], True)
        dot = None
        for g, w in zip(grads, vs):
            if g.requires_grad:
                term = (g * w).sum()
                dot = term if dot is None else dot + term
        hv = _grads([dot], ins, [Tensor(_xp(dot).ones((), dtype=dot.dtype))], create_graph) if dot is not None else \
            [Tensor(_xp(t).zeros(t.shape, dtype=t.dtype)) for t in ins]
    return (_finish(outs[0], create_graph), _finish(hv[0] if single_in else tuple(hv), create_graph))


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)``; the same as :func:`hvp` since the Hessian is symmetric."""
    return hvp(func, inputs, v, create_graph, strict)

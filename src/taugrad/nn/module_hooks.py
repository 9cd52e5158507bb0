"""Running a module's hooks around its ``forward``, as ``torch.nn.Module.__call__`` does.

The order of one call:

1. forward pre-hooks ``hook(module, args)`` (or ``hook(module, args, kwargs)``
   registered ``with_kwargs=True``): a non-None result replaces the arguments;
2. with backward hooks, the positional Tensor arguments pass through an
   identity op (:class:`BackwardHookInput`) whose backward receives their
   gradients together: ``grad_input``;
3. ``forward``;
4. forward hooks ``hook(module, args, output)`` (``with_kwargs``:
   ``hook(module, args, kwargs, output)``): a non-None result replaces the output;
5. with backward hooks, the output Tensors pass through an identity op
   (:class:`BackwardHookOutput`) whose backward receives ``grad_output``: the
   backward pre-hooks ``hook(module, grad_output)`` may replace it, then it is
   kept until the inputs' gradients arrive, where the full backward hooks
   ``hook(module, grad_input, grad_output)`` may replace ``grad_input``.

If forward raises, forward hooks registered ``always_call=True`` still run
(with output None); an error they raise then is turned into a warning.
"""
from __future__ import annotations

import warnings
from typing import Any

from taugrad.grad_mode import STATE as _grad_mode
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.custom_function import Function

#: a module's hook registries (OrderedDict hook id -> hook) and the id sets that mark their options
HOOK_REGISTRIES = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")


class _Pending:
    """One call's backward-hook state: which arguments were Tensors, and ``grad_output`` once it arrives."""

    __slots__ = ("module", "n_inputs", "grad_output", "inputs_hooked")

    def __init__(self, module: Any) -> None:
        self.module = module
        self.n_inputs = 0
        self.grad_output = None
        self.inputs_hooked = False


def _replaced(result: Any, old: tuple, what: str, module: Any) -> tuple:
    """A hook's replacement for ``old`` (a tuple of gradients), checked for its length."""
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(result) != len(old):
        raise RuntimeError(f"{type(module).__name__}: a backward hook returned {len(result)} {what} "
                           f"but {len(old)} were expected")
    return result


def _call_full_hooks(pending: _Pending, grad_input: tuple) -> tuple:
    module = pending.module
    for hook in list(module.__dict__.get("_backward_hooks", {}).values()):
        result = hook(module, grad_input, pending.grad_output)
        if result is not None:
            grad_input = _replaced(result, grad_input, "grad_input value(s)", module)
    return grad_input


class BackwardHookOutput(Function):
    """Identity on a module's output Tensors; its backward runs the module's backward pre-hooks."""

    @staticmethod
    def forward(ctx, pending, *outputs):
        ctx.pending = pending
        return outputs if len(outputs) > 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        pending = ctx.pending
        module = pending.module
        for hook in list(module.__dict__.get("_backward_pre_hooks", {}).values()):
            result = hook(module, grads)
            if result is not None:
                grads = _replaced(result, grads, "grad_output value(s)", module)
        pending.grad_output = grads
        if not pending.inputs_hooked:
            # no input needs a gradient: the full hooks run now, with None for each input (as PyTorch)
            _call_full_hooks(pending, (None,) * pending.n_inputs)
        return (None,) + tuple(grads)


class BackwardHookInput(Function):
    """Identity on a module's Tensor arguments; its backward runs the module's full backward hooks."""

    @staticmethod
    def forward(ctx, pending, *inputs):
        ctx.pending = pending
        return inputs if len(inputs) > 1 else inputs[0]

    @staticmethod
    def backward(ctx, *grads):
        needs = ctx.needs_input_grad[1:]
        grad_input = tuple(g if need else None for g, need in zip(grads, needs))
        grad_input = _call_full_hooks(ctx.pending, grad_input)
        return (None,) + grad_input


def _hook_inputs(pending: _Pending, args: tuple) -> tuple:
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    pending.n_inputs = len(positions)
    tensors = [args[i] for i in positions]
    if not (_grad_mode.enabled and any(t.requires_grad for t in tensors)):
        return args
    pending.inputs_hooked = True
    hooked = BackwardHookInput.apply(pending, *tensors)
    hooked = hooked if isinstance(hooked, tuple) else (hooked,)
    args = list(args)
    for i, t in zip(positions, hooked):
        args[i] = t
    return tuple(args)


def _hook_output(pending: _Pending, result: Any) -> Any:
    if isinstance(result, Tensor):
        return BackwardHookOutput.apply(pending, result) if result.requires_grad else result
    if not isinstance(result, tuple):
        warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of Tensors "
                      f"but received {type(result)}", stacklevel=3)
        return result
    positions = [i for i, r in enumerate(result) if isinstance(r, Tensor) and r.requires_grad]
    if not positions:
        return result
    hooked = BackwardHookOutput.apply(pending, *[result[i] for i in positions])
    hooked = hooked if isinstance(hooked, tuple) else (hooked,)
    out = list(result)
    for i, t in zip(positions, hooked):
        out[i] = t
    return tuple(out)


def call_with_hooks(module: Any, args: tuple, kwargs: dict) -> Any:
    """``module(*args, **kwargs)`` with its hooks (see the module docstring)."""
    d = module.__dict__
    result = None
    called = set()
    try:
        for hook_id, hook in list(d.get("_forward_pre_hooks", {}).items()):
            if hook_id in d.get("_forward_pre_hooks_with_kwargs", ()):
                new = hook(module, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {new}.")
                    args, kwargs = new
            else:
                new = hook(module, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        pending = None
        if (d.get("_backward_hooks") or d.get("_backward_pre_hooks")) and _grad_mode.enabled:
            pending = _Pending(module)
            args = _hook_inputs(pending, args)
        result = module.forward(*args, **kwargs)
        always = d.get("_forward_hooks_always_called", ())
        with_kwargs = d.get("_forward_hooks_with_kwargs", ())
        for hook_id, hook in list(d.get("_forward_hooks", {}).items()):
            if hook_id in always:
                called.add(hook_id)
            new = hook(module, args, kwargs, result) if hook_id in with_kwargs else hook(module, args, result)
            if new is not None:
                result = new
        if pending is not None:
            result = _hook_output(pending, result)
        return result
    except Exception:
        always = d.get("_forward_hooks_always_called", ())
        with_kwargs = d.get("_forward_hooks_with_kwargs", ())
        for hook_id, hook in list(d.get("_forward_hooks", {}).items()):
            if hook_id not in always or hook_id in called:
                continue
            try:
                new = hook(module, args, kwargs, result) if hook_id in with_kwargs else hook(module, args, result)
                if new is not None:
                    result = new
            except Exception as err:
                warnings.warn("module forward hook with ``always_call=True`` raised an exception that was silenced "
                              f"as another error was raised in forward: {err}", stacklevel=2)
        raise

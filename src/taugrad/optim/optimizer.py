"""The base class of the optimizers: parameter groups, per-parameter state, zero_grad.

An optimizer only reads ``p``'s array and ``p.grad`` (a Tensor, a plain
ndarray, or ``None`` for "no gradient, skip") and updates the array *in place*, so every reference to the parameter sees the
new values (for a Tensor it also bumps the version counter, so a graph recorded
before the step refuses to backpropagate, as in PyTorch).  The layout of ``param_groups`` and of ``state_dict()`` follows
``torch.optim`` (groups are dicts of hyperparameters plus ``"params"``; state is
keyed by the parameter's position across all groups).
"""
from __future__ import annotations

import copy
import math
from collections import defaultdict
from typing import Any, Callable, DefaultDict, Dict, Iterable, List, Optional

import numpy as np

from taugrad.grad_mode import enable_grad
from taugrad.optim.packed import step_packed
from taugrad.optim.state import SCALAR_STATE, state_tensor, unwrap_state, wrap_state
from taugrad.tensors.core.backend import array_module, device_of, is_array, to_device, to_host
from taugrad.tensors.ops.inplace import bump_version
from taugrad.tensors.core.node import Tensor

__all__ = ["Optimizer"]


def grad_array(param: Any) -> Optional[Any]:
    """The gradient of ``param`` as an array (of the parameter's backend), or ``None`` when it has none."""
    grad = getattr(param, "grad", None)
    if grad is None:
        return None
    array = grad if is_array(grad) else getattr(grad, "_data", None)
    if not is_array(array):
        raise TypeError(f"parameter gradient must be a Tensor or an ndarray, got {type(grad).__name__}")
    if array.shape != array_of(param).shape:
        raise ValueError(f"gradient of shape {tuple(array.shape)} does not match its parameter's shape "
                         f"{array_of(param).shape}")
    return array


def check_number(name: str, value: Any, low: float = 0.0, high: float = math.inf, high_open: bool = False) -> None:
    """Raise ``ValueError`` naming the hyperparameter unless ``low <= value <= high`` (or ``< high``)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"invalid {name}: {value!r} is not a number") from None
    upper_ok = number < high if high_open else number <= high
    if not (number >= low and upper_ok):  # written so that nan fails
        bound = f"[{low}, {high})" if high_open else f"[{low}, {high}]"
        raise ValueError(f"invalid {name}: {value!r} (must be in {bound})")


def check_loop_flags(name: str, defaults: Dict[str, Any]) -> None:
    """PyTorch's implementation switches, accepted as torch accepts them on the CPU.

    ``foreach``, ``fused`` and ``capturable`` choose how torch runs the same
    update (per tensor, one kernel per list, one fused kernel, CUDA-graph
    safe); taugrad runs its own way and gives the same numbers, so they
    change nothing here.  ``differentiable=True`` would record the step in the
    graph, which taugrad's steps are not: refused rather than ignored.
    """
    if defaults.get("differentiable"):
        raise NotImplementedError(f"{name}(differentiable=True): taugrad's optimizer steps are not recorded in the "
                                  "graph, so a step cannot be differentiated")
    if defaults.get("fused") and defaults.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


class Optimizer:
    """Holds parameter groups and per-parameter state; subclasses implement ``_update`` (or ``step``).

    ``params`` is an iterable (taken once: a generator or ``filter`` works) of
    parameters, of ``(name, parameter)`` pairs, or of dicts
    ``{"params": [...], **hyper}`` whose hyperparameters override ``defaults``
    for that group.  ``state`` maps each parameter to its dict of state
    tensors, as ``torch.optim.Optimizer.state``: a subclass written from
    PyTorch's documentation (``state = self.state[p]``, ``len(state) == 0``
    on the first step) works unchanged.
    """

    def __init__(self, params: Iterable[Any], defaults: Dict[str, Any]) -> None:
        self.defaults = defaults
        check_loop_flags(type(self).__name__, defaults)
        self.state: DefaultDict[Any, Dict[str, Any]] = defaultdict(dict)
        self.param_groups: List[Dict[str, Any]] = []
        if isinstance(params, Tensor) or is_array(params) or _is_parameter(params):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {typename(params)}")
        if isinstance(params, dict):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got a dict (wrap a parameter group in a list: [group])")
        groups = list(params)  # the one pass over a generator
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # -- groups -------------------------------------------------------------

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        """Add a group (this very dict, as in PyTorch), filling unspecified hyperparameters from ``defaults``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        if "params" not in param_group:
            raise TypeError("a parameter group must be a dict with a 'params' entry")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        params = [params] if _is_parameter(params) else list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in params:
            if not _is_parameter(p):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {typename(p)}")
            if isinstance(p, Tensor) and not (p.is_leaf or getattr(p, "retains_grad", False)):
                raise ValueError("can't optimize a non-leaf Tensor")
        param_group["params"] = params
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                kind = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {kind} to the optimizer")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params):
            raise ValueError("a parameter appears more than once in the optimizer's parameter groups")
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        lr = param_group.get("lr")
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        self._check_hyperparameters(param_group)
        self.param_groups.append(param_group)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])

    # -- stepping -----------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: set each ``p.grad`` to ``None`` (default) or fill it with zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grad_array(p)[...] = 0

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()`` if given.

        The closure (which should re-evaluate the model and call ``backward()``)
        is run with gradient recording on, as in PyTorch.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._update_group(group)
        return loss

    def _update_group(self, group: Dict[str, Any]) -> None:
        """One step for every parameter of ``group`` that has a gradient (subclasses may batch them).

        Parameters packed side by side on a device take one update for the
        whole group, and so do others for an optimizer that gathers them
        (:mod:`taugrad.optim.packed`); the rest one update each.  The rules
        work on arrays and Python numbers; ``self.state`` holds them as
        tensors (views of the same arrays, so both see every update).
        """
        params = group["params"]
        hyper = _plain_hyperparameters(group)
        arrays = [array_of(p) for p in params]
        grads = [grad_array(p) for p in params]
        if not step_packed(self, hyper, arrays, grads):
            for p, array, grad in zip(params, arrays, grads):
                if grad is None:
                    continue
                state = self.state[p]
                plain = unwrap_state(state)
                self._update(array, grad, plain, hyper)
                wrap_state(state, plain)
                if isinstance(p, Tensor):
                    bump_version(p)  # a graph recorded before the step can no longer be backpropagated
        for p in params:  # a rule that keeps nothing (plain SGD) leaves no entry, as torch's, packed or not
            if p in self.state and not self.state[p]:
                del self.state[p]

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        """Update the array ``param`` in place from ``grad`` (same backend; state made with their module)."""
        raise NotImplementedError

    # -- checkpoints --------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{hyper..., "params": [indices]}]}``.

        As in PyTorch, the per-parameter dicts are the optimizer's own (not
        copies): ``copy.deepcopy`` the result to keep a snapshot.
        """
        index: Dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                ids.append(index.setdefault(id(p), len(index)))
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {(index[id(key)] if id(key) in index else key): value for key, value in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Restore hyperparameters and state saved by :meth:`state_dict` (for the same parameters).

        The state tensors are copied onto each parameter's device and, for
        floating ones other than ``step``, cast to its dtype (as PyTorch casts).
        """
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= set(state_dict):
            raise ValueError("optimizer state dict must have the keys 'state' and 'param_groups'")
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups "
                             f"({len(saved_groups)}, this optimizer has {len(self.param_groups)})")
        params = {}
        for saved, group in zip(saved_groups, self.param_groups):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 f"optimizer's group ({len(saved['params'])} parameters, "
                                 f"{len(group['params'])} here)")
            params.update(zip(saved["params"], group["params"]))
        new_state: DefaultDict[Any, Dict[str, Any]] = defaultdict(dict)
        for key, saved_entry in state_dict["state"].items():
            p = params.get(key, params.get(int(key)) if isinstance(key, str) and key.isdigit() else None)
            if p is None:
                new_state[key] = saved_entry
                continue
            new_state[p] = {name: _cast_state(p, name, value, key) for name, value in saved_entry.items()}
        for saved, group in zip(saved_groups, self.param_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.param_groups[:] = saved_groups
        self.state = new_state

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for number, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {number}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _plain_hyperparameters(group: Dict[str, Any]) -> Dict[str, Any]:
    """``group`` itself, or a copy with one-element tensor hyperparameters (``lr=tensor(0.01)``) as numbers."""
    for key, value in group.items():
        if key != "params" and isinstance(value, Tensor):
            return {k: (v.item() if k != "params" and isinstance(v, Tensor) else v) for k, v in group.items()}
    return group


def _cast_state(p: Any, name: str, value: Any, index: Any) -> Any:
    """A saved state entry as this optimizer holds it: a tensor on ``p``'s device (a copy), floats in ``p``'s dtype."""
    if isinstance(value, dict):
        return {k: _cast_state(p, k, v, index) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    array = value if is_array(value) else getattr(value, "_data", None)
    if array is None:
        if isinstance(value, (list, tuple)):
            return type(value)(_cast_state(p, name, v, index) for v in value)
        array = np.asarray(value)
    target = array_of(p)
    if name == "step" or array.dtype.kind != "f" or array.ndim == 0 and name in SCALAR_STATE:
        return state_tensor(np.array(to_host(array)))  # counters stay on the host, in their dtype
    copied = array_module(target).array(to_device(array, device_of(target)), dtype=target.dtype)
    if copied.shape != target.shape:
        raise ValueError(f"optimizer state {name!r} of parameter {index} has shape {tuple(copied.shape)}, "
                         f"the parameter has shape {tuple(target.shape)}")
    return state_tensor(copied)


_LEGACY_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                 "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def typename(obj: Any) -> str:
    """``torch.typename``: a tensor's legacy type name (``taugrad.FloatTensor``), else the qualified class name."""
    if isinstance(obj, Tensor):
        return "taugrad." + _LEGACY_NAMES.get(obj._data.dtype.name, "Tensor")
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def array_of(param: Any):
    """The array an optimizer updates: a Tensor's own, or the ``.data`` array of a parameter-like object."""
    return param._data if isinstance(param, Tensor) else param.data


def _is_parameter(obj: Any) -> bool:
    """A Tensor, or any object holding an ndarray ``.data`` and a ``.grad`` (the scalar trainer's flat view)."""
    return isinstance(obj, Tensor) or (not is_array(obj) and is_array(getattr(obj, "data", None)))

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
from typing import Any, Callable, Dict, Iterable, List, Optional

import numpy as np

from taugrad.grad_mode import enable_grad
from taugrad.optim.packed import step_packed
from taugrad.tensors.core.backend import array_module, device_of, is_array, to_device
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
        raise ValueError(f"gradient of shape {array.shape} does not match its parameter's shape "
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


class Optimizer:
    """Holds parameter groups and per-parameter state; subclasses implement ``_update``.

    ``params`` is an iterable of parameters, or of dicts ``{"params": [...], **hyper}``
    whose hyperparameters override ``defaults`` for that group.
    """

    def __init__(self, params: Iterable[Any], defaults: Dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.param_groups: List[Dict[str, Any]] = []
        self.state: Dict[int, Dict[str, Any]] = {}  # keyed by id(param): Tensors need not be hashable
        if isinstance(params, dict) or is_array(params) or _is_parameter(params):
            raise TypeError(
                "params must be an iterable of parameters or of dicts, such as model.parameters(); "
                f"got {type(params).__name__}"
            )
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # -- groups -------------------------------------------------------------

    def add_param_group(self, group: Dict[str, Any]) -> None:
        """Add a group of parameters, filling unspecified hyperparameters from ``defaults``."""
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError("a parameter group must be a dict with a 'params' entry")
        params = group["params"]
        if isinstance(params, set):
            raise TypeError("parameters must be an ordered collection, not a set (their order keys the state)")
        params = [params] if _is_parameter(params) else list(params)
        for p in params:
            if not _is_parameter(p):
                raise TypeError(f"optimizer can only update Tensors, got {type(p).__name__}")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params) or any(id(p) in seen for p in params):
            raise ValueError("a parameter appears more than once in the optimizer's parameter groups")
        new_group = {**self.defaults, **group, "params": params}
        self._check_hyperparameters(new_group)
        self.param_groups.append(new_group)

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
        (:mod:`taugrad.optim.packed`); the rest one update each.
        """
        params = group["params"]
        arrays = [array_of(p) for p in params]
        grads = [grad_array(p) for p in params]
        if step_packed(self, group, arrays, grads):
            return
        for p, array, grad in zip(params, arrays, grads):
            if grad is None:
                continue
            self._update(array, grad, self.state.setdefault(id(p), {}), group)
            if isinstance(p, Tensor):
                bump_version(p)  # a graph recorded before the step can no longer be backpropagated

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        """Update the array ``param`` in place from ``grad`` (same backend; state made with their module)."""
        raise NotImplementedError

    # -- checkpoints --------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{hyper..., "params": [indices]}]}``, copied."""
        index = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index[id(p)] = ids_next = len(index)
                ids.append(ids_next)
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {index[key]: copy.deepcopy(value) for key, value in self.state.items() if key in index}
        return {"state": state, "param_groups": copy.deepcopy(groups)}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Restore hyperparameters and state saved by :meth:`state_dict` (for the same parameters)."""
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError("optimizer state dict must have exactly the keys 'state' and 'param_groups'")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"optimizer state dict has {len(saved_groups)} parameter groups, this optimizer has {len(self.param_groups)}"
            )
        params = []
        for number, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"parameter group {number} has {len(saved['params'])} parameters in the state dict, "
                    f"{len(group['params'])} here"
                )
            params.extend(zip(saved["params"], group["params"]))
        new_state: Dict[int, Dict[str, Any]] = {}
        saved_state = {int(k): v for k, v in state_dict["state"].items()}
        for index, p in params:
            if index not in saved_state:
                continue
            entry = {}
            for name, value in saved_state[index].items():
                if value is not None and not isinstance(value, (int, float)):
                    array = value if is_array(value) else getattr(value, "_data", value)
                    if not is_array(array):
                        array = np.asarray(array)
                    if array.ndim == 0:  # a counter such as 'step' (PyTorch keeps it as a 0-d tensor)
                        entry[name] = array.item()
                        continue
                    target = array_of(p)
                    # on the parameter's device, as torch casts state there; a copy: the state dict stays untouched
                    value = array_module(target).array(to_device(array, device_of(target)), dtype=target.dtype)
                    if value.shape != array_of(p).shape:
                        raise ValueError(
                            f"optimizer state {name!r} of parameter {index} has shape {value.shape}, "
                            f"the parameter has shape {array_of(p).shape}"
                        )
                entry[name] = value
            new_state[id(p)] = entry
        for saved, group in zip(saved_groups, self.param_groups):
            for key, value in saved.items():
                if key != "params":
                    group[key] = tuple(value) if isinstance(value, list) else value
        self.state = new_state

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for number, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {number}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def array_of(param: Any):
    """The array an optimizer updates: a Tensor's own, or the ``.data`` array of a parameter-like object."""
    return param._data if isinstance(param, Tensor) else param.data


def _is_parameter(obj: Any) -> bool:
    """A Tensor, or any object holding an ndarray ``.data`` and a ``.grad`` (the scalar trainer's flat view)."""
    return isinstance(obj, Tensor) or (not is_array(obj) and is_array(getattr(obj, "data", None)))

"""Adam and AdamW: adaptive moment estimation (Kingma & Ba, 2015; Loshchilov & Hutter, 2019)."""
from __future__ import annotations

import itertools
import math
from typing import Any, Dict, Iterable, List, Tuple

import numpy as np

from taugrad.optim.optimizer import Optimizer, check_number
from taugrad.tensors.backend import array_module, device_of
from taugrad.tensors.node import Tensor
from taugrad.tensors.ops.inplace import bump_version

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    r"""Adam as in ``torch.optim.Adam``; step ``t`` (from 1) for ``p`` with gradient ``g``:

    .. code-block:: text

        g = -g                                  if maximize
        g = g + weight_decay * p                (Adam: L2 penalty in the gradient)
        p = p - lr * weight_decay * p           (AdamW instead: decoupled decay)
        m = beta1 * m + (1 - beta1) * g         first moment, m0 = 0
        v = beta2 * v + (1 - beta2) * g**2      second moment, v0 = 0
        m_hat = m / (1 - beta1**t)
        v_hat = v / (1 - beta2**t)              (amsgrad: v_max = max(v_max, v), v_hat from v_max)
        p = p - lr * m_hat / (sqrt(v_hat) + eps)
    """

    _decoupled_weight_decay = False

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: Dict[str, Any]) -> None:
        check_number("learning rate", group["lr"])
        check_number("epsilon", group["eps"])
        betas = group["betas"]
        if len(betas) != 2:
            raise ValueError(f"invalid betas: {betas!r} (need two numbers)")
        check_number("beta parameter at index 0", betas[0], 0.0, 1.0, high_open=True)
        check_number("beta parameter at index 1", betas[1], 0.0, 1.0, high_open=True)
        check_number("weight_decay", group["weight_decay"])

    def _update_flat(self, group: Dict[str, Any], arrays: List[Any], grads: List[Any]) -> bool:
        """The step of a whole group as a few operations on one flat array, when it can be.

        A model has many small parameters (the GPT of the lecture: 94 tensors)
        and a dozen array operations each per step: run per parameter, the
        step is mostly call overhead.  So the moments of a group live in two
        flat arrays (``state[...]["exp_avg"]`` are views into them, shaped like
        the parameters), the gradients are gathered into a third, the moments
        and the update are computed once over all of them, and each parameter
        only subtracts its slice.  The same operations in the same order as
        :meth:`_update`, so the numbers are identical; any case it does not
        cover (a parameter without gradient, mixed dtypes, amsgrad, maximize,
        moments replaced by ``load_state_dict``, subclasses with their own
        rule) takes the per-parameter path.
        """
        flat = self._flat_group(group, arrays, grads) if type(self)._update is Adam._update else None
        if flat is None:
            return False
        params, states, (exp_avg, exp_avg_sq, scratch, flat_grad, updates, flat_params) = flat
        xp = array_module(exp_avg)
        xp.concatenate([g.reshape(-1) for g in grads], out=flat_grad)
        step = states[0]["step"] + 1
        for state in states:
            state["step"] = step
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        if weight_decay != 0 and not self._decoupled_weight_decay:
            xp.concatenate([a.reshape(-1) for a in arrays], out=scratch)
            scratch *= weight_decay
            flat_grad += scratch
        xp.multiply(flat_grad, 1 - beta1, out=scratch)
        exp_avg *= beta1
        exp_avg += scratch
        xp.multiply(flat_grad, 1 - beta2, out=scratch)
        scratch *= flat_grad
        exp_avg_sq *= beta2
        exp_avg_sq += scratch
        denominator = xp.sqrt(exp_avg_sq, out=scratch)
        denominator /= math.sqrt(1 - beta2**step)
        denominator += eps
        update = xp.divide(exp_avg, denominator, out=scratch)
        update *= lr / (1 - beta1**step)
        decay = 1 - lr * weight_decay if weight_decay != 0 and self._decoupled_weight_decay else None
        if decay is not None and not isinstance(flat_grad, np.ndarray):
            # on a device, where each operation is a kernel launch: the decayed parameters computed
            # flat (the same two roundings), then one copy each instead of two updates each.  (On the
            # CPU a column-major weight would be copied to flatten it: the per-parameter path is cheaper.)
            xp.concatenate([a.reshape(-1) for a in arrays], out=flat_grad)  # the gradients are used up
            flat_grad *= decay
            flat_grad -= update
            for p, array, new in zip(params, arrays, flat_params):
                array[...] = new
                if isinstance(p, Tensor):
                    bump_version(p)
            return True
        for p, array, u in zip(params, arrays, updates):
            if decay is not None:
                array *= decay
            array -= u
            if isinstance(p, Tensor):
                bump_version(p)  # a graph recorded before the step can no longer be backpropagated
        return True

    def _flat_group(self, group: Dict[str, Any], arrays: List[Any], grads: List[Any]):
        """``(params, states, buffers)`` for the flat step, or None where it does not apply."""
        if group["amsgrad"] or group["maximize"]:
            return None
        params = group["params"]
        if any(g is None for g in grads):
            return None
        first_array = arrays[0]
        dtype, kind = first_array.dtype, type(first_array)
        if dtype.kind != "f" or any(a.dtype != dtype or g.dtype != dtype or type(a) is not kind or type(g) is not kind
                                    for a, g in zip(arrays, grads)):
            return None  # mixed dtypes or array types (one flat array needs one of each)
        if kind is not np.ndarray and len({device_of(a) for a in arrays}) != 1:
            return None  # parameters on several devices of one backend
        states = [self.state.setdefault(id(p), {}) for p in params]
        # kept on the optimizer, not in the group: param_groups and state_dict() stay torch's
        cached = self.__dict__.setdefault("_flat_adam", {}).get(id(group))
        first = states[0].get("step")
        if cached is not None and cached[0] == [id(p) for p in params] and type(cached[1][0]) is kind and all(
                s.get("exp_avg") is m and s.get("exp_avg_sq") is v and s["step"] == first
                for s, m, v in zip(states, cached[2], cached[3])):
            return params, states, cached[1]
        # (re)build the flat moments from the per-parameter ones, all at the same step
        if any(states) and not all(s.get("step") == first and "exp_avg" in s for s in states):
            return None
        sizes = [a.size for a in arrays]
        ends = list(itertools.accumulate(sizes))
        total = ends[-1] if ends else 0
        xp = array_module(first_array)  # the moments live on the parameters' device
        exp_avg, exp_avg_sq = xp.zeros(total, dtype), xp.zeros(total, dtype)
        views_m, views_v = [], []
        for state, array, end, size in zip(states, arrays, ends, sizes):
            m = exp_avg[end - size:end].reshape(array.shape)
            v = exp_avg_sq[end - size:end].reshape(array.shape)
            if state:
                m[...] = state["exp_avg"]
                v[...] = state["exp_avg_sq"]
            else:
                state["step"] = 0
            state["exp_avg"], state["exp_avg_sq"] = m, v
            views_m.append(m)
            views_v.append(v)
        scratch = xp.empty(total, dtype)
        updates = [scratch[end - size:end].reshape(a.shape) for a, end, size in zip(arrays, ends, sizes)]
        flat_grad = xp.empty(total, dtype)
        flat_params = [flat_grad[end - size:end].reshape(a.shape) for a, end, size in zip(arrays, ends, sizes)]
        buffers = (exp_avg, exp_avg_sq, scratch, flat_grad, updates, flat_params)
        self._flat_adam[id(group)] = ([id(p) for p in params], buffers, views_m, views_v)
        return params, states, buffers

    _elementwise_update = True  # each element from the same elements only: a group may run as one array

    def _update(self, param: Any, grad: Any, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        xp = array_module(param)  # state and temporaries on the parameter's device
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(param)
            state["exp_avg_sq"] = xp.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = xp.zeros_like(param)
        state["step"] += 1
        step = state["step"]
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]

        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            if self._decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param

        # every term in place through one scratch array: a model has many small
        # parameters, and each temporary costs an allocation per parameter per step
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        scratch = xp.multiply(grad, 1 - beta1, dtype=param.dtype)
        exp_avg *= beta1
        exp_avg += scratch
        xp.multiply(grad, 1 - beta2, out=scratch)
        scratch *= grad
        exp_avg_sq *= beta2
        exp_avg_sq += scratch
        if group["amsgrad"]:
            xp.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
            second_moment = state["max_exp_avg_sq"]
        else:
            second_moment = exp_avg_sq

        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        denominator = xp.sqrt(second_moment, out=scratch)
        denominator /= math.sqrt(bias_correction2)
        denominator += eps
        update = xp.divide(exp_avg, denominator, out=scratch)
        update *= lr / bias_correction1
        param -= update


class AdamW(Adam):
    """Adam with decoupled weight decay (``torch.optim.AdamW``): ``p = p - lr * weight_decay * p``
    before the Adam step, instead of adding ``weight_decay * p`` to the gradient.  Default
    ``weight_decay=1e-2`` as in PyTorch."""

    _decoupled_weight_decay = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)

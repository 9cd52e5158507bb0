"""How an optimizer's per-parameter state is held: tensors, as ``torch.optim`` holds it.

The update rules work on arrays and Python numbers (a dozen array
operations per parameter: a tensor op each would cost more in calls than
the maths).  ``optimizer.state[p]`` holds tensors over those very arrays,
so a rule's in-place update is seen through the tensors, and a user's
in-place change of a tensor is seen by the rule.  The scalar entries
(``step``) are 0-d tensors of the default float dtype, as PyTorch's.
"""
from __future__ import annotations

from typing import Any, Dict

import numpy as np

from taugrad.tensors.core.backend import is_array
from taugrad.tensors.core.dtypes import DEFAULT_FLOAT
from taugrad.tensors.core.node import Tensor, make

__all__ = ["SCALAR_STATE", "scalar_tensor", "state_tensor", "unwrap_state", "wrap_state"]

#: The state entries PyTorch keeps as 0-d tensors of the default float dtype
#: (counters and scalar products); the rules read and write them as Python numbers.
SCALAR_STATE = frozenset({"step", "mu_product", "eta", "mu"})


def scalar_tensor(value: float) -> Tensor:
    """A 0-d host tensor of the default float dtype holding ``value`` (PyTorch's ``step`` tensors)."""
    return make(np.array(value, dtype=DEFAULT_FLOAT[0]), (), None)


def state_tensor(array: Any) -> Tensor:
    """A tensor over ``array`` (no copy, no graph): what ``optimizer.state[p]`` holds."""
    return make(array, (), None)


def unwrap_state(state: Dict[str, Any]) -> Dict[str, Any]:
    """The rule's view of a parameter's state: arrays for tensors, Python numbers for the scalar entries."""
    plain = {}
    for key, value in state.items():
        if isinstance(value, Tensor):
            value = value._data.item() if key in SCALAR_STATE and value._data.ndim == 0 else value._data
        plain[key] = value
    return plain


def wrap_state(state: Dict[str, Any], plain: Dict[str, Any]) -> None:
    """Store what the rule left in ``plain`` back into ``state`` as tensors (the same tensors where they exist)."""
    for key, value in plain.items():
        held = state.get(key)
        if isinstance(held, Tensor):
            if held._data is value:
                continue
            if key in SCALAR_STATE and isinstance(value, (int, float)) and held._data.ndim == 0:
                held._data[...] = value
                continue
        if key in SCALAR_STATE and isinstance(value, (int, float)):
            state[key] = scalar_tensor(value)
        elif is_array(value):
            state[key] = state_tensor(value)
        else:
            state[key] = value



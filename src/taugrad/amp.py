"""``taugrad.amp``: mixed precision as ``torch.amp`` behaves where it cannot lower precision.

taugrad computes every op in its operands' own dtype, so there is nothing for
``autocast`` to switch:

* ``autocast("cuda")`` on a machine without CUDA is disabled with torch's
  warning, exactly as torch does there: the block runs unchanged.
* ``autocast("cpu")`` (torch would run matrix products in bfloat16) runs in
  float32 here, with one warning saying so, rather than pretending to have
  lowered precision: results are closer to float32 than torch's.

``GradScaler`` is a real loss scaler (torch's algorithm): ``scale`` multiplies
the loss by the scale (65536 to start), ``unscale_`` divides the gradients by
it and records whether any is inf or NaN, ``step`` skips the optimizer step
on such a step, and ``update`` halves the scale after a skipped step and
doubles it after ``growth_interval`` good ones.  For ``device="cuda"``
without CUDA it is disabled with torch's warning, and then ``scale`` returns
the loss unchanged and ``step`` just calls ``optimizer.step()``.
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Dict, Optional

from taugrad import cuda as _cuda
from taugrad.grad_mode import no_grad

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda")


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` accepts ``device_type`` (torch: cpu, cuda and a few accelerators)."""
    return device_type in _DEVICE_TYPES


class autocast:
    """``with autocast(device_type, dtype=None, enabled=True, cache_enabled=None):`` (also a decorator).

    A context that changes nothing: taugrad keeps each op in its operands'
    dtype.  Disabled with torch's warning when the device is unavailable.
    """

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: Optional[bool] = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device_type, self.fast_dtype, self._enabled = device_type, dtype, bool(enabled)
        if self._enabled and device_type == "cuda" and not _cuda.is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            self._enabled = False
        elif self._enabled:
            warnings.warn(f"taugrad: autocast('{device_type}') keeps every op in its operands' dtype "
                          "(no lowered precision); results are those of the tensors' own dtype", UserWarning,
                          stacklevel=2)

    def __enter__(self) -> "autocast":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs: Any = None):
    """Decorator for a custom Function's ``forward``: nothing to cast, so the function unchanged."""
    if fwd is None:
        return lambda f: f
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """Decorator for a custom Function's ``backward``: the function unchanged."""
    if bwd is None:
        return lambda f: f
    return bwd


class GradScaler:
    """Loss scaling for small-dtype gradients, with torch's arguments, state and update rule."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda" and not _cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval, self._growth_tracker = int(growth_interval), 0
        self._per_optimizer: Dict[int, Dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        """``outputs * scale`` (tensors inside lists, tuples and dicts too); unchanged when disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        return outputs * self._scale

    def _state(self, optimizer) -> Dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "found_inf": False})

    def unscale_(self, optimizer) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale, once per step."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["unscaled"]:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        inv, found = 1.0 / self._scale, False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inv)
                    if not bool(p.grad.isfinite().all()):
                        found = True
        state.update(unscaled=True, found_inf=found)

    def step(self, optimizer, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` after unscaling, skipped when a gradient is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if not state["unscaled"]:
            self.unscale_(optimizer)
        if state["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        """Halve the scale after a step with inf/NaN gradients; double it after ``growth_interval`` good steps."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        elif any(s["found_inf"] for s in self._per_optimizer.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                grown = self._scale * self._growth_factor
                if math.isfinite(grown):
                    self._scale = grown
                self._growth_tracker = 0
        self._per_optimizer.clear()

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def state_dict(self) -> Dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

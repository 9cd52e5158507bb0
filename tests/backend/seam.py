"""Running an op-table row on a device and comparing it with the CPU run.

The device run builds its inputs with ``device='cuda'`` (whatever backend is
registered for it: the strict fake or CuPy), runs the row's forward and
backward exactly as the CPU run does, and brings values and gradients back
with ``.cpu()``.  When the device run raises, :func:`escaped_call` names the
innermost line of taugrad's source it came from, so a failure reads
"op softmax: np.exp escaped at tensors/ops/elementwise.py:123: ...".
"""
from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any, List, Sequence

import numpy as np

import taugrad
import taugrad.functional
from tensor.helpers import TAUGRAD, Library, as_outputs, make_inputs

SRC = Path(taugrad.__file__).resolve().parent


class DeviceLibrary(Library):
    """The taugrad adapter of the op table, making every tensor on ``device``."""

    def __init__(self, device: str = "cuda") -> None:
        super().__init__("taugrad", taugrad, taugrad.functional)
        self.device = device

    def tensor(self, array: np.ndarray, requires_grad: bool = False) -> Any:
        return taugrad.tensor(np.array(array), device=self.device, requires_grad=requires_grad)

    def index(self, index: Any) -> Any:
        """Index arrays as tensors on the device (GPU code keeps its indices there)."""
        if isinstance(index, tuple):
            return tuple(self.index(part) for part in index)
        if isinstance(index, np.ndarray):
            return taugrad.tensor(index, device=self.device)
        return index

    def rmatmul(self, array: np.ndarray, x: Any) -> Any:
        return taugrad.tensor(array, device=self.device) @ x


def host(t: Any) -> np.ndarray:
    """A tensor's values as a NumPy array (from any device)."""
    assert isinstance(t, taugrad.Tensor), f"expected a taugrad.Tensor, got {type(t).__name__}"
    return t.detach().cpu().numpy()


def run(L: Library, op, case, arrays: Sequence[np.ndarray], upstream: Sequence[np.ndarray] | None):
    """Output values and input gradients of one row (gradients None without ``upstream``)."""
    inputs = [L.tensor(a, requires_grad=True) for a in arrays]
    outputs = as_outputs(op.fn(L, *inputs, **case.kwargs))
    values = [host(o) for o in outputs]
    if upstream is None:
        return values, None
    for k, (o, g) in enumerate(zip(outputs, upstream)):
        o.backward(L.const(g), retain_graph=k < len(outputs) - 1)
    grads: List[np.ndarray] = [np.zeros(x.shape) if x.grad is None else host(x.grad) for x in inputs]
    return values, grads


def escaped_call(error: BaseException) -> str:
    """``path:line: source`` of the innermost frame of taugrad's own code in ``error``'s traceback."""
    where = "no taugrad frame"
    for frame in traceback.extract_tb(error.__traceback__):
        try:
            path = Path(frame.filename).resolve()
        except OSError:
            continue
        if SRC in path.parents:
            where = f"{path.relative_to(SRC)}:{frame.lineno}: {(frame.line or '').strip()}"
    return where


def compare(name: str, got: Sequence[np.ndarray], want: Sequence[np.ndarray], tolerance) -> None:
    assert len(got) == len(want), f"{name}: {len(got)} arrays on the device, {len(want)} on the CPU"
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{name} {k}: shape {g.shape} on the device, {w.shape} on the CPU"
        assert g.dtype == w.dtype, f"{name} {k}: dtype {g.dtype} on the device, {w.dtype} on the CPU"
        if tolerance is None:
            np.testing.assert_array_equal(g, w, err_msg=f"{name} {k}: device != CPU")
        else:
            np.testing.assert_allclose(g, w, **tolerance, err_msg=f"{name} {k}: device vs CPU")


def check_row_on_device(op, case, seed: int, tolerance) -> None:
    """Values and gradients of ``op`` on the device equal (or, for CuPy, are close to) the CPU's.

    The inputs and the random upstream gradients are the CPU suite's
    (``make_inputs``); the upstream shapes come from a CPU forward.
    """
    arrays = make_inputs(op, case, seed)
    values, _ = run(TAUGRAD, op, case, arrays, None)
    rng = np.random.default_rng(seed + 1)
    upstream = [rng.standard_normal(v.shape).astype(v.dtype) for v in values]
    want_values, want_grads = run(TAUGRAD, op, case, arrays, upstream)
    try:
        got_values, got_grads = run(DeviceLibrary(), op, case, arrays, upstream)
    except Exception as error:  # noqa: BLE001 - reported with the line it escaped from
        raise AssertionError(f"op {op.name} on the device: {type(error).__name__}: {error}\n"
                             f"    at {escaped_call(error)}") from error
    where = f"{op.name} on shapes {case.shapes} with {case.kwargs}"
    compare(f"{where}: output", got_values, want_values, tolerance)
    compare(f"{where}: grad of input", got_grads, want_grads, tolerance)

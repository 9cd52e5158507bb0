"""Process-wide switches torch keeps at its top level: threads, deterministic algorithms, matmul precision.

* ``set_num_threads(n)`` / ``get_num_threads()``: the threads of the BLAS
  library under NumPy's matrix products (OpenBLAS or MKL), set at run time
  through the optional ``threadpoolctl`` package.  Without it the number is
  remembered and a warning says to set ``OPENBLAS_NUM_THREADS`` before Python
  starts; no result changes either way, only speed.
  ``set_num_interop_threads`` / ``get_num_interop_threads`` are accepted and
  remembered: taugrad runs one op at a time.
* ``use_deterministic_algorithms(mode, warn_only=False)``: remembered and
  reported back.  taugrad's CPU ops already give the same bits on every run.
* ``set_float32_matmul_precision("highest" | "high" | "medium")``: remembered
  and reported back; taugrad's float32 products are always float32 ("highest").
"""
from __future__ import annotations

import os
import warnings

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
           "get_float32_matmul_precision"]

_SETTINGS = {"threads": None, "interop": None, "deterministic": False, "warn_only": False, "precision": "highest"}
_PRECISIONS = ("highest", "high", "medium")


def _positive(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError(f"{name} expects a positive integer, got {n!r}")
    return n


def set_num_threads(n: int) -> None:
    """Use ``n`` threads in NumPy's BLAS from now on (matrix products, convolutions' GEMMs)."""
    _SETTINGS["threads"] = _positive(n, "set_num_threads")
    try:
        import threadpoolctl  # optional dependency: changes a loaded BLAS's threads at run time
    except ImportError:
        warnings.warn("taugrad: set_num_threads() needs the threadpoolctl package to change NumPy's BLAS "
                      "threads while Python runs; set OPENBLAS_NUM_THREADS (or MKL_NUM_THREADS) before starting "
                      "it instead", stacklevel=2)
        return
    threadpoolctl.threadpool_limits(limits=n, user_api="blas")


def get_num_threads() -> int:
    """The threads NumPy's BLAS uses (what ``set_num_threads`` set, else the BLAS's own number)."""
    if _SETTINGS["threads"] is not None:
        return _SETTINGS["threads"]
    try:
        import threadpoolctl  # optional dependency, as above
    except ImportError:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            if os.environ.get(var, "").isdigit():
                return int(os.environ[var])
        return os.cpu_count() or 1
    blas = [info["num_threads"] for info in threadpoolctl.threadpool_info() if info.get("user_api") == "blas"]
    return max(blas) if blas else 1


def set_num_interop_threads(n: int) -> None:
    """Accepted and remembered: taugrad runs one op at a time."""
    _SETTINGS["interop"] = _positive(n, "set_num_interop_threads")


def get_num_interop_threads() -> int:
    """What ``set_num_interop_threads`` set, else the number of cores (torch's default)."""
    return _SETTINGS["interop"] or os.cpu_count() or 1


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Remembered (taugrad's CPU ops already give the same bits on every run)."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms: mode must be a bool, got {type(mode).__name__}")
    _SETTINGS["deterministic"], _SETTINGS["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _SETTINGS["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _SETTINGS["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """Remembered and reported back; float32 products stay float32 ("highest") in taugrad."""
    if precision not in _PRECISIONS:  # torch warns and changes nothing
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the "
                      "set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    _SETTINGS["precision"] = precision


def get_float32_matmul_precision() -> str:
    return _SETTINGS["precision"]

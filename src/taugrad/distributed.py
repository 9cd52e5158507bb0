"""``taugrad.distributed``: taugrad runs in one process, so there is no process group.

``is_available()`` is False.  The names that training scripts import exist,
so ``from torch.distributed import init_process_group`` works in a script
that only uses them when launched with several processes; calling one raises
a single line saying what to do instead.  ``is_initialized()`` is False and
``get_rank()``/``get_world_size()`` raise as torch does before
``init_process_group``.
"""
from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "all_reduce", "all_gather", "broadcast", "reduce", "ReduceOp",
           "DistributedUnavailableError"]

#: the one-line answer to every call that needs several processes
MESSAGE = ("taugrad runs in one process: it has no torch.distributed process group; for several "
           "machines, load the state dict into PyTorch")


class DistributedUnavailableError(RuntimeError):
    """Raised by every call that needs a process group."""


class ReduceOp:
    """torch's reduction names, so scripts can refer to them."""
    SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR, AVG = "sum", "product", "min", "max", "band", "bor", "bxor", "avg"


def is_available() -> bool:
    """False: taugrad has no distributed backend."""
    return False


def is_initialized() -> bool:
    """False: no process group is ever initialised."""
    return False


def _unavailable(op: str) -> NoReturn:
    raise DistributedUnavailableError(f"{op}: {MESSAGE}")


def init_process_group(*args: Any, **kwargs: Any) -> NoReturn:
    _unavailable("init_process_group")


def destroy_process_group(*args: Any, **kwargs: Any) -> NoReturn:
    _unavailable("destroy_process_group")


def _not_initialized() -> NoReturn:
    raise ValueError("Default process group has not been initialized, please make sure to call "
                     "init_process_group.")


def get_rank(group: Any = None) -> NoReturn:
    _not_initialized()


def get_world_size(group: Any = None) -> NoReturn:
    _not_initialized()


def barrier(*args: Any, **kwargs: Any) -> NoReturn:
    _unavailable("barrier")


def all_reduce(*args: Any, **kwargs: Any) -> NoReturn:
    _unavailable("all_reduce")


def all_gather(*args: Any, **kwargs: Any) -> NoReturn:
    _unavailable("all_gather")


def broadcast(*args: Any, **kwargs: Any) -> NoReturn:
    _unavailable("broadcast")


def reduce(*args: Any, **kwargs: Any) -> NoReturn:
    _unavailable("reduce")

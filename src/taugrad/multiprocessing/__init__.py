"""``taugrad.multiprocessing``: Python's :mod:`multiprocessing`, with tensors in shared memory (torch's API).

Everything of :mod:`multiprocessing` is here (``Process``, ``Queue``,
``set_start_method``...).  What this adds is how tensors travel (:mod:`taugrad.tensors.ops.sharing`): a tensor whose
array is in shared memory (``t.share_memory_()``, or ``model.share_memory()``
for every parameter and buffer) is sent to another process as the name of its
block, so both processes read and write the same numbers: the "hogwild"
pattern, where several processes train one model.  A child made by ``fork``
inherits the mapping; with ``spawn`` or ``forkserver`` the child maps the block
when it unpickles the tensor.  A tensor that is not shared is copied, as a
pickled tensor always is.

Only one sharing strategy exists here: POSIX shared memory by name
(torch's ``file_system``); ``set_sharing_strategy`` accepts torch's names.
"""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403 - torch.multiprocessing re-exports Python's whole API

__all__ = list(_mp.__all__) + ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]

_STRATEGIES = ("file_descriptor", "file_system")
_strategy = ["file_system"]


def get_all_sharing_strategies() -> set:
    """The strategies torch names; both mean "POSIX shared memory by name" here."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    """Accepts torch's strategy names (the memory is shared the same way for both)."""
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"set_sharing_strategy: unknown strategy {new_strategy!r}; expected one of {_STRATEGIES}")
    _strategy[0] = new_strategy

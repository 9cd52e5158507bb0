"""Reading the pickled CIFAR batches without letting a pickle run code.

A pickle is a small program: its ``GLOBAL``/``STACK_GLOBAL`` opcodes name any
importable callable (``os.system``, ``subprocess.Popen``...) and ``REDUCE``
calls it with arguments the file chooses, so ``pickle.load`` on a file from
the network runs whatever the file says.  :class:`RestrictedUnpickler` closes
that door at its only hinge, ``find_class``: every global a pickle names goes
through it, and it hands back an object from a fixed table of four, or
refuses.  Those four are all a CIFAR batch (a dict of lists, strings and one
NumPy array, written by Python 2's cPickle) needs:

* ``numpy.core.multiarray._reconstruct``: makes an empty array of a given
  shape and dtype code; ``BUILD`` then calls that array's own
  ``__setstate__``, which checks that the data's length fits the shape;
* ``numpy.ndarray`` and ``numpy.dtype``: the type passed to it and the
  dtype it builds (``numpy.dtype("u1")``);
* ``_codecs.encode``, limited to Latin-1: how Python 3 pickles ``bytes`` at
  protocol 2.

None of them touches files, processes or imports, whatever arguments they
get, and the dict, list, str, int and bytes opcodes build plain containers
without calling anything.  Object arrays could hold anything, so the loader
(:func:`load_batch`) also insists on ``uint8`` data afterwards.
"""
from __future__ import annotations

import _codecs
import io
import pickle
from typing import Any, Dict

import numpy as np

__all__ = ["RestrictedUnpickler", "safe_loads"]


def _latin1_encode(text: str, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles of ``bytes`` use it: Latin-1 only."""
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"refused: _codecs.encode with encoding {encoding!r}")
    return _codecs.encode(text, encoding, errors)


#: the ndarray reconstructor NumPy pickles name, whatever module it lives in in this NumPy version
_RECONSTRUCT = np.zeros(1).__reduce__()[0]

_ALLOWED: Dict[tuple, Any] = {
    ("numpy.core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy._core.multiarray", "_reconstruct"): _RECONSTRUCT,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("_codecs", "encode"): _latin1_encode,
}


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler whose ``find_class`` admits only NumPy's array reconstruction (see the module docstring)."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refused to unpickle global {module}.{name}: only NumPy arrays and plain containers "
                "are read") from None

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("refused: the pickle refers to a persistent object")


def safe_loads(data: bytes, encoding: str = "latin1") -> Any:
    """Unpickle ``data`` with :class:`RestrictedUnpickler` (``encoding`` as ``pickle.loads``: Python 2 strings)."""
    return RestrictedUnpickler(io.BytesIO(data), encoding=encoding).load()

"""Python that reads a value of the step: never replayed stale.

A replay runs no Python, so a Python decision taken on a value during the
capture (``if loss > x``, ``loss.item()``, ``print(t)``) would be taken again
with the old value.  Two cases:

* the user's code reads a value (``Tensor.item``/``bool``/``float``/``numpy()``,
  printing, ``float(array)``): the capture is abandoned and the function runs
  eagerly from then on, with a one-time ``CompileWarning`` naming the line;
* taugrad's own checks read a value to choose a path (``if targets.max() >= classes``,
  ``math.isfinite(loss)``): the choice is recorded as a *guard kernel*
  (the truth value, the integer, or the finiteness) and checked on every
  replay; a replay whose guard disagrees stops before it has changed any
  state and the call runs eagerly (after a state change: a RuntimeError).
  A float read by taugrad for anything else abandons the capture too.
"""
from __future__ import annotations

import dis
import linecache
import math
import os
import sys
import warnings

import numpy as np

from taugrad.compile.recording import CAPTURE, Kernel, RecArray, SlotRef, plain, slot_of

_COMPILE_DIR = os.path.dirname(os.path.abspath(__file__))
_PACKAGE_DIR = os.path.dirname(_COMPILE_DIR)
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))

#: Tensor methods through which the *user* reads a value
_USER_FACING = {"item", "_host_item", "tolist", "__bool__", "__float__", "__int__", "__index__", "__format__", "__repr__",
                "__str__", "__round__", "numpy", "__array__", "__iter__", "__complex__", "__len__"}


class CompileWarning(UserWarning):
    """A compiled function runs eagerly (value-dependent Python, hooks, anomaly mode...)."""


class Diverged(Exception):
    """A replay's guard disagreed with the capture; ``args[0]``: no state was changed yet."""


def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE_DIR) or path.startswith(_NUMPY_DIR)


def _user_line(frame) -> str:
    """``file:line: source`` of the first frame outside taugrad and NumPy."""
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    name, line = frame.f_code.co_filename, frame.f_lineno
    return f"{os.path.basename(name)}:{line}: {linecache.getline(name, line).strip()}"


def _who_reads(frame):
    """(internal, frame): the first frame outside NumPy and this package, and whether it is taugrad's own code."""
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if path.startswith(_NUMPY_DIR) or path.startswith(_COMPILE_DIR) or frame.f_code.co_filename.startswith("<"):
            frame = frame.f_back
            continue
        break
    if frame is None:
        return False, None
    if not path.startswith(_PACKAGE_DIR):
        return False, frame
    return frame.f_code.co_name not in _USER_FACING, frame


_CALLED: dict = {}


def _called_name(frame) -> str:
    """The name of the function the frame is calling now (``math.isfinite(loss)`` -> 'isfinite'), from its bytecode."""
    key = (frame.f_code, frame.f_lasti)
    name = _CALLED.get(key)
    if name is None:
        name = ""
        for ins in dis.get_instructions(frame.f_code):
            if ins.offset > frame.f_lasti:
                break
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME"):
                name = ins.argval
        _CALLED[key] = name
    return name


def _value_read(self, what: str, value, kind: str):
    """Handle the read of ``value`` (already computed from ``self``): guard it or abandon the capture."""
    tape = CAPTURE.tape
    if tape is None or CAPTURE.live or tape.poisoned is not None or self._tape != tape.number:
        return value
    internal, frame = _who_reads(sys._getframe(2))
    if internal:
        if kind == "float" and _called_name(frame) == "isfinite":
            kind = "finite"
        if kind not in _GUARDS:
            tape.poison(f"taugrad reads a value ({frame.f_code.co_name}, "
                        f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}) at {_user_line(frame)}")
            return value
        index = slot_of(tape, self)
        if kind == "finite":
            expected = math.isfinite(value)
        else:
            expected = value
        tape.kernels.append(Kernel(_GUARDS[kind], (SlotRef(index), expected), {}, None, [index], [], "guard",
                                   extra=_user_line(frame)))
        return value
    tape.poison(f"{what} reads a value of the step at {_user_line(sys._getframe(2))}")
    return value


def _expect_bool(a, expected, safe=True) -> None:
    if bool(a) is not expected:
        raise Diverged(safe)


def _expect_int(a, expected, safe=True) -> None:
    if int(a) != expected:
        raise Diverged(safe)


def _expect_finite(a, expected, safe=True) -> None:
    if math.isfinite(float(a)) is not expected:
        raise Diverged(safe)


_GUARDS = {"bool": _expect_bool, "int": _expect_int, "finite": _expect_finite}


def _install() -> None:
    def __bool__(self):
        return _value_read(self, "bool()", bool(plain(self)), "bool")

    def __int__(self):
        return _value_read(self, "int()", int(plain(self)), "int")

    def __index__(self):
        return _value_read(self, "an index", plain(self).__index__(), "int")

    def __float__(self):
        return _value_read(self, "float()", float(plain(self)), "float")

    def __complex__(self):
        return _value_read(self, "complex()", complex(plain(self)), "other")

    def item(self, *args):
        value = plain(self).item(*args)
        kind = "bool" if isinstance(value, bool) else ("int" if isinstance(value, int) else "float")
        return _value_read(self, ".item()", value, kind)

    def tolist(self):
        return _value_read(self, ".tolist()", plain(self).tolist(), "other")

    def tobytes(self, *args, **kwargs):
        return _value_read(self, ".tobytes()", plain(self).tobytes(*args, **kwargs), "other")

    def __repr__(self):
        return _value_read(self, "printing", repr(plain(self)), "other")

    def __str__(self):
        return _value_read(self, "printing", str(plain(self)), "other")

    def __format__(self, spec):
        return _value_read(self, "formatting", format(plain(self), spec), "other")

    for fn in (__bool__, __int__, __index__, __float__, __complex__, item, tolist, tobytes, __repr__, __str__,
               __format__):
        setattr(RecArray, fn.__name__, fn)


_install()


def warn_eager(name: str, why: str) -> None:
    """The one-time warning of a function that will run eagerly."""
    warnings.warn(f"taugrad.compile({name}): running eagerly from now on: {why}", CompileWarning, stacklevel=4)

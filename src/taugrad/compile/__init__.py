"""``taugrad.compile``: record a training step once, replay its array kernels into preallocated buffers.

Modules: :mod:`~taugrad.compile.recording` (the recording array and the tape),
:mod:`~taugrad.compile.reads` (value-dependent Python), :mod:`~taugrad.compile.patches`
(what is swapped in during a capture: creation functions, live optimizer and
scheduler steps, random draws), :mod:`~taugrad.compile.state` (what a function
touches; the guard), :mod:`~taugrad.compile.capture` (one recorded call),
:mod:`~taugrad.compile.plan` (buffers, lifetimes, replay), :mod:`~taugrad.compile.api`.
"""
from taugrad.compile.api import CompiledFunction, CompileWarning, compile

__all__ = ["compile", "CompiledFunction", "CompileWarning"]

"""The grader's handle on a learner's engine: in a sandbox process, or in this one.

Both kinds answer the same requests (see ``probe.Probe.handle``) and share one
deadline for the whole check, so a learner's endless loop becomes a clear
:class:`CheckError` instead of a hung grader.
"""
from __future__ import annotations

import json
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import List, Optional

from taugrad.learn.check.probe import LearnerError, Probe, Unusable

SANDBOX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox.py")
MEMORY_LIMIT = 2 * 1024**3  # bytes of address space for the learner's process


class CheckError(Exception):
    """The engine could not be graded at all: one line, plus the learner's traceback lines."""

    def __init__(self, message: str, frames: Optional[List[str]] = None):
        super().__init__(message)
        self.frames = list(frames or [])


class Engine:
    """Common part: the class's description and the deadline."""

    info: dict
    activity = "starting"

    def __init__(self, timeout: float):
        if not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def timed_out(self) -> CheckError:
        return CheckError(f"timed out after {self.timeout:g} s while {self.activity} "
                          f"(an endless loop in the engine? raise the limit with --timeout)")

    def close(self) -> None:
        """Release the engine (the sandbox process)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SandboxEngine(Engine):
    """The learner's file loaded and run in a child process with time and memory limits."""

    def __init__(self, path: str, class_name: str = "Value", timeout: float = 60.0,
                 memory: int = MEMORY_LIMIT):
        super().__init__(timeout)
        self.path = path
        self.activity = f"loading {os.path.basename(path)}"
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   PYTHONDONTWRITEBYTECODE="1")
        cpu_seconds = max(1, math.ceil(timeout)) + 1  # the wall-clock deadline is ours; CPU time is the kernel's
        self.proc = subprocess.Popen(
            [sys.executable, "-u", SANDBOX, path, class_name, str(memory), str(cpu_seconds), str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, start_new_session=True,  # its own process group: closing it ends all it started
        )
        self._buffer = b""
        try:
            first = self._receive()
        except BaseException:  # a timeout, Ctrl-C or SIGTERM while the learner's file loads: never leave it running
            self.close()
            raise
        if "fatal" in first:
            fatal = first["fatal"]
            self.close()
            raise CheckError(f"{os.path.basename(path)}: {fatal['message']}", fatal.get("frames"))
        self.info = first["ready"]

    def call(self, request: dict) -> dict:
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died() from None
        return self._receive()

    def _receive(self) -> dict:
        out = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = self.remaining()
            if left <= 0:
                self.close()
                raise self.timed_out()
            ready, _, _ = select.select([out], [], [], left)
            if not ready:
                continue
            chunk = os.read(out, 1 << 16)
            if not chunk:
                raise self._died()
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _died(self) -> CheckError:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self.close()
        if code is not None and code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with status {code} (os._exit?)"
        hint = " (out of memory or a crash in C code)" if code is not None and code < 0 else ""
        return CheckError(f"the engine's process {how}{hint} while {self.activity}")

    def close(self) -> None:
        """Kill the sandbox's whole process group (whatever the learner's code started too)."""
        proc = getattr(self, "proc", None)
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if proc.poll() is None:
                proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:  # a pipe the dead child left half-written
                pass

    def __del__(self):
        self.close()


class LocalEngine(Engine):
    """A class object already loaded in this process: called directly, bounded by an alarm where one is available."""

    def __init__(self, cls, timeout: float = 60.0):
        super().__init__(timeout)
        if not isinstance(cls, type):
            raise CheckError(f"taugrad.check needs a class or a path to a .py file, got {type(cls).__name__}")
        self.activity = f"inspecting {cls.__name__}"
        try:
            with self._alarm():
                self.probe = Probe(cls, _source_of(cls))
        except Unusable as err:
            raise CheckError(str(err)) from None
        except LearnerError as err:
            raise CheckError(f"{cls.__name__}(2.0) raised {err}", err.frames) from None
        self.info = self.probe.info()

    def call(self, request: dict) -> dict:
        if self.remaining() <= 0:
            raise self.timed_out()
        with self._alarm():
            answer = self.probe.handle(request)
        if answer.get("error", {}).get("type") == "_Timeout":  # the alarm went off inside the learner's code
            raise self.timed_out()
        # a round trip through JSON, as from the sandbox: the checks see plain data only
        return json.loads(json.dumps(answer))

    def _alarm(self):
        return _Alarm(self)


class _Timeout(BaseException):
    """Raised by the alarm inside the learner's code; a BaseException so that their ``except Exception`` lets it pass."""


class _Alarm:
    """SIGALRM at the deadline, in the main thread on Unix; elsewhere only the checks between calls hold."""

    def __init__(self, engine: LocalEngine):
        self.engine = engine
        self.armed = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def _fire(self, signum, frame):
        raise _Timeout()

    def __enter__(self):
        if self.armed:
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, max(self.engine.remaining(), 0.001))
        return self

    def __exit__(self, kind, error, tb):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        if kind is _Timeout or (kind is LearnerError and getattr(error, "kind", "") == "_Timeout"):
            raise self.engine.timed_out() from None
        return False


def _source_of(cls) -> Optional[str]:
    module = sys.modules.get(getattr(cls, "__module__", ""), None)
    return getattr(module, "__file__", None)

"""``taugrad.check``: grade a learner's ``Value`` class, from a file or a class object."""
from __future__ import annotations

import os
from typing import Union

from taugrad.learn.check.checks import Context, forward, rules, scaled_rules, sum_rule
from taugrad.learn.check.engine import MEMORY_LIMIT, CheckError, LocalEngine, SandboxEngine
from taugrad.learn.check.graphs import backward_twice, depth, graph_checks
from taugrad.learn.check.randomized import random_check
from taugrad.learn.check.faults import blame_composed
from taugrad.learn.check.faults import seed as seed_check
from taugrad.learn.check.report import NAMES, Check, Report

MAX_COUNT = 100_000


def check(engine: Union[type, str, os.PathLike], *, class_name: str = "Value", count: int = 100, seed: int = 0,
          timeout: float = 60.0, memory: int = MEMORY_LIMIT) -> Report:
    """Grade an autograd engine's ``Value`` class; returns a :class:`Report` (``report.ok``, ``print(report)``).

    ``engine`` is a class (graded in this process, bounded by ``timeout`` where
    a SIGALRM can interrupt it) or the path of a ``.py`` file (loaded in a
    separate process with ``timeout`` seconds and ``memory`` bytes, looking for
    the class ``class_name``).  ``count`` random expressions are checked against
    finite differences, drawn from ``seed``.

    Raises :class:`CheckError` (one line; ``err.frames`` holds the learner's own
    traceback lines) when the engine cannot be graded at all.
    """
    if not isinstance(count, int) or not 0 <= count <= MAX_COUNT:
        raise ValueError(f"count must be an integer from 0 to {MAX_COUNT}, got {count!r}")
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(engine, (str, os.PathLike)):
        path = os.fspath(engine)
        if not os.path.isfile(path):
            raise CheckError(f"{path}: no such file")
        if not class_name.isidentifier():
            raise CheckError(f"--class must be a Python name, got {class_name!r}")
        handle = SandboxEngine(path, class_name, timeout=timeout, memory=memory)
        source = path
    else:
        handle = LocalEngine(engine, timeout=timeout)
        source = None
    with handle:
        ctx = Context(handle, seed=seed)
        forward(ctx)
        seed_check(ctx)
        if ctx.stop is None:
            rules(ctx)
            scaled_rules(ctx)
            graph_checks(ctx)
            blame_composed(ctx)
            sum_rule(ctx)
            backward_twice(ctx)
            random_check(ctx, count)
            depth(ctx)
        else:  # every gradient is 0 for one reason: naming it once beats blaming every rule
            for name in ("rule", "accumulation", "order", "depth", "backward_twice", "random"):
                ctx.add(Check(name, None, True, severity="info", diagnosis=f"not graded: {ctx.stop}"))
    order = {name: i for i, name in enumerate(NAMES)}
    checks = sorted(ctx.checks, key=lambda c: order[c.name])
    info = handle.info
    return Report(info["class"], list(info["ops"]), checks, reflected=list(info["reflected"]),
                  attributes=dict(info["attributes"]), source=source)

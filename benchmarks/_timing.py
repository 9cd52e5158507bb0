"""Timing helpers shared by the benchmark scripts.

Engines are timed *alternately* in one process (A B C, B C A, C A B, ...), so
a slow phase of a shared machine (another job, CPU frequency changes) hits all
of them alike; the reported number is the median over rounds, which ignores
the odd interrupted round.
"""
from __future__ import annotations

import gc
import os
import random
import statistics
import time
from typing import Callable, Dict, List, Tuple


def time_calls(fn: Callable[[], object], number: int) -> float:
    """Seconds per call of ``fn``, over ``number`` back-to-back calls (GC paused)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - start) / number
    finally:
        if enabled:
            gc.enable()


def alternate(engines: Dict[str, Callable[[], object]], rounds: int, number: int,
              warmup: int = 2, settle: float = 0.0, threads_of: Dict[str, str] | None = None
              ) -> Dict[str, List[float]]:
    """Per-call seconds of each engine for every round, the engine order rotating each round.

    Before each timed block the engine runs once untimed (caches, lazily made
    buffers).  BLAS and OpenMP worker threads busy-wait for a while after
    their last job, and the spinning threads of one library would slow down
    an engine that uses another library's: so when the thread pool changes
    (``threads_of[name]``, the pool an engine runs on; engines not named
    share one) the block starts after sleeping ``settle`` seconds.  Without
    ``threads_of`` every block does.  A pause leaves every cache cold, and an
    engine that runs more Python suffers more from that; so after a pause the
    engine runs ``warmup`` untimed calls, not one, and the engine that follows
    a pause is not favoured or penalised against those that do not.
    """
    names = list(engines)
    for name in names:
        for _ in range(warmup):
            engines[name]()
    samples: Dict[str, List[float]] = {name: [] for name in names}
    pools = threads_of or {}
    pool = None
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            previous, pool = pool, pools.get(name, "")
            pause = settle and (threads_of is None or pool != previous)
            if pause:
                time.sleep(settle)
            for _ in range(warmup if pause else 1):
                engines[name]()
            samples[name].append(time_calls(engines[name], number))
    return samples


def load_average() -> float | None:
    """1-minute load average, or None where the OS does not report it."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def median(values: List[float]) -> float:
    return statistics.median(values)


def median_interval(values: List[float], confidence: float = 0.95, resamples: int = 2000,
                    seed: int = 0) -> Tuple[float, float]:
    """Percentile-bootstrap interval for the median of ``values`` (rounds resampled with replacement).

    How far the reported median could move if the same number of rounds were
    run again on the same machine: a ratio whose interval contains a target
    has not been shown to meet it or to miss it.  Seeded, so a run's output is
    reproducible from its samples.
    """
    if len(values) < 2:
        return (float("nan"), float("nan"))
    draw = random.Random(seed).choices
    medians = sorted(statistics.median(draw(values, k=len(values))) for _ in range(resamples))
    tail = (1.0 - confidence) / 2
    low = medians[int(tail * resamples)]
    high = medians[min(resamples - 1, int((1.0 - tail) * resamples))]
    return (low, high)


def spread(values: List[float]) -> float:
    """Relative half-width of the middle half of the samples (a robust +-)."""
    if len(values) < 4:
        return float("nan")
    q1, _, q3 = statistics.quantiles(values, n=4)
    return (q3 - q1) / 2 / statistics.median(values)


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss() -> bool:
    """Restart the peak-RSS high-water mark (Linux: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def rss_bytes() -> int:
    """Current resident set size (0 where /proc is unavailable)."""
    kib = _status_kib("VmRSS")
    return 0 if kib is None else kib * 1024


def peak_rss_bytes() -> int:
    """Peak resident set size since the last :func:`reset_peak_rss` (or process start)."""
    kib = _status_kib("VmHWM")
    if kib is not None:
        return kib * 1024
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if os.uname().sysname == "Darwin" else peak * 1024

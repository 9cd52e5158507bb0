"""Grad mode (and anomaly mode) are per thread: one thread's no_grad() never changes another's graph.

The threads are synchronised with events so that the blocks really overlap:
thread A is *inside* ``no_grad()`` while thread B records its graph, and the
other way round.
"""
import threading

import pytest

import taugrad

TIMEOUT = 10


class Worker(threading.Thread):
    """Runs ``fn``; keeps the exception (a failed assert) for the main thread to re-raise."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn = fn
        self.error = None

    def run(self):
        try:
            self.fn()
        except BaseException as err:  # noqa: BLE001 - re-raised in the main thread
            self.error = err


def _run_all(*fns):
    workers = [Worker(fn) for fn in fns]
    for w in workers:
        w.start()
    for w in workers:
        w.join(TIMEOUT)
        assert not w.is_alive(), "a worker thread hung (an event was never set)"
    for w in workers:
        if w.error is not None:
            raise w.error


def _wait(event):
    assert event.wait(TIMEOUT), "the other thread did not reach its checkpoint"


def test_no_grad_in_one_thread_does_not_stop_recording_in_another():
    a_inside = threading.Event()
    b_recorded = threading.Event()
    results = {}

    def thread_a():
        x = taugrad.ones(3, requires_grad=True)
        with taugrad.no_grad():
            a_inside.set()
            _wait(b_recorded)  # B records its graph while A is inside no_grad()
            y = x * 2
            results["a_enabled"] = taugrad.is_grad_enabled()
            results["a_requires_grad"] = y.requires_grad
        results["a_after"] = (x * 2).requires_grad

    def thread_b():
        _wait(a_inside)
        x = taugrad.ones(3, requires_grad=True)
        y = (x * 3).sum()
        results["b_enabled"] = taugrad.is_grad_enabled()
        results["b_requires_grad"] = y.requires_grad
        y.backward()
        results["b_grad"] = x.grad.tolist()
        b_recorded.set()

    _run_all(thread_a, thread_b)
    assert results == {
        "a_enabled": False, "a_requires_grad": False, "a_after": True,
        "b_enabled": True, "b_requires_grad": True, "b_grad": [3.0, 3.0, 3.0],
    }


def test_set_grad_enabled_false_in_one_thread_is_invisible_to_the_others():
    switched = threading.Event()
    checked = threading.Event()
    seen = {}

    def switcher():
        taugrad.set_grad_enabled(False)
        try:
            switched.set()
            _wait(checked)
            seen["switcher"] = taugrad.is_grad_enabled()
        finally:
            taugrad.set_grad_enabled(True)

    def observers():
        _wait(switched)
        x = taugrad.zeros(2, requires_grad=True)
        seen["observer"] = (taugrad.is_grad_enabled(), (x + 1).requires_grad)
        checked.set()

    _run_all(switcher, observers)
    assert seen == {"switcher": False, "observer": (True, True)}
    assert taugrad.is_grad_enabled()  # the main thread was never touched


def test_enable_grad_inside_no_grad_is_per_thread_too():
    a_in_enable = threading.Event()
    b_done = threading.Event()
    seen = {}

    def thread_a():
        x = taugrad.ones(2, requires_grad=True)
        with taugrad.no_grad():
            with taugrad.enable_grad():
                a_in_enable.set()
                _wait(b_done)
                seen["a"] = (x * x).requires_grad
            seen["a_back_in_no_grad"] = (x * x).requires_grad

    def thread_b():
        _wait(a_in_enable)
        x = taugrad.ones(2, requires_grad=True)
        with taugrad.no_grad():
            seen["b"] = (x * x).requires_grad
        b_done.set()

    _run_all(thread_a, thread_b)
    assert seen == {"a": True, "a_back_in_no_grad": False, "b": False}


def test_many_threads_alternating_modes_each_see_their_own():
    barrier = threading.Barrier(6, timeout=TIMEOUT)
    seen = {}

    def make(i):
        def work():
            x = taugrad.ones(2, requires_grad=True)
            mode = taugrad.no_grad() if i % 2 else taugrad.enable_grad()
            with mode:
                barrier.wait()  # every thread is inside its block at the same time
                recorded = [(x * k).requires_grad for k in range(50)]
                barrier.wait()
            seen[i] = set(recorded)
        return work

    _run_all(*(make(i) for i in range(6)))
    assert seen == {i: {i % 2 == 0} for i in range(6)}


def test_detect_anomaly_is_per_thread():
    a_inside = threading.Event()
    b_done = threading.Event()
    seen = {}

    def thread_a():
        x = taugrad.tensor([0.0], requires_grad=True)
        with taugrad.detect_anomaly():
            a_inside.set()
            _wait(b_done)
            with pytest.raises(taugrad.AnomalyError):
                x.log()
            seen["a"] = "raised"

    def thread_b():
        _wait(a_inside)
        x = taugrad.tensor([0.0], requires_grad=True)
        seen["b"] = x.log().item()  # -inf, no error: anomaly mode is on only in thread A
        b_done.set()

    _run_all(thread_a, thread_b)
    assert seen == {"a": "raised", "b": float("-inf")}

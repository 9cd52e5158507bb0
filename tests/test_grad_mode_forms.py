"""Audit of grad mode: set_grad_enabled forms, generator decorators, bare decorators, shared instances.

Each behaviour is compared with torch's (the reference) where torch has it.
"""
import threading

import pytest
import torch

import taugrad

LIBS = [taugrad, torch]


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    """A failing test must not leave grad mode off for the next one."""
    yield
    taugrad.set_grad_enabled(True)
    torch.set_grad_enabled(True)


@pytest.mark.parametrize("lib", LIBS, ids=["taugrad", "torch"])
def test_set_grad_enabled_plain_call_switches_at_once(lib):
    lib.set_grad_enabled(False)
    assert lib.is_grad_enabled() is False
    lib.set_grad_enabled(True)
    assert lib.is_grad_enabled() is True


@pytest.mark.parametrize("lib", LIBS, ids=["taugrad", "torch"])
@pytest.mark.parametrize("outer", [True, False])
def test_set_grad_enabled_as_context_manager_restores(lib, outer):
    lib.set_grad_enabled(outer)
    with lib.set_grad_enabled(not outer):
        assert lib.is_grad_enabled() is (not outer)
    assert lib.is_grad_enabled() is outer


@pytest.mark.parametrize("lib", LIBS, ids=["taugrad", "torch"])
def test_set_grad_enabled_restores_after_exception(lib):
    with pytest.raises(KeyError):
        with lib.set_grad_enabled(False):
            raise KeyError("x")
    assert lib.is_grad_enabled() is True


@pytest.mark.parametrize("lib", LIBS, ids=["taugrad", "torch"])
def test_set_grad_enabled_as_decorator(lib):
    @lib.set_grad_enabled(False)
    def inside():
        return lib.is_grad_enabled()

    assert lib.is_grad_enabled() is True  # decorating does not switch the mode
    assert inside() is False
    assert lib.is_grad_enabled() is True


def _mode_switches(lib):
    return [lib.no_grad, lib.enable_grad, lambda: lib.set_grad_enabled(False)]


@pytest.mark.parametrize("lib", LIBS, ids=["taugrad", "torch"])
@pytest.mark.parametrize("which", [0, 1, 2], ids=["no_grad", "enable_grad", "set_grad_enabled"])
def test_decorated_generator_runs_each_step_in_the_decorated_mode(lib, which):
    make = _mode_switches(lib)[which]
    expected = which == 1

    @make()
    def gen():
        seen = []
        for _ in range(3):
            seen.append(lib.is_grad_enabled())
            got = yield seen[-1]
            assert got == "ping"
        return seen

    outer = not expected
    lib.set_grad_enabled(outer)
    g = gen()
    steps = [next(g)]
    assert lib.is_grad_enabled() is outer  # the caller's mode between yields
    steps.append(g.send("ping"))
    assert lib.is_grad_enabled() is outer
    steps.append(g.send("ping"))
    with pytest.raises(StopIteration) as stop:
        g.send("ping")
    assert steps == [expected] * 3
    assert stop.value.value == [expected] * 3
    assert lib.is_grad_enabled() is outer


@pytest.mark.parametrize("lib", LIBS, ids=["taugrad", "torch"])
def test_decorated_generator_throw_and_close_run_in_the_mode(lib):
    seen = []

    @lib.no_grad()
    def gen():
        try:
            yield 1
        except ValueError:
            seen.append(("throw", lib.is_grad_enabled()))
            yield 2
        finally:
            seen.append(("finally", lib.is_grad_enabled()))

    g = gen()
    next(g)
    assert g.throw(ValueError("boom")) == 2
    g.close()
    assert seen == [("throw", False), ("finally", False)]
    assert lib.is_grad_enabled() is True


@pytest.mark.parametrize("lib", LIBS, ids=["taugrad", "torch"])
@pytest.mark.parametrize("name", ["no_grad", "enable_grad"])
def test_bare_decorator_without_parentheses(lib, name):
    switch = getattr(lib, name)

    @switch
    def inside(a, b=2):
        """Docstring kept."""
        return lib.is_grad_enabled(), a + b

    lib.set_grad_enabled(name != "no_grad")
    assert inside(1, b=3) == (name == "enable_grad", 4)
    assert inside.__doc__ == "Docstring kept."
    assert lib.is_grad_enabled() is (name != "no_grad")


def test_one_no_grad_instance_entered_by_two_threads_restores_each_threads_mode():
    shared = taugrad.no_grad()
    a_inside, b_inside, a_left = threading.Event(), threading.Event(), threading.Event()
    after = {}

    def a():  # grad on before entering
        with shared:
            a_inside.set()
            assert b_inside.wait(10)
        a_left.set()
        after["a"] = taugrad.is_grad_enabled()

    def b():  # grad off before entering; enters after A, leaves after A
        taugrad.set_grad_enabled(False)
        assert a_inside.wait(10)
        with shared:
            b_inside.set()
            assert a_left.wait(10)
        after["b"] = taugrad.is_grad_enabled()

    threads = [threading.Thread(target=fn) for fn in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert after == {"a": True, "b": False}


def test_nested_use_of_one_instance_still_works():
    shared = taugrad.enable_grad()
    with taugrad.no_grad():
        with shared:
            with shared:
                assert taugrad.is_grad_enabled()
            assert taugrad.is_grad_enabled()
        assert not taugrad.is_grad_enabled()

"""`taugrad check PATH.py`: exit status 0/1/2, text and --json output, one-line errors."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import micrograd.engine
import pytest

from taugrad.cli import main

GALLERY = Path(__file__).parent / "check_gallery"


def _run(capsys, *args):
    code = main(["check", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_correct_engine_exits_0_with_a_table(capsys):
    code, out, err = _run(capsys, GALLERY / "chapter_correct.py", "--count", "10")
    assert code == 0 and err == ""
    assert "ops found:     add mul pow relu tanh" in out
    assert "PASS  rule            mul" in out
    assert out.rstrip().endswith("OK: every check passed")


def test_micrograd_exits_0_and_warnings_do_not_fail(capsys):
    code, out, _ = _run(capsys, micrograd.engine.__file__, "--count", "10")
    assert code == 0
    assert "WARN  depth" in out and "recursive traversal fails near depth" in out
    assert "OK: every check passed (1 warning)" in out


def test_a_broken_engine_exits_1_and_json_follows_the_schema(capsys):
    code, out, err = _run(capsys, GALLERY / "mul_swapped.py", "--count", "10", "--json", "--seed", "3")
    assert code == 1 and err == ""
    data = json.loads(out)
    assert data["class"] == "Value" and data["ok"] is False
    assert data["ops"] == ["add", "mul", "pow", "relu", "tanh"]
    (rule,) = [c for c in data["checks"] if c["name"] == "rule" and c["op"] == "mul"]
    assert rule["ok"] is False and rule["severity"] == "error"
    assert rule["diagnosis"] == "mul gives a.grad = a.data * g; expected b.data * g"
    assert rule["expression"] == "a * b" and rule["inputs"] == {"a": 1.37, "b": -0.83}
    assert (rule["expected"], rule["got"]) == (-0.83, 1.37)


def test_a_learner_traceback_follows_the_one_line_error(capsys):
    code, out, err = _run(capsys, GALLERY / "raises_at_import.py")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == ("taugrad check: error: raises_at_import.py: importing it raised NameError: "
                        "name 'undefined_name' is not defined")
    assert lines[1:] == ['  File "raises_at_import.py", line 8, in <module>', "    helper()",
                         '  File "raises_at_import.py", line 5, in helper', "    return undefined_name"]


def test_json_mode_reports_an_ungradable_file_as_an_object(capsys):
    code, out, err = _run(capsys, GALLERY / "no_class.py", "--json")
    assert code == 2
    assert json.loads(out) == {"class": "Value", "ok": False, "traceback": [],
                               "error": "no_class.py: no class Value (it defines no classes at all)"}
    assert err.startswith("taugrad check: error: no_class.py")


@pytest.mark.parametrize("args,message", [
    (["missing_engine.py"], "missing_engine.py: no such file"),
    (["{gallery}/chapter_correct.py", "--count", "-1"], "--count must be between 0 and"),
    (["{gallery}/chapter_correct.py", "--timeout", "0"], "--timeout must be a positive number of seconds"),
    (["{gallery}/chapter_correct.py", "--class", "not a name"], "--class must be a Python name"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    code, out, err = _run(capsys, *[a.format(gallery=GALLERY) for a in args])
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_the_console_command_times_out_an_endless_file_without_a_grader_traceback():
    result = subprocess.run([sys.executable, "-m", "taugrad.cli", "check", str(GALLERY / "loops_forever.py"),
                             "--timeout", "2"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == ("taugrad check: error: timed out after 2 s while loading loops_forever.py "
                                     "(an endless loop in the engine? raise the limit with --timeout)")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_sys_exit_in_the_file_is_exit_2_not_the_learners_status(capsys):
    code, _, err = _run(capsys, GALLERY / "calls_exit.py")
    assert code == 2 and "called sys.exit(3) while being imported" in err


def _sandbox_of(parent: int, deadline: float) -> int:
    """The pid of the sandbox process that ``parent`` started, once it runs."""
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == parent and b"sandbox.py" in cmdline:
                return int(entry.name)
        time.sleep(0.05)
    raise AssertionError("the sandbox process never started")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the sandbox process")
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_no_sandbox_survives_the_command_however_it_is_stopped(how):
    cli = subprocess.Popen([sys.executable, "-m", "taugrad.cli", "check", str(GALLERY / "loops_forever.py"),
                            "--timeout", "300"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        child = _sandbox_of(cli.pid, time.monotonic() + 60)
        time.sleep(0.3)  # well inside the learner's endless import
        cli.send_signal(how)
        cli.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), f"the sandbox {child} outlived the command stopped by {how.name}"
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()


def test_the_sandbox_has_a_cpu_time_limit_as_well_as_memory():
    from taugrad.learn.check.engine import SANDBOX  # the child's script, run here on its own

    started = time.monotonic()
    child = subprocess.run([sys.executable, SANDBOX, str(GALLERY / "loops_forever.py"), "Value", str(2 * 1024**3),
                            "1", str(os.getpid())], capture_output=True, timeout=60)
    assert child.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
    assert time.monotonic() - started < 30

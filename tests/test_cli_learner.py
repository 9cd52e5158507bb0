"""`taugrad trace`, `taugrad graph` and `taugrad gradcheck`, in-process and as a subprocess."""
from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

import taugrad.scalar.value as value_module
from taugrad.cli import main
from taugrad.cli import gradcheck as gradcheck_cli
from taugrad.learn.randexpr import check_random_expressions

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------------------
# trace
# ---------------------------------------------------------------------------


def test_trace_calculate_exercise(capsys):
    code, out, err = _run(capsys, "trace", "(a*b)+c", "a=2", "b=3", "c=4")
    assert code == 0 and err == ""
    lines = [line.strip() for line in out.splitlines()]
    assert "L = 10" in lines
    assert "a.grad += b.data * g = 3 * 1 -> 3" in lines
    rows = {line.split()[0]: line.split()[1:5] for line in lines if line[:2] in ("a ", "b ", "c ")}
    # input: value, dL/d(input), backward(), finite difference
    assert rows == {"a": ["2", "3", "3", "3"], "b": ["3", "2", "2", "2"], "c": ["4", "1", "1", "1"]}


def test_trace_json(capsys):
    code, out, _ = _run(capsys, "trace", "(a*b)+c", "a=2", "b=3", "c=4", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["output"] == {"name": "L", "value": 10.0}
    assert {g["name"]: g["grad"] for g in data["gradients"]} == {"a": 3.0, "b": 2.0, "c": 1.0}
    assert data["backward"][1]["rules"][0]["text"] == "a.grad += b.data * g = 3 * 1 -> 3"


def test_trace_break_assign(capsys):
    code, out, _ = _run(capsys, "trace", "a*a + a", "a=3", "--assign")
    assert code == 0
    row = next(line.split() for line in out.splitlines() if line.strip().startswith("a ") and "WRONG" in line)
    assert row == ["a", "3", "3", "7", "7", "7", "<-", "WRONG"]  # value, with '=', right, backward(), finite diff
    assert "note: a lost gradient" in out


def test_trace_break_forward_order(capsys):
    code, out, _ = _run(capsys, "trace", "(a*b)+c", "a=2", "b=3", "c=4", "--order", "forward")
    assert code == 0
    assert "note: t1's rule ran with t1.grad = 0" in out
    assert out.count("<- WRONG") == 2


def test_trace_unused_name_is_noted(capsys):
    code, out, _ = _run(capsys, "trace", "a*2", "a=1", "zz=3")
    assert code == 0 and "note: not in the expression, ignored: zz" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["trace", "a.b"], "taugrad trace: error: column 1: attribute access is not allowed"),
        (["trace", "__import__('os').system('echo hacked')"],
         "taugrad trace: error: column 1: method calls are not allowed (write relu(x), not x.relu())"),
        (["trace", "__import__('os')"],
         "taugrad trace: error: column 1: call of '__import__' is not allowed; functions: relu, tanh, exp, log, sigmoid"),
        (["trace", "a*b", "a=1"], "taugrad trace: error: no value given for the name b (give it as NAME=VALUE)"),
        (["trace", "a", "a=x"], "taugrad trace: error: the value of a must be a number, got 'x'"),
        (["trace", "a", "a"], "taugrad trace: error: expected NAME=VALUE, got 'a'"),
        (["trace", "a", "a=1", "--eps", "0"], "taugrad trace: error: --eps must be positive, got 0.0"),
        (["trace", "a", "a=1", "--eps", "inf"], "taugrad trace: error: --eps must be finite, got inf"),
        (["trace", "a", "a=1", "--eps", "nan"], "taugrad trace: error: --eps must be positive, got nan"),
        (["gradcheck", "--eps", "inf"], "taugrad gradcheck: error: --eps must be finite, got inf"),
        (["gradcheck", "--eps=-1e-6"], "taugrad gradcheck: error: --eps must be positive, got -1e-06"),
        (["trace", "α*β", "α=1"], "taugrad trace: error: no value given for the name β (give it as NAME=VALUE)"),
        (["trace", "a", "α.b=1"], "taugrad trace: error: 'α.b' is not a valid variable name (in 'α.b=1')"),
        (["trace", "a", "if=1"], "taugrad trace: error: 'if' is not a valid variable name (in 'if=1')"),
        (["graph", "a", "a=π"], "taugrad graph: error: the value of a must be a number, got 'π'"),
        (["graph", "a +", "a=1"], "taugrad graph: error: column 4: syntax error: invalid syntax (the expression ends too early)"),
        (["gradcheck", "--depth", "9"], "taugrad gradcheck: error: --depth must be between 1 and 8, got 9"),
        (["gradcheck", "--count", "0"], "taugrad gradcheck: error: --count must be between 1 and 100,000, got 0"),
    ],
)
def test_user_mistakes_are_one_line(capsys, argv, message):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err == message + "\n"


@pytest.mark.parametrize("command", ["trace", "graph"])
def test_unicode_names_agree_with_the_parser(capsys, command):
    code, out, err = _run(capsys, command, "α*2 + θ", "α=2", "θ=1")
    assert code == 0 and err == ""
    assert "α" in out and "θ" in out and "\\u" not in out


def test_bindings_may_follow_an_option(capsys):
    code, out, err = _run(capsys, "trace", "a*b", "--eps", "1e-4", "a=2", "b=3")
    assert code == 0 and err == ""
    assert "a.grad += b.data * g = 3 * 1 -> 3" in out
    code, _, err = _run(capsys, "trace", "a", "--eps", "0", "a=1")
    assert code == 2 and err == "taugrad trace: error: --eps must be positive, got 0.0\n"


def test_unknown_options_are_still_refused(capsys):
    with pytest.raises(SystemExit) as info:
        main(["trace", "a", "a=1", "--bogus"])
    assert info.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"taugrad {version('taugrad')}\n"


# ---------------------------------------------------------------------------
# graph
# ---------------------------------------------------------------------------


def test_graph_labels_stay_compact_for_huge_and_tiny_numbers(capsys):
    code, out, _ = _run(capsys, "graph", "a*b", "a=1e300", "b=1e-300")
    assert code == 0
    assert '"{ a | data 1e+300 | grad 1e-300 }"' in out
    assert '"{ b | data 1e-300 | grad 1e+300 }"' in out
    assert '"{ L | data 1.0000 | grad 1.0000 }"' in out


def test_graph_prints_dot_with_trace_names(capsys):
    code, out, _ = _run(capsys, "graph", "tanh(a*b)", "a=1", "b=2")
    assert code == 0
    assert out.startswith("digraph {")
    assert '"{ L | data 0.9640 | grad 1.0000 }"' in out
    assert '"{ t1 | data 2.0000 | grad 0.0707 }"' in out  # 1 - tanh(2)^2 = 0.0707
    assert '"{ a | data 1.0000 | grad 0.1413 }"' in out


def test_graph_writes_dot_file(capsys, tmp_path):
    path = tmp_path / "g.dot"
    code, out, _ = _run(capsys, "graph", "a*b", "a=2", "b=3", "-o", str(path), "--rankdir", "TB")
    assert code == 0 and f"wrote {path}" in out
    text = path.read_text()
    assert "rankdir=TB" in text and "grad 3.0000" in text


def test_graph_svg_without_dot_writes_dot_and_says_how(capsys, tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, out, err = _run(capsys, "graph", "a*b", "a=2", "b=3", "-o", str(tmp_path / "g.svg"))
    assert code == 2
    assert err.count("\n") == 1 and "apt-get install graphviz" in err and "brew install graphviz" in err
    assert (tmp_path / "g.dot").read_text().startswith("digraph {")
    assert not (tmp_path / "g.svg").exists()


def test_graph_svg_with_dot(capsys, tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "dot"
    fake.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.read()\nsys.stdout.write('<svg>' + sys.argv[1] + '</svg>')\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(folder))
    code, _, _ = _run(capsys, "graph", "a*b", "a=2", "b=3", "-o", str(tmp_path / "g.svg"))
    assert code == 0
    assert (tmp_path / "g.svg").read_text() == "<svg>-Tsvg</svg>"


def test_graph_unknown_extension(capsys, tmp_path):
    code, _, err = _run(capsys, "graph", "a", "a=1", "-o", str(tmp_path / "g.exe"))
    assert code == 2 and "cannot write '.exe' files" in err


# ---------------------------------------------------------------------------
# gradcheck
# ---------------------------------------------------------------------------


def test_gradcheck_passes_on_a_correct_engine(capsys):
    code, out, _ = _run(capsys, "gradcheck", "--count", "25", "--seed", "3", "--depth", "3", "--plain")
    assert code == 0
    assert "expressions checked" in out and "by operation:" in out
    assert "worst disagreement:" in out
    assert out.rstrip().splitlines()[-1].startswith("OK: all ")


def _wrong_mul_rule(out):
    """The chapter's multiply rule with the operands swapped: a.grad += a.data * g."""
    a, b = out._prev
    a.grad += a.data * out.grad
    b.grad += b.data * out.grad


def test_gradcheck_catches_a_wrong_local_rule(capsys, monkeypatch):
    monkeypatch.setattr(value_module, "mul_rule", _wrong_mul_rule)
    code, out, _ = _run(capsys, "gradcheck", "--count", "25", "--seed", "3", "--plain")
    assert code == 1
    assert "MISMATCH #" in out
    assert out.rstrip().splitlines()[-1].startswith("FAILED: ")
    # the per-operation table puts the broken '*' first, with mismatches
    table = out[out.index("by operation:"):].splitlines()
    first = table[2].split()
    assert first[0] == "*" and int(first[2]) > 0


def test_gradcheck_same_seed_same_report(capsys):
    first = _run(capsys, "gradcheck", "--count", "10", "--seed", "5", "--plain")
    second = _run(capsys, "gradcheck", "--count", "10", "--seed", "5", "--plain")
    assert first == second


def test_gradcheck_rich_table():
    pytest.importorskip("rich")
    results = check_random_expressions(5, 1, 2, 3, 1e-6, 1e-5, 1e-3)
    stream = io.StringIO()
    args = Namespace(seed=1, depth=2, variables=3, eps=1e-6, atol=1e-5, rtol=1e-3)
    gradcheck_cli.report(results, args, stream, use_rich=True)
    text = stream.getvalue()
    assert "expressions checked" in text and "│" in text  # a rich table with box drawing
    assert "OK: all" in text


# ---------------------------------------------------------------------------
# as a program
# ---------------------------------------------------------------------------


def test_module_entry_point_subprocess():
    env = dict(os.environ, PYTHONPATH=SRC)
    done = subprocess.run(
        [sys.executable, "-m", "taugrad.cli", "trace", "(a*b)+c", "a=2", "b=3", "c=4"],
        capture_output=True, text=True, env=env, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "L = 10" in done.stdout
    assert "a.grad += b.data * g = 3 * 1 -> 3" in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "taugrad.cli", "trace", "a.__class__"],
        capture_output=True, text=True, env=env, check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr == "taugrad trace: error: column 1: attribute access is not allowed\n"


# ---------------------------------------------------------------------------
# trace --quiz, graph --assign / --order / --contributions
# ---------------------------------------------------------------------------


def test_trace_quiz_asks_before_showing_and_marks_each_answer(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n1\n3\n\n3\n2\n5\n"))
    code, out, _ = _run(capsys, "trace", "(a*b)+c", "a=2", "b=3", "c=4", "--quiz")
    assert code == 1
    lines = out.splitlines()
    asked = lines.index("    a.grad += ?")
    assert lines[asked + 1] == "    right: 3" and lines[asked + 2] == "    a.grad += b.data * g = 3 * 1 -> 3"
    assert "    (no answer) it is 2" in lines
    assert "    not quite: you said 5, it is 1" in lines
    assert lines[-1] == "score: 5 of 7 right"
    assert "backward pass" not in out  # the answers come one at a time, not as the full trace


def test_trace_quiz_all_right_is_exit_0(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n1\n3\n2\n3\n2\n1\n"))
    code, out, _ = _run(capsys, "trace", "(a*b)+c", "a=2", "b=3", "c=4", "--quiz")
    assert code == 0 and out.splitlines()[-1] == "score: 7 of 7 right"


def test_trace_quiz_reads_piped_answers_in_a_subprocess():
    result = subprocess.run([sys.executable, "-m", "taugrad.cli", "trace", "a*a", "a=3", "--quiz"],
                            input="3\n3\n6\n", capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": SRC})
    assert result.returncode == 0 and result.stdout.splitlines()[-1] == "score: 3 of 3 right"


def test_graph_assign_draws_the_broken_gradient_and_edge_contributions(capsys):
    code, out, _ = _run(capsys, "graph", "a*a + a", "a=3", "--assign", "--contributions")
    assert code == 0
    assert '{ a | data 3.0000 | grad 3.0000 }' in out  # '=' leaves 3, not the right 7
    assert out.count('[label="=3"]') == 2 and out.count('[label="=1"]') == 2
    code, out, _ = _run(capsys, "graph", "a*a + a", "a=3", "--contributions")
    assert '{ a | data 3.0000 | grad 7.0000 }' in out and out.count('[label="+3"]') == 2


def test_graph_order_draws_what_the_wrong_order_leaves(capsys):
    code, out, _ = _run(capsys, "graph", "(a*b)+c", "a=2", "b=3", "c=4", "--order", "forward")
    assert code == 0 and '{ a | data 2.0000 | grad 0.0000 }' in out


def test_graph_says_input_in_the_singular(capsys, tmp_path):
    code, out, _ = _run(capsys, "graph", "a*2", "a=3", "-o", str(tmp_path / "g.dot"))
    assert code == 0 and "(1 input, root" in out


def test_one_gradient_is_singular(capsys):
    code, out, _ = _run(capsys, "gradcheck", "--count", "1", "--plain")
    assert code == 0 and out.splitlines()[-1] in ("OK: the gradient agrees with finite differences",
                                                  "OK: all 2 gradients agree with finite differences",
                                                  "OK: all 3 gradients agree with finite differences")

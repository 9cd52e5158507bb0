"""scripts/compare_with_torch.py: one program run on PyTorch and on taugrad with shared randomness, outputs compared.

The programs are written here in the idioms of nanoGPT, makemore and
pytorch/examples mnist (tests/programs/compare_scripts/); each run starts two
Python processes, so the scripts are a few training steps long.
"""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "scripts" / "compare_with_torch.py"
SCRIPTS = Path(__file__).parent / "compare_scripts"

spec = importlib.util.spec_from_file_location("compare_with_torch", HARNESS)
harness = importlib.util.module_from_spec(spec)
sys.modules.setdefault(spec.name, harness)  # its dataclasses look their module up by name
spec.loader.exec_module(harness)


def _compare(*args, cwd=SCRIPTS):
    return subprocess.run([sys.executable, str(HARNESS), *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


# -- reading the outputs ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, numbers", [
    ("iter 10: loss 2.1234, time 15.32ms, mfu 3.21%", [10, 2.1234]),  # nanoGPT
    ("iter_dt 12.34ms; iter 100: train loss 2.51234", [100, 2.51234]),  # minGPT
    ("step 7 | loss 2.4316 | step time 41.27ms", [7, 2.4316]),  # makemore
    ("| epoch   1 |   200/ 2983 batches | lr 20.00 | ms/batch 12.34 | loss  7.63 | ppl  2000.00",
     [1, 200, 2983, 20.0, 7.63, 2000.0]),  # word_language_model
    ("| end of epoch   1 | time:  5.41s | valid loss  6.94 | valid ppl  1032.78", [1, 6.94, 1032.78]),
    ("epoch 3 took 2 s, 8.5 it/s, 300 tokens/s, elapsed 3.1", [3]),
    ("3 steps, 2 samples, gpt2 n_layer=4 lr=1e-3 loss -0.5.", [3, 2, 4, 1e-3, -0.5]),
    ("Test set: Average loss: 0.2345, Accuracy: 9012/10000 (90%)", [0.2345, 9012, 10000, 90]),
    ("tensor([nan, inf, -inf, 1.5000e+00])", [float("nan"), float("inf"), float("-inf"), 1.5]),
])
def test_numbers_are_read_and_timings_left_out(line, numbers):
    got = harness.numbers_in(line)
    assert len(got) == len(numbers)
    assert all(a == b or (a != a and b != b) for a, b in zip(got, numbers)), got


def test_timings_count_and_leave_the_text_marked():
    text, numbers, timings = harness.split_line("iter 3: loss 4.1, time 15.32ms, mfu -100.00%")
    assert (text, [n.value for n in numbers], timings) == ("iter #: loss #, time <time>ms, mfu <time>%", [3, 4.1], 2)


def test_tolerance_is_relative_plus_one_printed_digit():
    # 2.4316 and 2.4317 may be the same value rounded either way: one unit of the last digit is allowed
    assert harness.compare_outputs("loss 2.4316\n", "loss 2.4317\n", rtol=0.0).same
    assert not harness.compare_outputs("loss 2.4316\n", "loss 2.4318\n", rtol=0.0).same
    assert harness.compare_outputs("loss 2.431612\n", "loss 2.431800\n", rtol=1e-4).same
    assert not harness.compare_outputs("loss 2.431612\n", "loss 2.432100\n", rtol=1e-4).same
    assert not harness.compare_outputs("correct 9012\n", "correct 9013\n", rtol=1e-6).same  # integers are exact


def test_ignored_text_is_taken_out_of_every_line_first():
    torch_out, taugrad_out = "2623\tloss 1.5\n", "2701\tloss 1.5\n"
    assert not harness.compare_outputs(torch_out, taugrad_out).same
    assert harness.compare_outputs(torch_out, taugrad_out, ignore=r"^[0-9]+\t").same


def test_text_and_line_counts_must_match():
    different_text = harness.compare_outputs("torch 1.5\n", "taugrad 1.5\n")
    assert [d[3] for d in different_text.differences] == ["the text differs"]
    fewer_lines = harness.compare_outputs("a 1\nb 2\n", "a 1\n")
    assert [d[3] for d in fewer_lines.differences] == ["the outputs have different numbers of lines"]
    same = harness.compare_outputs("a 1, time 3ms\nnan\n", "a 1, time 9ms\nnan\n")
    assert (same.same, same.values, same.timings) == (True, 2, 1)


# -- whole programs -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, lines", [
    (["char_model.py"], 9),     # torch.randint batches, nn.Dropout, F.dropout, attention dropout, multinomial
    (["--lines", 6, "makemore_loop.py"], 6),  # randperm split, RandomSampler(replacement=True), shuffled loader
    (["mnist_loop.py"], 10),    # DataLoader(shuffle=True), Conv2d, nn.Dropout2d, nn.Dropout, Adadelta, StepLR
    (["--ignore", "^[0-9]+\t", "hogwild_loop.py"], 7),  # share_memory(), a spawned process trains, pids left out
])
def test_programs_in_the_idioms_print_torchs_numbers(args, lines):
    out = _compare(*args)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("same numbers: ")
    assert f" values on {lines} lines agree to rtol 0.0001" in out.stdout


def test_a_torchvision_program_compares_through_the_stand_in_where_torchvision_is_missing():
    out = _compare("vision_loop.py")  # FakeData, ToTensor, Normalize, a shuffled loader, make_grid
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("same numbers: 16 values on 7 lines agree to rtol 0.0001")
    if importlib.util.find_spec("torchvision") is None:
        assert "the PyTorch run imported torchvision_standin.py" in out.stdout


def test_a_script_run_before_writes_the_file_the_program_reads_in_float64(tmp_path):
    out = _compare("--show", "--float64", "--before", SCRIPTS / "save_batch.py", SCRIPTS / "load_batch.py",
                   cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("saved True\n") == 2  # each engine made float64 its default before saving
    assert out.stdout.splitlines()[-1].startswith("same numbers: 6 values on 4 lines")


def test_a_number_that_depends_on_the_engine_is_reported():
    out = _compare("engine_dependent.py", "number")
    assert out.returncode == 1
    assert out.stdout.startswith("DIFFERENT: 3 of 3 lines")
    assert "line 1: numbers differ: " in out.stdout


def test_parameters_the_engines_shape_differently_stop_the_run_with_one_line():
    out = _compare("engine_dependent.py", "shape")
    assert out.returncode == 1
    assert out.stdout.startswith("taugrad run failed (exit 1):")
    assert ("compare_with_torch: at the first call of a Linear, PyTorch's parameters have shapes [(5, 3), (5,)] "
            "and taugrad's [(7, 3), (7,)]") in out.stdout


# -- the parameter hand-over, in this process (nothing installed, so torch and taugrad stay as they are) ----------

def _shim():
    spec = importlib.util.spec_from_file_location("shared_randomness", ROOT / "scripts" / "shared_randomness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SharedRandomness


def test_parameters_recorded_by_torch_are_loaded_into_taugrads_in_order(tmp_path):
    import numpy as np
    import torch

    import taugrad

    SharedRandomness = _shim()
    theirs = [torch.nn.Parameter(torch.randn(2, 3)), torch.nn.Parameter(torch.randn(3))]
    SharedRandomness(torch, "record", str(tmp_path), 0).hand_over(theirs, "the test")
    ours = [taugrad.nn.Parameter(taugrad.zeros(2, 3)), taugrad.nn.Parameter(taugrad.zeros(3))]
    SharedRandomness(taugrad, "load", str(tmp_path), 0).hand_over(ours + ours[:1], "the test")  # once each
    for a, b in zip(theirs, ours):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RuntimeError, match=r"at the test, taugrad has parameters the PyTorch run never used"):
        SharedRandomness(taugrad, "load", str(empty), 0).hand_over([taugrad.zeros(1)], "the test")


def test_the_baseline_run_moves_each_parameter_by_one_unit_in_the_last_place(tmp_path):
    import torch

    weights = torch.nn.Parameter(torch.ones(3))
    _shim()(torch, "nudge", str(tmp_path), 0).hand_over([weights], "the test")
    eps = torch.finfo(torch.float32).eps
    assert weights.detach().tolist() == [1.0 + eps, 1.0 - eps, 1.0 + eps]  # not a common scale

"""Bad input gives one clear line naming the op and the shapes or dtypes, not a NumPy traceback."""
import numpy as np
import pytest

import taugrad
import taugrad.functional as F
from taugrad import Tensor


def t(*shape, dtype=np.float64):
    return Tensor(np.ones(shape, dtype=dtype), requires_grad=True)


def one_line(info):
    text = str(info.value)
    assert "\n" not in text, f"message spans several lines: {text!r}"
    return text


def test_matmul_mismatch_names_op_and_both_shapes():
    with pytest.raises((ValueError, RuntimeError)) as info:
        t(3, 4) @ t(5, 6)
    text = one_line(info)
    assert "matmul" in text and "(3, 4)" in text and "(5, 6)" in text


def test_matmul_mismatch_for_batched_and_1d_operands():
    with pytest.raises((ValueError, RuntimeError)) as info:
        t(2, 3, 4) @ t(5)
    text = one_line(info)
    assert "matmul" in text and "(2, 3, 4)" in text and "(5,)" in text


def test_matmul_of_a_0d_tensor_is_an_error():
    with pytest.raises((ValueError, RuntimeError)) as info:
        t() @ t(3)
    assert "matmul" in one_line(info)


@pytest.mark.parametrize("name, apply", [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b), ("div", lambda a, b: a / b),
])
def test_broadcasting_mismatch_names_both_shapes(name, apply):
    with pytest.raises((ValueError, RuntimeError)) as info:
        apply(t(2, 3), t(4))
    text = one_line(info)
    assert "(2, 3)" in text and "(4,)" in text
    assert "broadcast" in text.lower()


def test_reshape_to_a_different_size_names_both_shapes():
    with pytest.raises((ValueError, RuntimeError)) as info:
        t(2, 3).reshape(4, 2)
    text = one_line(info)
    assert "(2, 3)" in text and "(4, 2)" in text


def test_cat_of_mismatched_shapes_names_them():
    with pytest.raises((ValueError, RuntimeError)) as info:
        taugrad.cat([t(2, 3), t(2, 4)], dim=0)
    text = one_line(info)
    assert "(2, 3)" in text and "(2, 4)" in text


def test_reduction_over_a_dim_that_does_not_exist():
    with pytest.raises((ValueError, IndexError, RuntimeError)) as info:
        t(2, 3).sum(dim=2)
    assert "2" in one_line(info)


# ---------------------------------------------------------------------------
# cross_entropy targets
# ---------------------------------------------------------------------------


def test_cross_entropy_float_targets_is_a_type_error():
    logits = t(3, 4)
    with pytest.raises(TypeError) as info:
        F.cross_entropy(logits, np.array([0.0, 1.0, 2.0]))
    text = one_line(info)
    assert "float" in text and "target" in text.lower()


def test_cross_entropy_float_target_tensor_is_a_type_error():
    with pytest.raises(TypeError):
        F.cross_entropy(t(3, 4), Tensor(np.array([0.0, 1.0, 2.0])))


@pytest.mark.parametrize("bad", [4, 7, -1])
def test_cross_entropy_out_of_range_target_is_a_value_error(bad):
    with pytest.raises(ValueError) as info:
        F.cross_entropy(t(3, 4), np.array([0, bad, 2]))
    text = one_line(info)
    assert str(bad) in text and "4" in text  # the bad target and the number of classes


def test_cross_entropy_target_count_mismatch_names_both_shapes():
    with pytest.raises(ValueError) as info:
        F.cross_entropy(t(3, 4), np.array([0, 1]))
    text = one_line(info)
    assert "(3, 4)" in text and "(2,)" in text


def test_cross_entropy_unknown_reduction():
    with pytest.raises(ValueError) as info:
        F.cross_entropy(t(3, 4), np.array([0, 1, 2]), reduction="average")
    assert "average" in one_line(info)


def test_index_out_of_range_is_an_index_error_naming_the_shape():
    with pytest.raises(IndexError) as info:
        t(3)[5]
    text = one_line(info)
    assert "5" in text and "(3,)" in text


def test_expand_to_an_incompatible_shape_names_both_shapes():
    with pytest.raises((ValueError, RuntimeError)) as info:
        t(2, 3).expand(4, 3)
    text = one_line(info)
    assert "(2, 3)" in text and "(4, 3)" in text


# errors that would otherwise end in NumPy's or Python's own words
@pytest.mark.parametrize("call, error, words", [
    (lambda: F.pad(t(2), (1, 1), value="a"), TypeError, "pad: value must be a number, got str"),
    (lambda: F.pad(t(2), ((1,),)), ValueError, "pad: NumPy-style widths are one (before, after) pair per dimension"),
    (lambda: t(2) & t(2), TypeError, "and: not supported for taugrad.float64 and taugrad.float64 operands"),
    (lambda: t(2) | True, TypeError, "or: not supported for taugrad.float64 and bool operands"),
    (lambda: ~t(2), TypeError, "bitwise_not: needs a bool or integer tensor, got dtype taugrad.float64"),
    (lambda: 2 ** taugrad.tensor([-1]), ValueError, "pow: Integers to negative integer powers"),
    (lambda: t(2).reshape(-2), ValueError, "reshape: invalid size in (-2,)"),
    (lambda: t(2).astype(object), TypeError, "astype: a tensor holds numbers, not dtype object"),
    (lambda: 10**40 - taugrad.tensor([1, 2]), TypeError, "sub: not supported for taugrad.int64 and int operands"),
    (lambda: 10**400 / t(2), TypeError, "div: not supported for taugrad.float64 and int operands"),
])
def test_bad_input_is_one_line_naming_the_op(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert one_line(info).startswith(words)

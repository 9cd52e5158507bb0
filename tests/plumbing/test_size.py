"""x.shape and x.size() are a Size: a tuple of ints that prints and behaves as torch.Size."""
import pickle

import pytest
import torch

import taugrad


def _as_torch_text(text):
    return text.replace("taugrad.", "torch.")


@pytest.mark.parametrize("shape", [(2, 3), (), (4,), (1, 0, 5)])
def test_shape_prints_and_behaves_as_torch_size(shape):
    ours, theirs = taugrad.zeros(shape).shape, torch.zeros(shape).shape
    assert _as_torch_text(repr(ours)) == repr(theirs)
    assert _as_torch_text(str(ours)) == str(theirs)
    assert _as_torch_text(f"{ours}") == f"{theirs}"
    assert ours == theirs == shape and isinstance(ours, tuple)
    assert ours.numel() == theirs.numel()
    assert taugrad.zeros(shape).size() == ours


def test_slices_and_sums_stay_sizes_as_in_torch():
    s, t = taugrad.Size([2, 3, 4]), torch.Size([2, 3, 4])
    for ours, theirs in [(s[1:], t[1:]), (s + (5,), t + (5,)), ((1,) + s, (1,) + t), (s * 2, t * 2)]:
        assert type(ours) is taugrad.Size and type(theirs) is torch.Size
        assert _as_torch_text(repr(ours)) == repr(theirs)
    assert s[0] == 2 and type(s[0]) is int
    assert pickle.loads(pickle.dumps(s)) == s and type(pickle.loads(pickle.dumps(s))) is taugrad.Size


def test_a_size_of_non_integers_is_refused_as_torch():
    with pytest.raises(TypeError, match=r"takes an iterable of 'int' \(item 0 is 'float'\)"):
        taugrad.Size([2.5])
    with pytest.raises(TypeError, match=r"takes an iterable of 'int' \(item 0 is 'float'\)"):
        torch.Size([2.5])


def test_error_messages_name_shapes_as_tuples():
    with pytest.raises(ValueError, match=r"got \(2, 3\), \(2, 4\)"):
        taugrad.cat([taugrad.zeros(2, 3), taugrad.zeros(2, 4)])

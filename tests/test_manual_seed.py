"""taugrad.manual_seed: reproducible draws, and a clear error for a bad seed."""
import pytest

import taugrad


def test_same_seed_same_numbers():
    taugrad.manual_seed(3)
    a = taugrad.randn(4).data.copy()
    taugrad.manual_seed(3)
    assert (taugrad.randn(4).data == a).all()


@pytest.mark.parametrize("bad", ["a", -1, 1.5, None, True])
def test_bad_seed_is_one_line_type_error(bad):
    with pytest.raises(TypeError, match=r"^manual_seed: seed must be a non-negative int, got "):
        taugrad.manual_seed(bad)

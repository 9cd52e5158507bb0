"""taugrad.manual_seed: reproducible draws, and a clear error for a bad seed."""
import pytest
import torch

import taugrad


def test_same_seed_same_numbers():
    taugrad.manual_seed(3)
    a = taugrad.randn(4).numpy().copy()
    taugrad.manual_seed(3)
    assert (taugrad.randn(4).numpy() == a).all()


@pytest.mark.parametrize("bad", ["a", 1.5, None, True])
def test_bad_seed_is_one_line_type_error(bad):
    with pytest.raises(TypeError, match=r"^manual_seed: seed must be an int, got "):
        taugrad.manual_seed(bad)


@pytest.mark.parametrize("seed", [-1, -(2 ** 63), 2 ** 64 - 1, 0])
def test_seed_range_is_torch_s(seed):
    """Negative seeds are taken modulo 2**64, as torch stores them."""
    torch.manual_seed(seed)
    assert taugrad.manual_seed(seed).initial_seed() == torch.initial_seed()


@pytest.mark.parametrize("seed", [2 ** 64, -(2 ** 63) - 1])
def test_seed_out_of_range_is_value_error(seed):
    with pytest.raises(ValueError):
        torch.manual_seed(seed)
    with pytest.raises(ValueError, match=r"^manual_seed: seed must be in \[-2\*\*63, 2\*\*64\)"):
        taugrad.manual_seed(seed)

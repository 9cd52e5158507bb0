"""PyTorch's random-number API: Generator, seeds and states, ``generator=`` on every random function.

torch is the oracle for what is deterministic (argument forms, shapes,
dtypes, which errors); the numbers themselves are taugrad's own stream, so
reproducibility is checked within taugrad and the distributions by their
moments with a fixed seed.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import taugrad
import taugrad.functional as F
from taugrad import nn

# ---------------------------------------------------------------------------
# the Generator object and the default generator
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("lib", [torch, taugrad], ids=["torch", "taugrad"])
def test_generator_api(lib):
    g = lib.Generator()
    assert g.initial_seed() == 67280421310721  # a new generator's seed, as torch
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s
    state = g.get_state()
    assert isinstance(state, lib.Tensor) and state.ndim == 1 and str(state.dtype).endswith("uint8")
    assert g.set_state(state) is g
    assert str(g.device) == "cpu" and str(lib.Generator(device="cpu").device) == "cpu"
    assert lib.manual_seed(3) is lib.default_generator and lib.initial_seed() == 3
    assert lib.get_rng_state().shape == lib.default_generator.get_state().shape


def test_the_state_replays_the_stream():
    g = taugrad.Generator().manual_seed(11)
    taugrad.randn(7, generator=g)
    state = g.get_state()
    first = taugrad.rand(5, generator=g).numpy().copy()
    g.set_state(state)
    np.testing.assert_array_equal(taugrad.rand(5, generator=g).numpy(), first)
    assert g.initial_seed() == 11  # the seed travels with the state

    taugrad.manual_seed(4)
    saved = taugrad.get_rng_state()
    a = taugrad.randn(3).numpy().copy()
    taugrad.set_rng_state(saved)
    np.testing.assert_array_equal(taugrad.randn(3).numpy(), a)


def test_get_state_is_a_copy():
    g = taugrad.Generator().manual_seed(1)
    state = g.get_state()
    before = state.numpy().copy()
    taugrad.randn(4, generator=g)
    np.testing.assert_array_equal(state.numpy(), before)


@pytest.mark.parametrize("bad, error", [([1, 2], TypeError), ("state", TypeError)])
def test_set_state_rejects_non_tensors_as_torch(bad, error):
    with pytest.raises(error):
        torch.Generator().set_state(bad)
    with pytest.raises(error, match=r"^set_state: expected a uint8 Tensor"):
        taugrad.Generator().set_state(bad)


def test_set_state_rejects_a_wrong_size_as_torch():
    with pytest.raises(RuntimeError):
        torch.Generator().set_state(torch.zeros(3, dtype=torch.uint8))
    with pytest.raises(RuntimeError, match=r"^set_state: expected a uint8 tensor of \d+ bytes"):
        taugrad.Generator().set_state(taugrad.tensor(np.zeros(3, dtype=np.uint8)))


def test_a_bad_generator_argument_is_a_type_error():
    with pytest.raises(TypeError):
        torch.randn(2, generator=5)
    with pytest.raises(TypeError, match=r"^generator must be a taugrad.Generator, got int"):
        taugrad.randn(2, generator=5)


def test_seed_is_not_deterministic():
    assert taugrad.seed() != taugrad.seed()  # 64-bit seeds from the OS: equal with probability 2**-64


# ---------------------------------------------------------------------------
# generator= on every random function: torch's shapes and dtypes, reproducible streams
# ---------------------------------------------------------------------------

RANDOM_CALLS = {
    "rand": lambda L, g: L.rand(2, 3, generator=g),
    "rand_tuple": lambda L, g: L.rand((2, 3), generator=g, dtype=L.float64),
    "randn": lambda L, g: L.randn((27, 27), generator=g),
    "randn_requires_grad": lambda L, g: L.randn(3, 2, generator=g, requires_grad=True),
    "randint": lambda L, g: L.randint(0, 10, (32,), generator=g),
    "randint_high_size": lambda L, g: L.randint(5, (2, 2), generator=g),
    "randint_float": lambda L, g: L.randint(3, 9, (4,), generator=g, dtype=L.float32),
    "randperm": lambda L, g: L.randperm(9, generator=g),
    "rand_like": lambda L, g: L.rand_like(L.zeros(2, 5, dtype=L.float64), generator=g),
    "randn_like": lambda L, g: L.randn_like(L.zeros(4), generator=g),
    "randint_like": lambda L, g: L.randint_like(L.zeros(3, 2), 7, generator=g),
    "randint_like_low_high": lambda L, g: L.randint_like(L.zeros(6, dtype=L.int64), 3, 7, generator=g),
    "multinomial_1d": lambda L, g: L.multinomial(L.tensor([0.1, 2.0, 0.0, 5.0]), 6, replacement=True, generator=g),
    "multinomial_2d": lambda L, g: L.multinomial(L.tensor([[1.0, 2.0, 3.0], [3.0, 0.5, 1.0]]), 3, generator=g),
    "multinomial_method": lambda L, g: L.tensor([1.0, 1.0, 2.0]).multinomial(2, generator=g),
    "bernoulli": lambda L, g: L.bernoulli(L.full((3, 4), 0.3), generator=g),
    "bernoulli_p": lambda L, g: L.zeros(5, dtype=L.float64).bernoulli(0.7, generator=g),
    "normal_tensors": lambda L, g: L.normal(L.zeros(2, 1), L.ones(3), generator=g),
    "normal_tensor_mean": lambda L, g: L.normal(L.zeros(3, dtype=L.float64), 2.0, generator=g),
    "normal_tensor_std": lambda L, g: L.normal(1.0, L.ones(4), generator=g),
    "normal_size": lambda L, g: L.normal(2.0, 3.0, (2, 3), generator=g),
    "normal_size_kw": lambda L, g: L.normal(mean=0.0, std=1.0, size=(5,), generator=g),
    "poisson": lambda L, g: L.poisson(L.full((6,), 4.0), generator=g),
    "uniform_": lambda L, g: L.zeros(4).uniform_(-2.0, 2.0, generator=g),
    "normal_": lambda L, g: L.zeros(4, dtype=L.float64).normal_(1.0, 0.5, generator=g),
    "random_": lambda L, g: L.zeros(5).random_(generator=g),
    "random_to": lambda L, g: L.zeros(5, dtype=L.int64).random_(4, generator=g),
    "random_from_to": lambda L, g: L.zeros(5).random_(-3, 3, generator=g),
    "bernoulli_": lambda L, g: L.zeros(6).bernoulli_(0.5, generator=g),
    "bernoulli_tensor_p": lambda L, g: L.zeros(3).bernoulli_(L.tensor([0.0, 1.0, 1.0]), generator=g),
    "exponential_": lambda L, g: L.zeros(6).exponential_(2.0, generator=g),
}


def _dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


@pytest.mark.parametrize("name", sorted(RANDOM_CALLS))
def test_random_call_matches_torch_in_shape_dtype_and_grad(name):
    call = RANDOM_CALLS[name]
    want = call(torch, torch.Generator().manual_seed(0))
    got = call(taugrad, taugrad.Generator().manual_seed(0))
    assert tuple(got.shape) == tuple(want.shape)
    assert _dtype_name(got) == _dtype_name(want)
    assert got.requires_grad == want.requires_grad


@pytest.mark.parametrize("name", sorted(RANDOM_CALLS))
def test_same_seed_same_numbers(name):
    call = RANDOM_CALLS[name]
    a = call(taugrad, taugrad.Generator().manual_seed(2147483647)).detach().numpy()
    b = call(taugrad, taugrad.Generator().manual_seed(2147483647)).detach().numpy()
    np.testing.assert_array_equal(a, b)
    taugrad.manual_seed(9)  # and through the default generator
    c = call(taugrad, None).detach().numpy()
    taugrad.manual_seed(9)
    np.testing.assert_array_equal(call(taugrad, None).detach().numpy(), c)


def test_generators_are_independent_streams():
    g, h = taugrad.Generator().manual_seed(1), taugrad.Generator().manual_seed(1)
    a = taugrad.randn(5, generator=g).numpy()
    taugrad.randn(100)  # the default generator moving does not move g or h
    np.testing.assert_array_equal(taugrad.randn(5, generator=h).numpy(), a)
    assert not np.array_equal(taugrad.randn(5, generator=g).numpy(), a)


def test_makemore_forms():
    """The bigram lecture's lines, as written there."""
    g = taugrad.Generator().manual_seed(2147483647)
    W = taugrad.randn((27, 27), generator=g, requires_grad=True)
    assert W.dtype == taugrad.float32 and W.requires_grad
    p = taugrad.rand(27, generator=g)
    p = p / p.sum()
    ix = taugrad.multinomial(p, num_samples=1, replacement=True, generator=g).item()
    assert isinstance(ix, int) and 0 <= ix < 27
    counts = taugrad.multinomial(p, num_samples=20, replacement=True, generator=g)
    assert counts.dtype == taugrad.int64


# ---------------------------------------------------------------------------
# multinomial
# ---------------------------------------------------------------------------


def test_multinomial_follows_unnormalised_weights():
    weights = np.array([1.0, 0.0, 3.0, 6.0])
    g = taugrad.Generator().manual_seed(0)
    draws = taugrad.multinomial(taugrad.tensor(weights), 20000, replacement=True, generator=g).numpy()
    freq = np.bincount(draws, minlength=4) / draws.size
    assert freq[1] == 0  # a zero weight is never drawn
    np.testing.assert_allclose(freq, weights / weights.sum(), atol=0.015)  # ~5 standard errors


def test_multinomial_2d_draws_per_row():
    weights = taugrad.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    draws = taugrad.multinomial(weights, 4, replacement=True, generator=taugrad.Generator().manual_seed(0))
    np.testing.assert_array_equal(draws.numpy(), [[1, 1, 1, 1], [0, 0, 0, 0]])


def test_multinomial_without_replacement_draws_each_index_once():
    g = taugrad.Generator().manual_seed(1)
    draws = taugrad.multinomial(taugrad.rand(50, 10, generator=g), 10, generator=g).numpy()
    for row in draws:
        assert sorted(row) == list(range(10))
    # zero weights come after every positive weight, as torch's [1, 0] -> [0, 1]
    np.testing.assert_array_equal(taugrad.multinomial(taugrad.tensor([1.0, 0.0]), 2).numpy(), [0, 1])
    np.testing.assert_array_equal(torch.multinomial(torch.tensor([1.0, 0.0]), 2).numpy(), [0, 1])


def test_multinomial_without_replacement_first_draw_follows_weights():
    weights = np.array([1.0, 2.0, 7.0])
    g = taugrad.Generator().manual_seed(3)
    rows = taugrad.tensor(np.tile(weights, (20000, 1)))
    first = taugrad.multinomial(rows, 2, generator=g).numpy()[:, 0]
    np.testing.assert_allclose(np.bincount(first, minlength=3) / first.size, weights / weights.sum(), atol=0.015)


MULTINOMIAL_ERRORS = {
    "negative": ([1.0, -1.0], 1, False),
    "zero_sum": ([0.0, 0.0], 1, False),
    "zero_sum_row": ([[1.0, 0.0], [0.0, 0.0]], 1, True),
    "nan": ([1.0, float("nan")], 1, True),
    "inf": ([1.0, float("inf")], 1, True),
    "three_dims": ([[[1.0]]], 1, True),
    "zero_samples": ([1.0, 2.0], 0, True),
    "too_many_without_replacement": ([1.0, 2.0], 3, False),
    "integer_weights": ([1, 2], 1, True),
}


@pytest.mark.parametrize("name", sorted(MULTINOMIAL_ERRORS))
def test_multinomial_errors_as_torch(name):
    weights, n, replacement = MULTINOMIAL_ERRORS[name]
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor(weights), n, replacement)
    with pytest.raises(RuntimeError, match=r"^multinomial: [^\n]+$"):
        taugrad.multinomial(taugrad.tensor(weights), n, replacement)


# ---------------------------------------------------------------------------
# the other distributions: moments with a fixed seed, errors as torch
# ---------------------------------------------------------------------------


def test_distribution_moments():
    g = taugrad.Generator().manual_seed(0)
    n = 200000
    z = taugrad.randn(n, generator=g, dtype=taugrad.float64).numpy()
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    u = taugrad.rand(n, generator=g).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    e = taugrad.zeros(n).exponential_(4.0, generator=g).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.25) < 0.01
    k = taugrad.poisson(taugrad.full((n,), 3.0), generator=g).numpy()
    assert abs(k.mean() - 3) < 0.03 and abs(k.var() - 3) < 0.1
    b = taugrad.bernoulli(taugrad.full((n,), 0.2), generator=g).numpy()
    assert set(np.unique(b)) == {0.0, 1.0} and abs(b.mean() - 0.2) < 0.01
    m = taugrad.normal(taugrad.full((n,), 5.0), taugrad.full((n,), 2.0), generator=g).numpy()
    assert abs(m.mean() - 5) < 0.03 and abs(m.std() - 2) < 0.03
    r = taugrad.randint(-2, 3, (n,), generator=g).numpy()
    assert set(np.unique(r)) == {-2, -1, 0, 1, 2}
    assert sorted(taugrad.randperm(50, generator=g).numpy()) == list(range(50))


def test_random_fill_ranges():
    g = taugrad.Generator().manual_seed(0)
    full32 = taugrad.zeros(10000).random_(generator=g).numpy()
    assert full32.min() >= 0 and full32.max() <= 2 ** 24 and full32.max() > 2 ** 23  # [0, 2**mantissa]
    to = taugrad.zeros(1000, dtype=taugrad.int64).random_(4, generator=g).numpy()
    assert set(np.unique(to)) == {0, 1, 2, 3}
    between = taugrad.zeros(1000).random_(-3, 3, generator=g).numpy()
    assert set(np.unique(between)) == {-3, -2, -1, 0, 1, 2}
    as_bytes = taugrad.zeros(1000, dtype=taugrad.uint8).random_(generator=g).numpy()
    assert as_bytes.max() > 200
    p = taugrad.zeros(4).bernoulli_(taugrad.tensor([0.0, 1.0, 0.0, 1.0]), generator=g).numpy()
    np.testing.assert_array_equal(p, [0, 1, 0, 1])


RANDOM_ERRORS = {
    "normal_negative_std": (RuntimeError, lambda L: L.zeros(3).normal_(0.0, -1.0)),
    "uniform_from_above_to": (RuntimeError, lambda L: L.zeros(3).uniform_(2.0, 1.0)),
    "random_from_above_to": (RuntimeError, lambda L: L.zeros(3).random_(5, 2)),
    "exponential_negative": (RuntimeError, lambda L: L.zeros(3).exponential_(-1.0)),
    "bernoulli_p_above_one": (RuntimeError, lambda L: L.zeros(3).bernoulli_(2.0)),
    "bernoulli_input_above_one": (RuntimeError, lambda L: L.bernoulli(L.tensor([0.5, 2.0]))),
    "poisson_negative_rate": (RuntimeError, lambda L: L.poisson(L.tensor([-1.0]))),
    "normal_size_negative_std": (RuntimeError, lambda L: L.normal(0.0, -1.0, (2,))),
    "normal_tensor_negative_std": (RuntimeError, lambda L: L.normal(L.zeros(2), -1.0)),
    "normal_shapes_do_not_broadcast": (RuntimeError, lambda L: L.normal(L.zeros(2), L.ones(3))),
    "normal_numbers_without_size": (TypeError, lambda L: L.normal(0.0, 1.0)),
}


@pytest.mark.parametrize("name", sorted(RANDOM_ERRORS))
def test_random_errors_as_torch(name):
    error, call = RANDOM_ERRORS[name]
    with pytest.raises(error):
        call(torch)
    with pytest.raises(error) as info:
        call(taugrad)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(3, dtype=L.int64).normal_(),
    lambda L: L.zeros(3, dtype=L.int64).exponential_(),
    lambda L: L.rand(2, dtype=L.int64),
    lambda L: L.rand_like(L.zeros(2, dtype=L.int64)),
    lambda L: L.poisson(L.tensor([1, 2])),
], ids=["normal_", "exponential_", "rand", "rand_like", "poisson"])
def test_integer_dtypes_are_refused_by_continuous_samplers(call):
    with pytest.raises((RuntimeError, NotImplementedError)):
        call(torch)
    with pytest.raises(TypeError, match=r"needs a floating dtype, got int64"):
        call(taugrad)


# ---------------------------------------------------------------------------
# nn.init and dropout take generators too
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("init", [
    lambda init, w, g: init.uniform_(w, -1.0, 1.0, generator=g),
    lambda init, w, g: init.normal_(w, 0.0, 2.0, generator=g),
    lambda init, w, g: init.xavier_uniform_(w, generator=g),
    lambda init, w, g: init.xavier_normal_(w, generator=g),
    lambda init, w, g: init.kaiming_uniform_(w, a=math.sqrt(5), generator=g),
    lambda init, w, g: init.kaiming_normal_(w, generator=g),
], ids=["uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"])
def test_init_takes_a_generator(init):
    init(torch.nn.init, torch.zeros(4, 3), torch.Generator().manual_seed(0))  # the same call is valid torch
    a, b = taugrad.zeros(4, 3), taugrad.zeros(4, 3)
    init(nn.init, a, taugrad.Generator().manual_seed(0))
    init(nn.init, b, taugrad.Generator().manual_seed(0))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert np.abs(a.numpy()).max() > 0


def test_dropout_takes_a_generator():
    x = taugrad.ones(100)
    a = F.dropout(x, 0.5, generator=taugrad.Generator().manual_seed(2)).numpy()
    b = F.dropout(x, 0.5, generator=taugrad.Generator().manual_seed(2)).numpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) == {0.0, 2.0}


def test_manual_seed_makes_dropout_and_init_reproducible():
    def run():
        taugrad.manual_seed(7)
        layer = nn.Linear(3, 4)
        mask = nn.Dropout(0.5)(taugrad.ones(20))
        return layer.weight.detach().numpy().copy(), mask.numpy().copy()

    (w1, m1), (w2, m2) = run(), run()
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(m1, m2)

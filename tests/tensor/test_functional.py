"""taugrad.functional beyond the op table: stability at logits of +-1e4, integer targets, dropout."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import taugrad
import taugrad.functional as F
from taugrad import Tensor

# Every kind of logit that breaks a naive exp(): huge, hugely negative, mixed, ties.
EXTREME_LOGITS = np.array([
    [1e4, -1e4, 0.0, 1.0],
    [-1e4, -1e4, -1e4, -1e4],
    [1e4, 1e4, -1e4, 3.0],
    [0.5, -1e4, 1e4, -0.5],
])
TARGETS = np.array([1, 2, 2, 0])  # several point at a -1e4 logit: loss ~2e4, finite


def both(array, dtype=np.float64):
    return (Tensor(np.array(array, dtype=dtype), requires_grad=True),
            torch.tensor(np.array(array, dtype=dtype), requires_grad=True))


def assert_finite_and_close(ours, theirs, rtol):
    ours = np.asarray(ours)
    assert np.all(np.isfinite(ours)), f"non-finite values: {ours}"
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol)


STABLE = {
    "softmax": (lambda M, x: M.softmax(x, dim=-1), lambda x: TF.softmax(x, dim=-1)),
    "log_softmax": (lambda M, x: M.log_softmax(x, dim=-1), lambda x: TF.log_softmax(x, dim=-1)),
    "softmax_dim0": (lambda M, x: M.softmax(x, dim=0), lambda x: TF.softmax(x, dim=0)),
    "logsumexp": (lambda M, x: x.logsumexp(dim=1), lambda x: x.logsumexp(dim=1)),
    "cross_entropy_mean": (lambda M, x: M.cross_entropy(x, TARGETS), lambda x: TF.cross_entropy(x, torch.from_numpy(TARGETS))),
    "cross_entropy_sum": (lambda M, x: M.cross_entropy(x, TARGETS, reduction="sum"),
                          lambda x: TF.cross_entropy(x, torch.from_numpy(TARGETS), reduction="sum")),
    "cross_entropy_none": (lambda M, x: M.cross_entropy(x, TARGETS, reduction="none"),
                           lambda x: TF.cross_entropy(x, torch.from_numpy(TARGETS), reduction="none")),
    "bce_with_logits": (lambda M, x: M.binary_cross_entropy_with_logits(x, Tensor(np.full(x.shape, 0.25, dtype=x.detach().numpy().dtype))),
                        lambda x: TF.binary_cross_entropy_with_logits(x, torch.full(x.shape, 0.25, dtype=x.dtype))),
}


@pytest.mark.filterwarnings("error")  # an overflow RuntimeWarning fails the test
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("name", STABLE)
def test_losses_are_stable_at_logits_of_1e4(name, dtype, rtol):
    ours_fn, torch_fn = STABLE[name]
    x, tx = both(EXTREME_LOGITS, dtype)
    # NumPy must report overflow / invalid / divide as warnings (-> errors here); underflow
    # to 0 (exp(-2e4)) is the correct IEEE answer and stays silent, as by default.
    with np.errstate(over="warn", invalid="warn", divide="warn", under="ignore"):
        y = ours_fn(F, x)
        ty = torch_fn(tx)
        assert_finite_and_close(y.detach().numpy(), ty.detach().numpy(), rtol)
        g = np.linspace(-1.0, 1.0, ty.numel()).reshape(ty.shape).astype(dtype)
        y.backward(Tensor(g))
        ty.backward(torch.from_numpy(g))
    assert_finite_and_close(x.grad.numpy(), tx.grad.numpy(), rtol)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((0,), 0), ((2, 0), 1), ((2, 0, 3), -2)])
def test_softmax_over_an_empty_dim_is_empty_as_in_torch(name, shape, dim):
    x, tx = both(np.zeros(shape))
    y = getattr(F, name)(x, dim=dim)
    ty = getattr(TF, name)(tx, dim=dim)
    assert y.shape == tuple(ty.shape)
    y.sum().backward()
    assert x.grad.shape == shape


def test_cross_entropy_is_log_softmax_picked_at_the_target():
    # an identity independent of torch: CE = -log_softmax[i, target_i]
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((5, 4))
    target = np.array([0, 3, 3, 1, 2])
    ce = F.cross_entropy(Tensor(logits), target, reduction="none").detach().numpy()
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(ce, -log_probs[np.arange(5), target], rtol=1e-12)


def test_cross_entropy_accepts_integer_tensor_targets():
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((3, 5))
    target = np.array([4, 0, 2])
    a = F.cross_entropy(Tensor(logits), target).detach().numpy()
    b = F.cross_entropy(Tensor(logits), Tensor(target)).detach().numpy()
    np.testing.assert_allclose(a, b, rtol=0)


@pytest.mark.parametrize("dtype", ["<i8", ">i8", "<i4", ">i2", "u1", ">u4"])
def test_cross_entropy_target_bounds_for_every_integer_dtype(dtype):
    logits = Tensor(np.random.default_rng(5).standard_normal((3, 10)))
    good = np.array([1, 2, 9], dtype=dtype)
    expected = F.cross_entropy(logits, good.astype(np.int64)).detach().numpy()
    np.testing.assert_allclose(F.cross_entropy(logits, good).detach().numpy(), expected, rtol=0)
    too_big = np.array([1, 10, 2], dtype=dtype)
    with pytest.raises(ValueError, match="target 10 is out of range for 10 classes"):
        F.cross_entropy(logits, too_big)
    if np.dtype(dtype).kind == "i":
        negative = np.array([1, -1, 2], dtype=dtype)
        with pytest.raises(ValueError, match="target -1 is out of range for 10 classes"):
            F.cross_entropy(logits, negative)


def test_cross_entropy_with_infinite_or_nan_logits_is_silent_and_matches_torch():
    import warnings

    import torch

    logits = np.array([[1.0, np.inf, 0.0], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, 2.0], [1.0, 2.0, -np.inf]])
    target = np.array([1, 0, 2, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTorch does not warn either
        ours = F.cross_entropy(Tensor(logits), target, reduction="none").detach().numpy()
    theirs = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(target), reduction="none").numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours[~np.isnan(ours)], theirs[~np.isnan(theirs)], rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("special", [
    [1.0, 0.0, np.inf],  # an infinite maximum at the target: the optimistic shift gives nan, the checked one runs
    [-np.inf, -np.inf, -np.inf],  # maximum -inf
    [np.nan, 1.0, 2.0],  # nan logit
    [1.0, 2.0, -np.inf],  # finite maximum, target at -inf: an infinite loss
    [1e4, -1e4, 0.0],  # finite and large: the optimistic path's answer stands
])
def test_cross_entropy_reduced_with_special_logits_matches_torch_values_and_gradients(reduction, special):
    import warnings

    import torch

    logits = np.array([[0.5, -1.0, 2.0], special, [3.0, 1.0, -2.0]])
    target = np.array([0, 2, 1])
    x = Tensor(logits.copy(), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTorch does not warn either
        loss = F.cross_entropy(x, target, reduction=reduction)
        loss.backward()
    tx = torch.tensor(logits, requires_grad=True)
    theirs = torch.nn.functional.cross_entropy(tx, torch.tensor(target), reduction=reduction)
    theirs.backward()
    np.testing.assert_allclose(loss.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, equal_nan=True)
    ours, expected = x.grad.numpy(), tx.grad.numpy()
    nan_rows = np.isnan(expected).any(axis=1)
    np.testing.assert_allclose(ours[~nan_rows], expected[~nan_rows], rtol=1e-12, atol=1e-15)
    # PyTorch fills a row with nan where it has an infinite maximum; ours has nan where
    # softmax is inf/inf and the exact 0 elsewhere: both say the row has no gradient
    assert np.isnan(ours[nan_rows]).any(axis=1).all()


def test_float32_logits_give_a_float32_loss():
    logits = Tensor(np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    loss = F.cross_entropy(logits, np.array([0, 1, 2, 1]))
    assert np.dtype(loss.dtype) == np.float32
    loss.backward()
    assert np.dtype(logits.grad.dtype) == np.float32


# ---------------------------------------------------------------------------
# dropout
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_statistics(p):
    n = 100_000
    x = Tensor(np.ones(n), requires_grad=True)
    y = F.dropout(x, p=p, training=True)
    kept = y.detach().numpy() != 0
    # fraction dropped within 5 standard deviations of p
    assert abs((1 - kept.mean()) - p) < 5 * np.sqrt(p * (1 - p) / n)
    # survivors are scaled so the expectation is unchanged
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / (1 - p), rtol=1e-12)
    # the gradient flows through the same mask with the same scale
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / (1 - p), 0.0), rtol=1e-12)


def test_dropout_is_identity_when_not_training_or_p_is_zero():
    data = np.random.default_rng(6).standard_normal((3, 4))
    np.testing.assert_array_equal(F.dropout(Tensor(data), p=0.5, training=False).detach().numpy(), data)
    np.testing.assert_array_equal(F.dropout(Tensor(data), p=0.0, training=True).detach().numpy(), data)


def test_dropout_with_p_one_drops_everything():
    out = F.dropout(Tensor(np.ones((2, 3))), p=1.0, training=True)
    assert np.all(np.isfinite(out.detach().numpy())) and np.all(out.detach().numpy() == 0)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_rejects_p_outside_0_1(p):
    with pytest.raises(ValueError, match="p"):
        F.dropout(Tensor(np.ones(3)), p=p)


def test_dropout_is_deterministic_with_a_seed():
    x = Tensor(np.ones(1000))
    taugrad.manual_seed(1234)
    first = F.dropout(x, p=0.5).detach().numpy()
    second = F.dropout(x, p=0.5).detach().numpy()
    taugrad.manual_seed(1234)
    again = F.dropout(x, p=0.5).detach().numpy()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, second)  # the stream moves on


def test_dropout_is_deterministic_with_a_generator():
    x = Tensor(np.ones(1000))
    first = F.dropout(x, p=0.3, generator=np.random.default_rng(7)).detach().numpy()
    again = F.dropout(x, p=0.3, generator=np.random.default_rng(7)).detach().numpy()
    np.testing.assert_array_equal(first, again)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("values", [[1, 2, 3], [True, False]], ids=["int64", "bool"])
def test_softmax_of_integers_or_bools_is_refused_as_torch(name, values):
    with pytest.raises(NotImplementedError):
        getattr(torch, name)(torch.tensor(values), dim=-1)
    with pytest.raises(TypeError, match=rf"{name}: needs a floating tensor \(or a floating dtype=\), got dtype"):
        getattr(taugrad, name)(taugrad.tensor(values), dim=-1)
    expected = getattr(torch, name)(torch.tensor(values), dim=-1, dtype=torch.float64).numpy()
    np.testing.assert_allclose(getattr(taugrad, name)(taugrad.tensor(values), dim=-1, dtype=taugrad.float64).numpy(),
                               expected, rtol=1e-15)

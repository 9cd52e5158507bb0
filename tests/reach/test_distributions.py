"""taugrad.distributions against torch.distributions in float64: log_prob, entropy, moments and their
gradients; rsample's gradients from the same base noise; kl_divergence for the registered pairs; argument
validation.  Draws come from taugrad's own generator, so sample statistics are checked by contract."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import special as S

import taugrad as tg
from taugrad import distributions as D
from taugrad.distributions.special import (
    beta_grad_array, digamma_array, lgamma_array, standard_gamma_grad_array, trigamma_array,
)

RNG = np.random.default_rng(5)


def close(a, b, tol=1e-10):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def spd(batch, k):
    a = RNG.standard_normal(batch + (k, k))
    return a @ np.swapaxes(a, -1, -2) + k * np.eye(k)


def tril(batch, k):
    low = np.tril(RNG.standard_normal(batch + (k, k)), -1)
    return low + np.eye(k) * RNG.uniform(0.5, 2.0, batch + (k,))[..., None]


# name: (parameters as arrays, a function of the parameter tensors for both libraries, values to score)
CASES = {
    "Normal": (dict(loc=RNG.standard_normal(3), scale=RNG.uniform(0.5, 2, 3)),
               lambda m, p: m.Normal(p["loc"], p["scale"]), RNG.standard_normal((2, 3))),
    "Laplace": (dict(loc=RNG.standard_normal(3), scale=RNG.uniform(0.5, 2, 3)),
                lambda m, p: m.Laplace(p["loc"], p["scale"]), RNG.standard_normal((2, 3))),
    "Uniform": (dict(low=np.array([-1.0, 0.0, 2.0]), high=np.array([1.0, 3.0, 2.5])),
                lambda m, p: m.Uniform(p["low"], p["high"]), np.array([[0.5, 2.9, 2.1], [-0.9, 0.0, 2.4]])),
    "Exponential": (dict(rate=RNG.uniform(0.5, 2, 3)), lambda m, p: m.Exponential(p["rate"]),
                    RNG.uniform(0, 3, (2, 3))),
    "Gamma": (dict(concentration=np.array([0.5, 2.0, 7.0]), rate=RNG.uniform(0.5, 2, 3)),
              lambda m, p: m.Gamma(p["concentration"], p["rate"]), RNG.uniform(0.1, 3, (2, 3))),
    "Beta": (dict(concentration1=np.array([0.5, 2.0, 7.0]), concentration0=np.array([3.0, 0.7, 1.5])),
             lambda m, p: m.Beta(p["concentration1"], p["concentration0"]), RNG.uniform(0.05, 0.95, (2, 3))),
    "Bernoulli(probs)": (dict(probs=np.array([0.1, 0.5, 0.8])), lambda m, p: m.Bernoulli(probs=p["probs"]),
                         np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])),
    "Bernoulli(logits)": (dict(logits=np.array([-2.0, 0.3, 4.0])), lambda m, p: m.Bernoulli(logits=p["logits"]),
                          np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])),
    "Categorical(probs)": (dict(probs=RNG.uniform(0.1, 1, (2, 4))), lambda m, p: m.Categorical(probs=p["probs"]),
                           np.array([[0, 3], [2, 1], [1, 1]])),
    "Categorical(logits)": (dict(logits=RNG.standard_normal((2, 4))),
                            lambda m, p: m.Categorical(logits=p["logits"]), np.array([[0, 3], [2, 1]])),
    "OneHotCategorical": (dict(logits=RNG.standard_normal((2, 3))),
                          lambda m, p: m.OneHotCategorical(logits=p["logits"]),
                          np.array([[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]])),
    "MultivariateNormal(cov)": (dict(loc=RNG.standard_normal((2, 3)), covariance_matrix=spd((2,), 3)),
                                lambda m, p: m.MultivariateNormal(p["loc"], covariance_matrix=p["covariance_matrix"]),
                                RNG.standard_normal((4, 2, 3))),
    "MultivariateNormal(precision)": (dict(loc=RNG.standard_normal(3), precision_matrix=spd((2,), 3)),
                                      lambda m, p: m.MultivariateNormal(p["loc"],
                                                                        precision_matrix=p["precision_matrix"]),
                                      RNG.standard_normal((4, 2, 3))),
    "MultivariateNormal(tril)": (dict(loc=RNG.standard_normal(3), scale_tril=tril((2,), 3)),
                                 lambda m, p: m.MultivariateNormal(p["loc"], scale_tril=p["scale_tril"]),
                                 RNG.standard_normal((4, 1, 3))),
    "Independent(Normal)": (dict(loc=RNG.standard_normal((2, 3)), scale=RNG.uniform(0.5, 2, (2, 3))),
                            lambda m, p: m.Independent(m.Normal(p["loc"], p["scale"]), 1),
                            RNG.standard_normal((5, 2, 3))),
}

#: torch's trigamma (polygamma(1, .)) is only good to ~1e-9 relative (see test_special_functions)
LOOSE = {"Gamma", "Beta"}


def build(name, grad=True):
    params, make, values = CASES[name]
    po = {k: tg.tensor(v, dtype=tg.float64, requires_grad=grad) for k, v in params.items()}
    pt = {k: torch.tensor(v, dtype=torch.float64, requires_grad=grad) for k, v in params.items()}
    return make(D, po), make(torch.distributions, pt), po, pt, values


def value_pair(values):
    dtype = values.dtype if values.dtype.kind == "i" else np.float64
    return tg.tensor(values.astype(dtype)), torch.tensor(values.astype(dtype))


@pytest.mark.parametrize("name", list(CASES))
def test_shapes_moments_log_prob_entropy_and_gradients(name):
    ours, theirs, po, pt, values = build(name)
    tol = 1e-8 if name in LOOSE else 1e-10
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    for moment in ("mean", "variance", "stddev"):
        a, b = getattr(ours, moment), getattr(theirs, moment)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12, equal_nan=True)
    vo, vt = value_pair(values)
    lo, lt = ours.log_prob(vo), theirs.log_prob(vt)
    close(lo, lt)
    eo, et = ours.entropy(), theirs.entropy()
    close(eo, et, tol)
    w = RNG.standard_normal(tuple(lt.shape))
    we = RNG.standard_normal(tuple(et.shape))
    ((lo * tg.tensor(w)).sum() + (eo * tg.tensor(we)).sum()).backward()
    ((lt * torch.tensor(w)).sum() + (et * torch.tensor(we)).sum()).backward()
    for k in po:
        close(po[k].grad, pt[k].grad, tol)


def _affine_noise_case(name):
    """(our draw, the same draw made by torch from the same base noise) for the location-scale families."""
    ours, theirs, po, pt, _ = build(name)
    x = ours.rsample((4,))
    xa = x.detach().numpy()
    if name == "Normal" or name == "Laplace":
        eps = torch.tensor((xa - po["loc"].detach().numpy()) / po["scale"].detach().numpy())
        xt = pt["loc"] + eps * pt["scale"]
    elif name == "Uniform":
        lo, hi = po["low"].detach().numpy(), po["high"].detach().numpy()
        u = torch.tensor((xa - lo) / (hi - lo))
        xt = pt["low"] + u * (pt["high"] - pt["low"])
    elif name == "Exponential":
        e = torch.tensor(xa * po["rate"].detach().numpy())
        xt = e / pt["rate"]
    else:
        low = theirs._unbroadcasted_scale_tril.detach().numpy()
        eps = np.linalg.solve(low, (xa - po["loc"].detach().numpy())[..., None])
        xt = pt["loc"] + (theirs._unbroadcasted_scale_tril @ torch.tensor(eps)).squeeze(-1)
    return x, xt, po, pt


@pytest.mark.parametrize("name", ["Normal", "Laplace", "Uniform", "Exponential", "MultivariateNormal(cov)",
                                  "MultivariateNormal(precision)", "MultivariateNormal(tril)"])
def test_rsample_gradients_from_the_same_noise(name):
    tg.manual_seed(0)
    x, xt, po, pt = _affine_noise_case(name)
    close(x, xt)
    w = RNG.standard_normal(tuple(xt.shape))
    (x * tg.tensor(w)).sum().backward()
    (xt * torch.tensor(w)).sum().backward()
    for k in po:
        close(po[k].grad, pt[k].grad)


def test_gamma_rsample_gradient_is_the_implicit_derivative():
    tg.manual_seed(1)
    alpha = tg.tensor([0.3, 1.0, 4.0, 60.0], dtype=tg.float64, requires_grad=True)
    rate = tg.tensor([2.0, 0.5, 1.0, 3.0], dtype=tg.float64, requires_grad=True)
    x = D.Gamma(alpha, rate).rsample((50,))
    x.sum().backward()
    z = x.detach().numpy() * rate.detach().numpy()
    a = np.broadcast_to(alpha.detach().numpy(), z.shape)
    # dx/dalpha at fixed u = P(alpha, z): finite differences of scipy's inverse CDF
    u = S.gammainc(a, z)
    h = 1e-6 * a
    fd = (S.gammaincinv(a + h, u) - S.gammaincinv(a - h, u)) / (2 * h)
    ok = (u > 1e-10) & (u < 1 - 1e-10)  # where the inverse CDF's finite differences are themselves accurate
    dz = standard_gamma_grad_array(a, z)
    np.testing.assert_allclose(dz[ok], fd[ok], rtol=1e-6)
    close(alpha.grad, (dz / rate.detach().numpy()).sum(0))
    close(rate.grad, (-z / rate.detach().numpy() ** 2).sum(0))
    # torch's _standard_gamma_grad approximates the same derivative (to about 1e-3 relative)
    theirs = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(z)).numpy()
    np.testing.assert_allclose(dz, theirs, rtol=3e-3)


def test_beta_rsample_gradient_is_the_implicit_derivative():
    tg.manual_seed(2)
    a = tg.tensor([2.0, 0.7, 40.0], dtype=tg.float64, requires_grad=True)
    b = tg.tensor([3.0, 1.5, 0.5], dtype=tg.float64, requires_grad=True)
    x = D.Beta(a, b).rsample((30,))
    w = RNG.standard_normal(tuple(x.shape))
    (x * tg.tensor(w)).sum().backward()
    xs = x.detach().numpy()
    av, bv = np.broadcast_to(a.detach().numpy(), xs.shape), np.broadcast_to(b.detach().numpy(), xs.shape)
    # dx/da and dx/db at fixed u = I_x(a, b): finite differences of scipy's inverse
    u = S.betainc(av, bv, xs)
    ok = (u > 1e-8) & (u < 1 - 1e-8)
    for k, (shift_a, shift_b) in enumerate(((1e-6, 0.0), (0.0, 1e-6))):
        ha, hb = shift_a * av, shift_b * bv
        fd = (S.betaincinv(av + ha, bv + hb, u) - S.betaincinv(av - ha, bv - hb, u)) / (2 * (ha + hb))
        mine = beta_grad_array(xs, av, bv)[k]
        np.testing.assert_allclose(mine[ok], fd[ok], rtol=1e-6)
    da, db = beta_grad_array(xs, av, bv)
    close(a.grad, (w * da).sum(0))
    close(b.grad, (w * db).sum(0))
    # torch's Beta.rsample gradient (its Dirichlet's) approximates the same derivative to about 1e-3
    c = torch.tensor(np.stack([av, bv], -1), requires_grad=True)
    xt = torch.tensor(np.stack([xs, 1 - xs], -1))
    t = torch._dirichlet_grad(xt, c, c.sum(-1, keepdim=True)).detach().numpy()
    np.testing.assert_allclose(da, t[..., 0] * (1 - xs), rtol=5e-3)
    np.testing.assert_allclose(db, -t[..., 1] * xs, rtol=5e-3)


STAT_CASES = [
    ("Normal", lambda: D.Normal(tg.tensor([1.0, -2.0]), tg.tensor([0.5, 2.0]))),
    ("Laplace", lambda: D.Laplace(tg.tensor([0.0, 3.0]), tg.tensor([1.0, 0.5]))),
    ("Uniform", lambda: D.Uniform(tg.tensor([0.0, -1.0]), tg.tensor([1.0, 3.0]))),
    ("Exponential", lambda: D.Exponential(tg.tensor([0.5, 4.0]))),
    ("Gamma", lambda: D.Gamma(tg.tensor([0.5, 5.0]), tg.tensor([1.0, 2.0]))),
    ("Beta", lambda: D.Beta(tg.tensor([0.5, 4.0]), tg.tensor([2.0, 1.0]))),
    ("Bernoulli", lambda: D.Bernoulli(probs=tg.tensor([0.2, 0.9]))),
    ("OneHotCategorical", lambda: D.OneHotCategorical(probs=tg.tensor([0.2, 0.5, 0.3]))),
    ("MultivariateNormal", lambda: D.MultivariateNormal(tg.tensor([1.0, -1.0]),
                                                         covariance_matrix=tg.tensor([[2.0, 0.6], [0.6, 1.0]]))),
]


@pytest.mark.parametrize("name, make", STAT_CASES)
def test_sample_statistics(name, make):
    tg.manual_seed(3)
    dist = make()
    n = 40000
    s = dist.sample((n,))
    assert tuple(s.shape) == (n,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    assert not s.requires_grad
    a = s.numpy().astype(np.float64)
    mean, var = dist.mean.detach().numpy(), dist.variance.detach().numpy()
    se = np.sqrt(var / n)
    assert np.all(np.abs(a.mean(0) - mean) < 5 * se + 1e-12), (a.mean(0), mean)
    np.testing.assert_allclose(a.var(0), var, rtol=0.08)
    assert bool(dist.support.check(s)._data.all())


def test_categorical_frequencies_and_shapes():
    tg.manual_seed(4)
    probs = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
    dist = D.Categorical(probs=tg.tensor(probs * 4))  # normalised by the distribution
    s = dist.sample((30000,))
    assert tuple(s.shape) == (30000, 2) and s.dtype == tg.int64
    freq = np.stack([(s.numpy() == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, probs, atol=0.015)
    assert tuple(dist.sample().shape) == (2,)
    close(dist.probs, probs)


@pytest.mark.parametrize("name", list(CASES))
def test_expand(name):
    ours, theirs, _, _, values = build(name, grad=False)
    shape = (2,) + tuple(theirs.batch_shape)
    eo, et = ours.expand(shape), theirs.expand(shape)
    assert tuple(eo.batch_shape) == tuple(et.batch_shape) and tuple(eo.event_shape) == tuple(et.event_shape)
    k = values.ndim - len(theirs.batch_shape) - len(theirs.event_shape)
    vo, vt = value_pair(values.reshape(values.shape[:k] + (1,) + values.shape[k:]))  # one value per new row
    close(eo.log_prob(vo), et.log_prob(vt))
    close(eo.entropy(), et.entropy(), 1e-8)
    assert tuple(eo.sample((3,)).shape) == tuple(et.sample((3,)).shape)
    with pytest.raises(ValueError, match="expand"):
        ours.expand((5,) + tuple(theirs.batch_shape[:-1]) + (7,)) if theirs.batch_shape else ours.expand((7, 0))


def test_multivariate_normal_matrices_agree():
    cov = spd((2,), 3)
    loc = tg.zeros(3, dtype=tg.float64)
    for kw in (dict(covariance_matrix=cov), dict(precision_matrix=np.linalg.inv(cov)),
               dict(scale_tril=np.linalg.cholesky(cov))):
        dist = D.MultivariateNormal(loc, **{k: tg.tensor(v) for k, v in kw.items()})
        close(dist.covariance_matrix, cov)
        close(dist.precision_matrix, np.linalg.inv(cov))
        close(dist.scale_tril, np.linalg.cholesky(cov))


def test_validation_as_torch():
    with pytest.raises(ValueError, match=r"Expected parameter scale .* GreaterThan\(lower_bound=0.0\)"):
        D.Normal(tg.tensor([0.0]), tg.tensor([-1.0]))
    D.Normal(tg.tensor([0.0]), tg.tensor([-1.0]), validate_args=False)  # not checked when asked not to
    with pytest.raises(ValueError, match="probs"):
        D.Bernoulli(probs=tg.tensor([1.5]))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both"):
        D.Categorical(probs=tg.tensor([0.5, 0.5]), logits=tg.tensor([0.0, 0.0]))
    with pytest.raises(ValueError, match="within the support"):
        D.Exponential(tg.tensor([1.0])).log_prob(tg.tensor([-1.0]))
    with pytest.raises(ValueError, match="within the support"):
        D.Categorical(logits=tg.tensor([0.0, 0.0])).log_prob(tg.tensor(2))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)
    with pytest.raises(ValueError, match="low"):
        D.Uniform(tg.tensor([1.0]), tg.tensor([0.0]))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(tg.zeros(2))
    with pytest.raises(ValueError, match="covariance_matrix"):
        D.MultivariateNormal(tg.zeros(2), covariance_matrix=tg.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(tg.zeros(2), tg.ones(2)), 2)
    with pytest.raises(NotImplementedError, match="Normal"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))
    with pytest.raises(NotImplementedError, match="rsample"):
        D.Categorical(logits=tg.zeros(3)).rsample()


KL_PAIRS = [
    ("Normal", "Normal"), ("Laplace", "Laplace"), ("Uniform", "Uniform"), ("Exponential", "Exponential"),
    ("Gamma", "Gamma"), ("Beta", "Beta"), ("Bernoulli(probs)", "Bernoulli(logits)"),
    ("Categorical(probs)", "Categorical(logits)"), ("OneHotCategorical", "OneHotCategorical"),
    ("MultivariateNormal(cov)", "MultivariateNormal(tril)"),
    ("MultivariateNormal(precision)", "MultivariateNormal(cov)"), ("Independent(Normal)", "Independent(Normal)"),
    ("Exponential", "Gamma"), ("Gamma", "Exponential"), ("Laplace", "Normal"), ("Normal", "Laplace"),
    ("Uniform", "Normal"), ("Exponential", "Normal"), ("Gamma", "Normal"), ("Beta", "Normal"),
    ("Uniform", "Exponential"), ("Uniform", "Gamma"), ("Beta", "Uniform"),
]


@pytest.mark.parametrize("p_name, q_name", KL_PAIRS)
def test_kl_divergence(p_name, q_name):
    po_d, pt_d, po, pt, _ = build(p_name)
    if q_name == p_name:  # another member of the family: fresh parameters of the same shapes
        params, make, _ = CASES[q_name]
        shifted = {k: (v[::-1].copy() if "matrix" not in k else v + np.eye(v.shape[-1])) for k, v in
                   params.items()}
        qo = {k: tg.tensor(v, dtype=tg.float64, requires_grad=True) for k, v in shifted.items()}
        qt = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in shifted.items()}
        qo_d, qt_d = make(D, qo), make(torch.distributions, qt)
    else:
        qo_d, qt_d, qo, qt, _ = build(q_name)
    ko, kt = D.kl_divergence(po_d, qo_d), torch.distributions.kl_divergence(pt_d, qt_d)
    tol = 1e-8 if {p_name, q_name} & LOOSE else 1e-10
    np.testing.assert_allclose(ko.detach().numpy(), kt.detach().numpy(), rtol=tol, atol=tol)
    finite = np.isfinite(kt.detach().numpy())
    w = np.where(finite, RNG.standard_normal(tuple(kt.shape)), 0.0)
    (ko.masked_fill(tg.tensor(~finite), 0.0) * tg.tensor(w)).sum().backward()
    (kt.masked_fill(torch.tensor(~finite), 0.0) * torch.tensor(w)).sum().backward()
    for mine, theirs in ((po, pt), (qo, qt)):
        for k in mine:
            if theirs[k].grad is None:
                assert mine[k].grad is None or not np.any(mine[k].grad.numpy())
                continue
            close(mine[k].grad, theirs[k].grad, tol)


def test_special_functions():
    x = np.array([1e-3, 0.3, 0.5, 1.0, 2.5, 7.0, 9.99, 10.0, 55.0, 1e4, -0.5, -2.3])
    np.testing.assert_allclose(lgamma_array(x), S.gammaln(x), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(digamma_array(x), S.digamma(x), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(trigamma_array(x), S.polygamma(1, x), rtol=1e-13)
    from taugrad.distributions.special import digamma, lgamma
    t = tg.tensor([0.4, 3.0], dtype=tg.float64, requires_grad=True)
    (g,) = tg.autograd.grad(lgamma(t).sum(), [t], create_graph=True)
    close(g, S.digamma([0.4, 3.0]), 1e-14)
    g.sum().backward()
    close(t.grad, S.polygamma(1, [0.4, 3.0]), 1e-13)
    assert tuple(digamma(t).shape) == (2,)

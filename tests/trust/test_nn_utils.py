"""``nn.utils`` against torch float64: every argument form (generator, filter, list, tuple, one tensor)."""
import warnings

import numpy as np
import pytest
import torch

import taugrad
from taugrad import nn

RNG = np.random.default_rng(0)
W1, B1, W2 = RNG.normal(size=(4, 3)) * 3, RNG.normal(size=4), RNG.normal(size=(2, 4)) * 3
X = RNG.normal(size=(5, 3))


def _pair():
    """The same two-layer model in both libraries, with gradients from one backward."""
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2, bias=False)).double()
    gm = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2, bias=False)).double()
    with torch.no_grad():
        for p, v in zip(tm.parameters(), (W1, B1, W2)):
            p.copy_(torch.from_numpy(v))
    for p, v in zip(gm.parameters(), (W1, B1, W2)):
        p.data[...] = taugrad.tensor(v)
    (tm(torch.from_numpy(X)) ** 2).sum().backward()
    (gm(taugrad.tensor(X)) ** 2).sum().backward()
    return tm, gm


FORMS = {
    "generator": lambda m: m.parameters(),
    "filter": lambda m: filter(lambda p: p.requires_grad, m.parameters()),
    "list": lambda m: list(m.parameters()),
    "tuple": lambda m: tuple(m.parameters()),
    "map": lambda m: map(lambda p: p, m.parameters()),
}


def _grads(m):
    return [p.grad.numpy().copy() for p in m.parameters()]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_takes_its_argument_once(form, norm_type):
    tm, gm = _pair()
    tt = torch.nn.utils.clip_grad_norm_(FORMS[form](tm), 1.0, norm_type)
    gt = nn.utils.clip_grad_norm_(FORMS[form](gm), 1.0, norm_type)
    assert float(gt) == pytest.approx(float(tt), rel=1e-12)
    for a, b in zip(_grads(gm), _grads(tm)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert np.linalg.norm(np.concatenate([g.ravel() for g in _grads(gm)]), ord=norm_type) <= 1.0 + 1e-6


def test_clip_grad_norm_single_tensor_and_empty_generator_warns():
    tm, gm = _pair()
    tw, gw = list(tm.parameters())[0], list(gm.parameters())[0]
    tt = torch.nn.utils.clip_grad_norm_(tw, 0.5)
    gt = nn.utils.clip_grad_norm_(gw, 0.5)
    assert float(gt) == pytest.approx(float(tt), rel=1e-12)
    np.testing.assert_allclose(gw.grad.numpy(), tw.grad.numpy(), rtol=1e-10)
    used = gm.parameters()
    list(used)
    with pytest.warns(UserWarning, match="empty generator"):
        total = nn.utils.clip_grad_norm_(used, 1.0)
    assert float(total) == 0.0


@pytest.mark.parametrize("form", sorted(FORMS))
def test_clip_grad_value_every_form(form):
    tm, gm = _pair()
    torch.nn.utils.clip_grad_value_(FORMS[form](tm), 0.3)
    nn.utils.clip_grad_value_(FORMS[form](gm), 0.3)
    for a, b in zip(_grads(gm), _grads(tm)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_get_total_norm_and_clip_grads_with_norm(form):
    tm, gm = _pair()
    tgrads = [p.grad for p in tm.parameters()]
    ggrads = [p.grad for p in gm.parameters()]
    make = {"generator": lambda g: (x for x in g), "filter": lambda g: filter(lambda x: x is not None, g),
            "list": list, "tuple": tuple, "map": lambda g: map(lambda x: x, g)}[form]
    tn = torch.nn.utils.get_total_norm(make(tgrads), 3.0)
    gn = nn.utils.get_total_norm(make(ggrads), 3.0)
    assert float(gn) == pytest.approx(float(tn), rel=1e-12)
    torch.nn.utils.clip_grads_with_norm_(FORMS[form](tm), 0.7, tn)
    nn.utils.clip_grads_with_norm_(FORMS[form](gm), 0.7, gn)
    for a, b in zip(_grads(gm), _grads(tm)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert float(nn.utils.get_total_norm([])) == float(torch.nn.utils.get_total_norm([])) == 0.0


def test_parameters_to_vector_is_differentiable():
    tm, gm = _pair()
    tm.zero_grad()
    gm.zero_grad()
    tv = torch.nn.utils.parameters_to_vector(tm.parameters())
    gv = nn.utils.parameters_to_vector(gm.parameters())
    np.testing.assert_array_equal(gv.detach().numpy(), tv.detach().numpy())
    (tv ** 3).sum().backward()
    (gv ** 3).sum().backward()
    for a, b in zip(_grads(gm), _grads(tm)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("form", ["generator", "filter", "list", "tuple"])
def test_vector_to_parameters_every_form(form):
    tm, gm = _pair()
    vec = RNG.normal(size=4 * 3 + 4 + 2 * 4 + 3)  # longer than needed: torch uses the first elements
    torch.nn.utils.vector_to_parameters(torch.from_numpy(vec), FORMS[form](tm))
    nn.utils.vector_to_parameters(taugrad.tensor(vec), FORMS[form](gm))
    for a, b in zip(gm.parameters(), tm.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    with pytest.raises(TypeError):
        nn.utils.vector_to_parameters(vec, gm.parameters())


def test_clip_grad_norm_deprecated_name_warns_and_clips():
    tm, gm = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tt = torch.nn.utils.clip_grad_norm(tm.parameters(), 1.0)
    with pytest.warns(FutureWarning):
        gt = nn.utils.clip_grad_norm(gm.parameters(), 1.0)
    assert float(gt) == pytest.approx(float(tt), rel=1e-12)
    for a, b in zip(_grads(gm), _grads(tm)):
        np.testing.assert_allclose(a, b, rtol=1e-10)

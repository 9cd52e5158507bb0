"""taugrad.nn.utils: gradient clipping and parameter vectors, with every iterable form torch takes.

``parameters`` is given as a list, a tuple, a one-shot generator (``model.parameters()``), a
``filter`` over it, and a single tensor; each is iterated once, as torch does.
"""
from __future__ import annotations

from .scenarios import arr, fill, raises, scenario

ENTRIES: list = []
FORMS = ["list", "tuple", "generator", "filter", "single_tensor"]


def _model(L):
    m = fill(L, L.nn.Sequential(L.nn.Linear(3, 4, dtype=L.root.float64), L.nn.Tanh(), L.nn.Linear(4, 2, dtype=L.root.float64)))
    m(L.root.tensor(arr("clipx", 5, 3))).pow(2).sum().backward()
    return m


def _form(m, form):
    params = list(m.parameters())
    if form == "list":
        return params
    if form == "tuple":
        return tuple(params)
    if form == "generator":
        return m.parameters()
    if form == "filter":
        return filter(lambda p: p.requires_grad, m.parameters())
    return params[0]


# parameters_to_vector / vector_to_parameters take an iterable only (a single tensor would be
# iterated by rows in torch); the clipping functions also take a single tensor.
ITERABLE_FORMS = FORMS[:-1]

for _form_name in FORMS:
    @scenario(ENTRIES, "clip_grad_norm_", _form_name, ("parameters", "max_norm"))
    def _(L, form=_form_name):
        m = _model(L)
        total = L.utils.clip_grad_norm_(_form(m, form), 0.5)
        return total, [p.grad for p in m.parameters()]

    @scenario(ENTRIES, "clip_grad_value_", _form_name, ("parameters", "clip_value"))
    def _(L, form=_form_name):
        m = _model(L)
        out = L.utils.clip_grad_value_(_form(m, form), 0.05)
        return out, [p.grad for p in m.parameters()]

    if _form_name not in ITERABLE_FORMS:
        continue

    @scenario(ENTRIES, "parameters_to_vector", _form_name, ("parameters",))
    def _(L, form=_form_name):
        m = _model(L)
        return L.utils.parameters_to_vector(_form(m, form))

    @scenario(ENTRIES, "vector_to_parameters", _form_name, ("vec", "parameters"))
    def _(L, form=_form_name):
        m = _model(L)
        n = sum(p.numel() for p in m.parameters())
        L.utils.vector_to_parameters(L.root.tensor(arr("vec", n)), _form(m, form))
        return list(m.parameters())


@scenario(ENTRIES, "clip_grad_norm_", "keywords", ("norm_type", "error_if_nonfinite", "foreach"))
def _(L):
    m = _model(L)
    totals = [L.utils.clip_grad_norm_(parameters=m.parameters(), max_norm=2.0, norm_type=norm, error_if_nonfinite=True,
                                      foreach=None) for norm in (1.0, 3.0, float("inf"))]
    return totals, [p.grad for p in m.parameters()]


@scenario(ENTRIES, "clip_grad_norm", "deprecated_alias", ("parameters", "max_norm", "norm_type", "error_if_nonfinite",
                                                         "foreach"))
def _(L):
    m = _model(L)
    total = L.utils.clip_grad_norm(parameters=m.parameters(), max_norm=0.3, norm_type=2.0, error_if_nonfinite=False,
                                   foreach=None)
    return total, [p.grad for p in m.parameters()]


@scenario(ENTRIES, "clip_grad_norm_", "nonfinite")
def _(L):
    m = _model(L)
    with L.root.no_grad():
        next(m.parameters()).grad[0, 0] = float("nan")
    refused = raises(lambda: L.utils.clip_grad_norm_(m.parameters(), 1.0, error_if_nonfinite=True))
    return refused, L.utils.clip_grad_norm_(m.parameters(), 1.0)


@scenario(ENTRIES, "clip_grad_value_", "keywords", ("foreach",))
def _(L):
    m = _model(L)
    L.utils.clip_grad_value_(parameters=m.parameters(), clip_value=0.01, foreach=None)
    return [p.grad for p in m.parameters()]


@scenario(ENTRIES, "parameters_to_vector", "differentiable")
def _(L):
    m = _model(L)
    m.zero_grad()
    penalty = L.utils.parameters_to_vector(m.parameters()).pow(2).sum()
    penalty.backward()
    return penalty, [p.grad for p in m.parameters()]


@scenario(ENTRIES, "get_total_norm", "forms", ("tensors", "norm_type", "error_if_nonfinite", "foreach"))
def _(L):
    m = _model(L)
    grads = [p.grad for p in m.parameters()]
    return (L.utils.get_total_norm(grads), L.utils.get_total_norm(iter(grads), norm_type=1.0),
            L.utils.get_total_norm(tensors=grads[0], norm_type=float("inf"), error_if_nonfinite=True, foreach=None))


@scenario(ENTRIES, "clip_grads_with_norm_", "forms", ("parameters", "max_norm", "total_norm", "foreach"))
def _(L):
    m = _model(L)
    total = L.utils.get_total_norm([p.grad for p in m.parameters()])
    L.utils.clip_grads_with_norm_(m.parameters(), 0.5, total)
    L.utils.clip_grads_with_norm_(parameters=list(m.parameters()), max_norm=0.2, total_norm=total * 0.5, foreach=None)
    return [p.grad for p in m.parameters()]

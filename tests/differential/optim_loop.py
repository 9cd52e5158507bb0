"""The optimizer loop run identically in both libraries: 20 steps with one loop feature.

The loss is bounded below (a quartic in ``b``), so line searches stay finite. It uses ``w`` three times (a tied weight: its gradient is the sum of the uses) and, in
the features that name them, a frozen parameter (``requires_grad=False``, listed in the
optimizer), a parameter added mid-run, and a parameter left out of the loss every third step.
"""
from __future__ import annotations

import numpy as np

from .common import build, rng_for, to_numpy

STEPS = 20
_START = {name: np.random.default_rng(7).normal(size=shape) for name, shape in
          {"w": (3, 4), "b": (4,), "frozen": (2, 3), "late": (3,)}.items()}
_COEF = [{name: rng_for(f"coef{k}{name}").normal(size=a.shape) for name, a in _START.items()} for k in range(STEPS)]
IMPL_KEYS = {"foreach", "capturable", "differentiable", "fused"}


def custom_optimizer_class(L):
    """A momentum optimizer written as torch's documentation shows: state looked up by parameter."""

    class Momentum(L.optim.Optimizer):
        def __init__(self, params, lr=0.1, beta=0.9):
            super().__init__(params, dict(lr=lr, beta=beta))

        def step(self, closure=None):
            loss = closure() if closure is not None else None
            with L.root.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        state = self.state[p]
                        if "buf" not in state:
                            state["buf"] = L.root.zeros_like(p)
                        state["buf"].mul_(group["beta"]).add_(p.grad)
                        p.sub_(state["buf"] * group["lr"])
            return loss

    return Momentum


def make_optimizer(L, name, params, options):
    cls = custom_optimizer_class(L) if name == "Optimizer" else getattr(L.optim, name)
    return cls(params, **build(L, options, []))


def make_params(L):
    p = {n: L.root.tensor(a.copy(), requires_grad=(n != "frozen")) for n, a in _START.items()}
    return p


def loss_at(L, p, k, feature, added):
    c = {n: L.root.tensor(a) for n, a in _COEF[k].items()}
    w, b = p["w"], p["b"]
    loss = (c["w"] * w).sum() + 0.1 * (w * w).sum()
    if not (feature == "sometimes_no_grad" and k % 3 == 0):
        loss = loss + (c["b"] * b).sum() + 0.1 * (w @ b).sum() + 0.05 * (b * b * b * b).sum()
    if feature == "frozen_and_tied":
        loss = loss + (c["frozen"] * p["frozen"]).sum() + 0.01 * (w.t() @ w).sum()
    if added:
        loss = loss + (c["late"] * p["late"]).sum() + 0.2 * (p["late"] * p["late"]).sum()
    return loss


def initial_params(p, feature, options):
    if feature == "frozen_and_tied":
        return [p["w"], p["b"], p["frozen"]]
    if feature == "param_group_dicts":
        return [{"params": [p["w"]], "lr": 0.02}, {"params": [p["b"]]}]
    if feature == "generator_params":
        return (t for t in [p["w"], p["b"]])
    if feature == "named_params":
        return [("w", p["w"]), ("b", p["b"])]
    return [p["w"], p["b"]]


def scratch_free(sd):
    """LBFGS's "al" holds the last two-loop coefficients, each a difference of dot products that
    cancels to roundoff when the history is nearly dependent: compared by which slots are used."""
    for state in sd.get("state", {}).values():
        if isinstance(state, dict) and "al" in state:
            state["al"] = [v is None for v in state["al"]]
    return sd


def normalize(obj):
    """An optimizer state_dict with tensors as arrays, numbers as floats, dicts sorted by key."""
    if hasattr(obj, "detach") or isinstance(obj, np.ndarray):
        a = np.array(to_numpy(obj), copy=True)  # torch's state_dict holds the live tensors
        return float(a) if a.ndim == 0 else a
    if isinstance(obj, dict):
        return {k: normalize(obj[k]) for k in sorted(obj, key=str) if k not in IMPL_KEYS}
    if isinstance(obj, (list, tuple)):
        return [normalize(v) for v in obj]
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return float(obj)
    return obj


def run_loop(L, name, options, feature, needs_closure) -> list:
    """The 20 steps; after each: the parameters, the state_dict, the loss step returned."""
    p = make_params(L)
    opt = make_optimizer(L, name, initial_params(p, feature, options), options)
    added = False
    records = []
    for k in range(STEPS):
        if feature == "add_param_group" and k == 10:
            opt.add_param_group({"params": [p["late"]], "lr": 0.02})
            added = True
        if feature == "state_dict_reload" and k == 10:
            saved = opt.state_dict()
            opt = make_optimizer(L, name, initial_params(p, feature, options), options)
            opt.load_state_dict(saved)

        def closure():
            opt.zero_grad()
            loss = loss_at(L, p, k, feature, added)
            loss.backward()
            return loss

        if feature == "closure" or needs_closure:
            returned = opt.step(closure)
        else:
            if feature == "zero_grad_keep":
                opt.zero_grad(set_to_none=False)
            else:
                opt.zero_grad()
            loss_at(L, p, k, feature, added).backward()
            returned = opt.step()
        records.append({
            "params": {n: t.detach().clone() for n, t in p.items()},
            "returned": None if returned is None else float(to_numpy(returned)),
            "state_dict": scratch_free(normalize(opt.state_dict())),
        })
    return records


def state_by_param(L, name, options) -> list:
    """``optimizer.state[p]`` after three steps, for each parameter, as torch's docs use it."""
    p = make_params(L)
    opt = make_optimizer(L, name, [p["w"], p["b"]], options)
    for k in range(3):
        def closure():
            opt.zero_grad()
            loss = loss_at(L, p, k, "plain", False)
            loss.backward()
            return loss
        opt.step(closure)
    return [scratch_free({"state": {0: normalize(dict(opt.state[p[n]]))}}) for n in ("w", "b")]

"""The scheduler loop, run identically in both libraries: 20 epochs, a state_dict round trip."""
from __future__ import annotations

import numpy as np

from .common import build, to_numpy

EPOCHS = 20
METRICS = list(np.random.default_rng(5).uniform(0.5, 1.0, size=EPOCHS) + np.linspace(0, 0.2, EPOCHS))


def make_optimizer(L):
    w = L.root.tensor(np.ones(3), requires_grad=True)
    b = L.root.tensor(np.ones(2), requires_grad=True)
    return L.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.9)


def make_scheduler(L, name, config, opt):
    kwargs = {}
    for key, value in config.items():
        if key == "schedulers":
            value = [getattr(L.sched, s.name)(opt, **s.kwargs) for s in value]
        elif key == "optimizer":
            value = opt
        kwargs[key] = build(L, value, [])
    if name == "ChainedScheduler":
        return L.sched.ChainedScheduler(**kwargs)
    return getattr(L.sched, name)(opt, **kwargs)


def public_state(sd) -> dict:
    """A scheduler's state_dict without torch's private keys and without functions."""
    out = {}
    for key in sorted(sd):
        value = sd[key]
        if key.startswith("_") or callable(value):
            continue
        if isinstance(value, list) and any(callable(v) for v in value):
            continue
        out[key] = value
    return out


def run_schedule(L, info, config, feature) -> dict:
    opt = make_optimizer(L)
    sched = make_scheduler(L, info.name, config, opt)
    lrs, momenta = [], []
    for epoch in range(EPOCHS):
        if feature == "state_dict_round_trip" and epoch == 10:
            saved_opt, saved = opt.state_dict(), sched.state_dict()
            opt = make_optimizer(L)
            opt.load_state_dict(saved_opt)
            sched = make_scheduler(L, info.name, config, opt)
            sched.load_state_dict(saved)
        opt.step()
        if info.metric:
            sched.step(METRICS[epoch])
        elif feature == "step_epoch":
            sched.step(epoch + 1)
        else:
            sched.step()
        lrs.append([float(to_numpy(g["lr"])) for g in opt.param_groups])
        momenta.append([float(to_numpy(g["momentum"])) for g in opt.param_groups])
    result = {"lr": lrs, "momentum": momenta,
              "last_lr": [float(to_numpy(v)) for v in sched.get_last_lr()]}
    if feature == "state_dict_round_trip":
        result["state_dict"] = public_state(sched.state_dict())
    return result

"""Generic drivers: run one sample call in both libraries and compare everything it touches."""
from __future__ import annotations

import warnings

from .common import (LIBS, TAUGRAD, TORCH, assert_close, build, float64_default, grads_of,
                     projection_loss, torch_parameters)


def keyword_form(info, call, family_of_torch):
    """The call with each positional argument given by torch's name for it."""
    names = info.params or torch_parameters(getattr(family_of_torch, info.torch_name or info.name))
    assert len(call.args) <= len(names), (info.name, names)
    kwargs = dict(zip(names, call.args))
    kwargs.update(call.kwargs)
    return type(call)((), kwargs, "kw", call.error, call.grad)


def run_call(L, family: str, name: str, call, key: str) -> dict:
    """Build the arguments in L, call, backpropagate a random projection; what to compare."""
    leaves: list = []
    args = build(L, call.args, leaves)
    kwargs = build(L, call.kwargs, leaves)
    fn = getattr(getattr(L, family), name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(*args, **kwargs)
    passed = [p for _, p in leaves]
    result = {"out": out, "identity": [out is p for p in passed]}
    result["inputs_after_call"] = [p.detach().clone() for p in passed]
    if call.grad:
        loss = projection_loss(L, out, key)
        if loss is not None:
            loss.backward()
        result["grads"] = grads_of(leaves)
    return result


def compare_call(family: str, name: str, call, key: str):
    """Run in torch and taugrad from the same NumPy values; values, identity, inputs, grads to 1e-10."""
    with float64_default():
        if call.error:
            for L in LIBS:
                try:
                    run_call(L, family, name, call, key)
                except Exception:  # noqa: BLE001 - torch's refusal is what is compared
                    continue
                raise AssertionError(f"{L.name} accepts {name}({key}), the other library refuses it")
            return
        want = run_call(TORCH, family, name, call, key)
        got = run_call(TAUGRAD, family, name, call, key)
    assert_close(got["out"], want["out"], f"{name} value")
    assert got["identity"] == want["identity"], f"{name}: returns its input {got['identity']}, torch {want['identity']}"
    assert_close(got["inputs_after_call"], want["inputs_after_call"], f"{name} inputs after the call")
    if "grads" in want:
        assert_close(got["grads"], want["grads"], f"{name} gradients")


def module_keyword_form(info, call):
    """The first call with its constructor arguments given by torch's names for them."""
    import torch

    names = torch_parameters(getattr(torch.nn, info.name).__init__)
    kwargs = dict(zip(names, call.ctor))
    kwargs.update(call.ctor_kwargs)
    return type(call)((), kwargs, call.inputs, call.forward, "kw", call.modes, call.error)


def build_module(L, name, call):
    with float64_default():
        return getattr(L.nn, name)(*build(L, call.ctor, []), **build(L, call.ctor_kwargs, []))


def run_module(L, module, call, key: str) -> list:
    """Forward in each mode on fresh inputs; outputs, grads, parameter grads and state after each."""
    results = []
    for mode in call.modes:
        module.train(mode == "train")
        leaves: list = []
        inputs = build(L, call.inputs, leaves)
        forward = build(L, call.forward, leaves)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = module(*inputs, **forward)
        passed = [p for _, p in leaves]
        result = {"mode": mode, "out": out, "identity": [out is p for p in passed],
                  "inputs_after_call": [p.detach().clone() for p in passed]}
        loss = projection_loss(L, out, key + mode)
        if loss is not None:
            loss.backward()
        result["input_grads"] = grads_of(leaves)
        result["param_grads"] = {n: None if p.grad is None else p.grad.detach().clone()
                                 for n, p in module.named_parameters()}
        result["state"] = {k: v.detach().clone() for k, v in module.state_dict().items()}
        for p in module.parameters():
            p.grad = None
        results.append(result)
    return results


def compare_module(info, call, key: str):
    """Build in both, copy torch's initial state into taugrad, run each mode, compare everything."""
    import numpy as np

    if call.error:
        for L in LIBS:
            try:
                run_module(L, build_module(L, info.name, call), call, key)
            except Exception:  # noqa: BLE001 - torch's refusal is what is compared
                continue
            raise AssertionError(f"{L.name} accepts nn.{info.name} {key}, the other library refuses it")
        return
    theirs = build_module(TORCH, info.name, call)
    start = {k: np.array(v.detach().numpy(), copy=True) for k, v in theirs.state_dict().items()}
    ours = build_module(TAUGRAD, info.name, call)
    assert list(ours.state_dict()) == list(start), f"state_dict keys {list(ours.state_dict())}, torch {list(start)}"
    if start:
        ours.load_state_dict(start)
    with float64_default():
        want = run_module(TORCH, theirs, call, key)
        got = run_module(TAUGRAD, ours, call, key)
    for g, w in zip(got, want):
        what = f"nn.{info.name} ({w['mode']})"
        assert_close(g["out"], w["out"], f"{what} output")
        assert g["identity"] == w["identity"], f"{what}: returns its input {g['identity']}, torch {w['identity']}"
        assert_close(g["inputs_after_call"], w["inputs_after_call"], f"{what} inputs after the call")
        assert_close(g["input_grads"], w["input_grads"], f"{what} input gradients")
        assert_close(g["param_grads"], w["param_grads"], f"{what} parameter gradients")
        assert_close(g["state"], w["state"], f"{what} state_dict after forward")

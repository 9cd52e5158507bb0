"""Modules exported whole: Embedding (a row lookup that is no registered op) and the recurrent layers.

A recurrent layer runs its time loop as one fused op of its own; ONNX has the
same layers as single nodes (``LSTM``, ``GRU``, ``RNN``), one per layer and
direction pair.  Their gate orders differ from PyTorch's: ONNX stacks LSTM
gates as (i, o, f, c) where PyTorch has (i, f, g, o), and GRU gates as
(z, r, h) where PyTorch has (r, z, n); the weight rows are reordered here.
PyTorch's GRU applies the reset gate after the hidden product, which is ONNX's
``linear_before_reset=1``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from taugrad.nn.functional.sparse import embedding as functional_embedding
from taugrad.nn.layers import Embedding
from taugrad.nn.rnn import GRU, LSTM, RNN
from taugrad.onnx.graph import host_array
from taugrad.tensors.core.node import Tensor

#: PyTorch's gate blocks in ONNX's order
GATES = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN_TANH": [0], "RNN_RELU": [0]}


def embedding(tracer, module, out, input, *args, **kwargs) -> None:
    g = tracer.graph
    g.bind(out, g.node("Gather", [g.value(module.weight), g.value(input, np.int64)], axis=0))


#: functions that are no registered op, traced by name like one
FUNCTIONS = {"embedding": functional_embedding}


def _reorder(w: np.ndarray, mode: str, hidden: int) -> np.ndarray:
    return np.concatenate([w[i * hidden:(i + 1) * hidden] for i in GATES[mode]], axis=0)


def recurrent(tracer, module, out, input, hx: Any = None) -> None:
    g = tracer.graph
    mode = module.mode
    if getattr(module, "proj_size", 0):
        raise tracer.fail("lstm with proj_size")
    if not isinstance(input, Tensor) or input.ndim != 3:
        raise tracer.fail(f"{mode.lower()} on a packed or unbatched input")
    hidden, layers = module.hidden_size, module.num_layers
    dirs = 2 if module.bidirectional else 1
    x = g.value(input)
    if module.batch_first:
        x = g.node("Transpose", [x], perm=[1, 0, 2])
    states = (list(hx) if isinstance(hx, (tuple, list)) else [hx]) if hx is not None else []
    state_names = [g.value(s) for s in states]
    params = dict(module.named_parameters())
    finals = [[] for _ in range(max(1, len(states) or (2 if mode == "LSTM" else 1)))]
    dtype = input._data.dtype
    for layer in range(layers):
        w, r, b = [], [], []
        for d in range(dirs):
            suffix = f"_l{layer}" + ("_reverse" if d else "")
            w.append(_reorder(host_array(params["weight_ih" + suffix]), mode, hidden))
            r.append(_reorder(host_array(params["weight_hh" + suffix]), mode, hidden))
            if module.bias:
                b.append(np.concatenate([_reorder(host_array(params["bias_ih" + suffix]), mode, hidden),
                                         _reorder(host_array(params["bias_hh" + suffix]), mode, hidden)]))
        ins = [x, g.const(np.stack(w).astype(dtype)), g.const(np.stack(r).astype(dtype)),
               g.const(np.stack(b).astype(dtype)) if b else "", ""]
        for s in state_names:
            ins.append(g.node("Slice", [s, g.ints([layer * dirs]), g.ints([(layer + 1) * dirs]), g.ints([0])]))
        attrs = {"hidden_size": hidden, "direction": "bidirectional" if dirs == 2 else "forward"}
        if mode == "GRU":
            attrs["linear_before_reset"] = 1
        if mode.startswith("RNN"):
            attrs["activations"] = ["Tanh"] * dirs if mode == "RNN_TANH" else ["Relu"] * dirs
        op = {"LSTM": "LSTM", "GRU": "GRU"}.get(mode, "RNN")
        n_out = 3 if op == "LSTM" else 2
        outs = g.node(op, ins, outputs=n_out, **attrs)
        y = g.node("Transpose", [outs[0]], perm=[0, 2, 1, 3])  # (seq, dirs, batch, hidden) -> (seq, batch, dirs, hidden)
        x = g.node("Reshape", [y, g.ints([0, 0, -1])])
        for i, final in enumerate(finals):
            final.append(outs[1 + i])
    result = x if not module.batch_first else g.node("Transpose", [x], perm=[1, 0, 2])
    output, state = out
    g.bind(output, result)
    state = list(state) if isinstance(state, (tuple, list)) else [state]
    for tensor, final in zip(state, finals):
        g.bind(tensor, final[0] if len(final) == 1 else g.node("Concat", final, axis=0))


MODULE_CONVERTERS = {Embedding: embedding, LSTM: recurrent, GRU: recurrent, RNN: recurrent}


"""``export``: trace a model's forward once and write what it computed as an ONNX model."""
from __future__ import annotations

import enum
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import onnx
from onnx import helper

from taugrad.nn.module import Module
from taugrad.onnx.graph import ExportError, Graph, onnx_type
from taugrad.onnx.modules import FUNCTIONS, MODULE_CONVERTERS
from taugrad.onnx.ops import CONVERTERS
from taugrad.onnx.trace import Tracer, leaves
from taugrad.tensors.core.node import Tensor

#: the opset written when none is asked for (LayerNormalization needs 17)
DEFAULT_OPSET = 17
_EXPORTING = [False]


class TrainingMode(enum.IntEnum):
    """The mode the model is traced in, as ``torch.onnx.TrainingMode``."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def is_in_onnx_export() -> bool:
    """True while :func:`export` runs the model's forward."""
    return _EXPORTING[0]


def _axes_of(spec: Any) -> dict:
    if isinstance(spec, Mapping):
        return {int(k): str(v) for k, v in spec.items()}
    return {int(a): f"dim_{int(a)}" for a in spec}


def _value_info(name: str, x: Tensor, dynamic: dict, known: bool) -> onnx.ValueInfoProto:
    shape = [dynamic.get(i, d) if known else None for i, d in enumerate(x.shape)]
    return helper.make_tensor_value_info(name, onnx_type(x._data.dtype), shape)


def export(model: Any, args: Any = (), f: Any = None, *, kwargs: Optional[dict] = None,
           export_params: bool = True, verbose: Optional[bool] = False, training: Any = TrainingMode.EVAL,
           input_names: Optional[Sequence[str]] = None, output_names: Optional[Sequence[str]] = None,
           dynamic_axes: Optional[Mapping[str, Any]] = None, opset_version: Optional[int] = None,
           do_constant_folding: bool = True, **ignored: Any) -> Optional[onnx.ModelProto]:
    r"""Run ``model(*args)`` once, recording its ops, and write the computation as an ONNX model to ``f``.

    The trace: every registered tensor op whose operands depend on an input
    becomes ONNX nodes; everything computed from constants alone (parameters,
    buffers, masks built in ``forward``) is stored as a constant
    (initializer).  So control flow and Python numbers are fixed at their
    traced values, as with ``torch.onnx.export``'s tracer.

    * ``args`` -- a tensor or a tuple of them (nested tuples, such as an LSTM's
      ``(h0, c0)``, are flattened into inputs in order); a trailing dict holds
      keyword arguments, as in PyTorch;
    * ``f`` -- a path or a binary file object; None returns the ``ModelProto`` only;
    * ``input_names`` / ``output_names`` -- names of the flattened inputs/outputs;
    * ``dynamic_axes`` -- ``{name: {axis: "label"}}`` or ``{name: [axes]}``:
      those dimensions are symbolic in the file, so another batch size runs.
      A reshape keeps following a dimension it does not change (written as
      ``0``/``-1``), which covers the batch dimension in the usual models;
    * ``opset_version`` -- default 17 (at least 17: ``LayerNormalization``);
    * ``training`` -- :class:`TrainingMode`: EVAL (default) traces in eval mode
      (dropout off, batch norm from running statistics) and restores the mode.

    Accepted and ignored (they do not apply to this exporter): ``export_params``
    (parameters are always stored), ``do_constant_folding`` (constants are
    folded at trace time anyway), ``verbose``, ``dynamo``, ``external_data``,
    ``dynamic_shapes``, ``custom_translation_table``, ``report``, ``optimize``,
    ``verify``, ``profile``, ``dump_exported_program``, ``artifacts_dir``,
    ``keep_initializers_as_inputs``, ``operator_export_type``, ``custom_opsets``,
    ``export_modules_as_functions``, ``autograd_inlining``.

    An op with no ONNX form here raises :class:`ExportError` naming the op and
    the module that used it.
    """
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset < 17:
        raise ValueError(f"onnx.export: opset_version must be at least 17, got {opset}")
    call_args = args if isinstance(args, tuple) else (args,)
    call_kwargs = dict(kwargs or {})
    if call_args and isinstance(call_args[-1], dict):
        call_kwargs.update(call_args[-1])
        call_args = call_args[:-1]
    inputs = [x for x in leaves(call_args) + leaves(call_kwargs) if isinstance(x, Tensor)]
    names = list(input_names or [])
    names += [f"input_{i}" if i else "input" for i in range(len(names), len(inputs))]
    dynamic = {name: _axes_of(spec) for name, spec in (dynamic_axes or {}).items()}

    graph = Graph()
    for x, name in zip(inputs, names):
        graph.bind(x, name)
    module_names = {id(m): n for n, m in model.named_modules()} if isinstance(model, Module) else {}
    tracer = Tracer(graph, module_names, CONVERTERS, MODULE_CONVERTERS)
    was_training = getattr(model, "training", None)
    mode = TrainingMode(int(training)) if not isinstance(training, bool) else \
        (TrainingMode.TRAINING if training else TrainingMode.EVAL)
    if isinstance(model, Module) and mode != TrainingMode.PRESERVE:
        model.train(mode == TrainingMode.TRAINING)
    # float inputs take part in the autograd graph while tracing, so a value computed from one outside the
    # trace still has the input among its ancestors and is refused instead of stored as a constant
    lifted = [x for x in inputs if not x.requires_grad and x.is_leaf and x._data.dtype.kind == "f"]
    for x in lifted:
        x.requires_grad_(True)
    tracer.install(FUNCTIONS, list(model.modules()) if isinstance(model, Module) else [])
    _EXPORTING[0] = True
    try:  # with autograd on: the graph's parents let the trace notice a value computed outside it
        out = model(*call_args, **call_kwargs)
    finally:
        _EXPORTING[0] = False
        tracer.remove()
        for x in lifted:
            x.requires_grad_(False)
        if isinstance(model, Module) and was_training is not None:
            model.train(was_training)

    outputs = [y for y in leaves(out) if isinstance(y, Tensor)]
    out_names = list(output_names or [])
    out_names += [f"output_{i}" if i else "output" for i in range(len(out_names), len(outputs))]
    for y, name in zip(outputs, out_names):
        if not graph.traced(y):
            tracer.check_constant(y)
        source = graph.value(y)
        graph.nodes.append(helper.make_node("Identity", [source], [name]))
    any_dynamic = bool(dynamic)
    graph_inputs = [_value_info(n, x, dynamic.get(n, {}), True) for x, n in zip(inputs, names)]
    graph_outputs = [_value_info(n, y, dynamic.get(n, {}), not any_dynamic or n in dynamic)
                     for y, n in zip(outputs, out_names)]
    used = {i for node in graph.nodes for i in node.input}
    graph_inputs = [v for v in graph_inputs if v.name in used]
    body = helper.make_graph(graph.nodes, type(model).__name__, graph_inputs, graph_outputs, graph.initializers)
    proto = helper.make_model(body, opset_imports=[helper.make_opsetid("", opset)], producer_name="taugrad")
    proto.ir_version = min(proto.ir_version, 10)  # runtimes lag the onnx package's newest IR version
    onnx.checker.check_model(proto)
    if f is not None:
        onnx.save_model(proto, f)
    return proto


__all__ = ["export", "ExportError", "TrainingMode", "is_in_onnx_export"]

"""``SummaryWriter``: scalars, histograms, text, hyperparameters and a model's graph as event files.

Each ``add_*`` call builds a TensorBoard ``Summary`` protocol buffer and hands
it to TensorBoard's own ``EventFileWriter``, which writes the
``events.out.tfevents.*`` file that ``tensorboard --logdir runs`` reads.
Tensors, NumPy arrays and Python numbers are accepted wherever torch accepts
them.  The default folder is torch's: ``runs/<Mon DD_HH-MM-SS>_<host><comment>``.
"""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any, Dict, Optional

import numpy as np
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from taugrad.graph import topological_order

__all__ = ["SummaryWriter"]


def _numpy(value: Any) -> np.ndarray:
    """A tensor (detached, on the host), array or number as a float64 NumPy array."""
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "numpy"):
        value = value.cpu().numpy() if hasattr(value, "cpu") else value.numpy()
    return np.asarray(value, dtype=np.float64)


def _scalar(value: Any, tag: str) -> float:
    array = _numpy(value)
    if array.size != 1:
        raise ValueError(f"add_scalar: {tag!r} needs one number, got shape {tuple(array.shape)}")
    return float(array.reshape(()))


def _simple_summary(tag: str, number: float) -> summary_pb2.Summary:
    """A summary of one number under ``tag`` (TensorBoard's ``simple_value`` scalar)."""
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=number)])


def _tensorflow_bins() -> np.ndarray:
    """TensorFlow's default histogram edges: +-1e-12 growing by 10% to 1e20, and 0 between them."""
    positive = 1e-12 * 1.1 ** np.arange(int(np.ceil(np.log(1e32) / np.log(1.1))))
    positive = positive[positive < 1e20]
    return np.concatenate([-positive[::-1], [0.0], positive])


class SummaryWriter:
    """``SummaryWriter(log_dir=None, comment='', purge_step=None, max_queue=10, flush_secs=120, filename_suffix='')``."""

    def __init__(self, log_dir: Optional[str] = None, comment: str = "", purge_step: Optional[int] = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self._writer: Optional[EventFileWriter] = None
        self._children: Dict[str, EventFileWriter] = {}
        self._file()  # the folder and first event file exist from construction on, as torch's

    def get_logdir(self) -> str:
        return self.log_dir

    def _file(self, log_dir: Optional[str] = None) -> EventFileWriter:
        if log_dir is not None:
            if log_dir not in self._children:
                self._children[log_dir] = self._open(log_dir)
            return self._children[log_dir]
        if self._writer is None:
            self._writer = self._open(self.log_dir)
        return self._writer

    def _open(self, log_dir: str) -> EventFileWriter:
        writer = EventFileWriter(log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
        event = event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2")
        if self.purge_step is not None:
            event.step = self.purge_step
            event.session_log.status = event_pb2.SessionLog.START
        writer.add_event(event)
        return writer

    def _emit(self, summary: summary_pb2.Summary, step: Optional[int], walltime: Optional[float],
              log_dir: Optional[str] = None) -> None:
        event = event_pb2.Event(summary=summary, wall_time=time.time() if walltime is None else float(walltime))
        if step is not None:
            event.step = int(step)
        self._file(log_dir).add_event(event)

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One number at a step (``simple_value``, or a scalar tensor with ``new_style=True``)."""
        number = _scalar(scalar_value, tag)
        if new_style:
            meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(
                plugin_name="scalars"))
            if double_precision:
                tensor = TensorProto(dtype="DT_DOUBLE", double_val=[number], tensor_shape=TensorShapeProto())
            else:
                tensor = TensorProto(dtype="DT_FLOAT", float_val=[number], tensor_shape=TensorShapeProto())
            value = summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=meta)
            self._emit(summary_pb2.Summary(value=[value]), global_step, walltime)
        else:
            self._emit(_simple_summary(tag, number), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: Dict[str, Any], global_step: Optional[int] = None,
                    walltime: Optional[float] = None) -> None:
        """Several curves on one chart: each key is written to ``<log_dir>/<main_tag>_<key>`` under ``main_tag``."""
        for key, value in tag_scalar_dict.items():
            folder = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + key)
            self._emit(_simple_summary(main_tag, _scalar(value, key)), global_step, walltime, log_dir=folder)

    def add_histogram(self, tag: str, values: Any, global_step: Optional[int] = None, bins: Any = "tensorflow",
                      walltime: Optional[float] = None, max_bins: Optional[int] = None) -> None:
        """The distribution of ``values``: ``bins`` is ``"tensorflow"`` (TF's edges), a NumPy rule or a count."""
        array = _numpy(values).ravel()
        if array.size == 0:
            raise ValueError(f"add_histogram: {tag!r} has no values")
        edges = _tensorflow_bins() if bins == "tensorflow" else bins
        counts, limits = np.histogram(array, bins=edges)
        keep = np.nonzero(counts)[0]
        first, last = (keep[0], keep[-1] + 1) if keep.size else (0, 1)
        proto = summary_pb2.HistogramProto(
            min=float(array.min()), max=float(array.max()), num=float(array.size), sum=float(array.sum()),
            sum_squares=float(np.dot(array, array)), bucket_limit=limits[first + 1:last + 1].tolist(),
            bucket=counts[first:last].astype(np.float64).tolist())
        self._emit(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, histo=proto)]), global_step,
                   walltime)

    def add_text(self, tag: str, text_string: str, global_step: Optional[int] = None,
                 walltime: Optional[float] = None) -> None:
        """A (Markdown) string, shown in TensorBoard's Text tab."""
        meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
        tensor = TensorProto(dtype="DT_STRING", string_val=[str(text_string).encode("utf-8")],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        value = summary_pb2.Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)
        self._emit(summary_pb2.Summary(value=[value]), global_step, walltime)

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """The autograd graph of ``model(input_to_model)``: one node per op (its ``grad_fn`` name) and leaf."""
        if input_to_model is None:
            raise ValueError("add_graph: taugrad draws the graph of one call, so it needs input_to_model")
        inputs = input_to_model if isinstance(input_to_model, (list, tuple)) else (input_to_model,)
        output = model(*inputs)
        outputs = output if isinstance(output, (list, tuple)) else (output,)
        names = self._parameter_names(model)
        graph = GraphDef()

        def name_of(tensor: Any, op: str) -> str:
            if id(tensor) not in names:
                names[id(tensor)] = f"{op}_{len(graph.node)}"
            return names[id(tensor)]

        leaves_done = set()
        for node in topological_order([o for o in outputs if hasattr(o, "_prev")]):
            for parent in node._prev:
                if parent.grad_fn is None and id(parent) not in leaves_done:  # a parameter or an input
                    leaves_done.add(id(parent))
                    op = "Parameter" if id(parent) in names else "Input"
                    graph.node.append(NodeDef(name=name_of(parent, op), op=op))
            op = node.grad_fn.name()
            graph.node.append(NodeDef(name=name_of(node, op), op=op,
                                      input=[names[id(p)] for p in node._prev if id(p) in names]))
        event = event_pb2.Event(graph_def=graph.SerializeToString(), wall_time=time.time())
        self._file().add_event(event)

    @staticmethod
    def _parameter_names(model: Any) -> Dict[int, str]:
        if not hasattr(model, "named_parameters"):
            return {}
        return {id(p): name for name, p in model.named_parameters()}

    def add_hparams(self, hparam_dict: Dict[str, Any], metric_dict: Dict[str, Any],
                    hparam_domain_discrete: Any = None, run_name: Optional[str] = None,
                    global_step: Optional[int] = None) -> None:
        """Hyperparameters and their final metrics, as a run of TensorBoard's HParams tab."""
        from tensorboard.plugins.hparams import summary_v2  # noqa: PLC0415 - optional extra, only for hparams

        folder = os.path.join(self.log_dir, run_name or str(time.time()))
        hparams = {k: (v if isinstance(v, (bool, int, float, str)) else str(v)) for k, v in hparam_dict.items()}
        pb = summary_v2.hparams_pb(hparams)
        self._file(folder).add_event(event_pb2.Event(summary=pb, wall_time=time.time()))
        for key, value in metric_dict.items():
            self._emit(_simple_summary(key, _scalar(value, key)), global_step, None, log_dir=folder)

    def flush(self) -> None:
        for writer in [self._writer, *self._children.values()]:
            if writer is not None:
                writer.flush()

    def close(self) -> None:
        for writer in [self._writer, *self._children.values()]:
            if writer is not None:
                writer.close()
        self._writer, self._children = None, {}

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

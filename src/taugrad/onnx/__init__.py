"""ONNX export: ``taugrad.onnx.export(model, args, f)`` writes a model as an ONNX file, as ``torch.onnx.export``.

Needs the optional extra ``pip install taugrad[onnx]`` (the ``onnx`` package;
``onnxruntime`` to run the file).  ``import taugrad`` never imports it.
"""
from __future__ import annotations

try:
    import onnx  # noqa: F401  (the optional extra; everything below needs it)
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("taugrad.onnx needs the onnx package: pip install 'taugrad[onnx]'") from None

from taugrad.onnx.export import TrainingMode, export, is_in_onnx_export
from taugrad.onnx.graph import ExportError

#: PyTorch's name for the exporter's error
OnnxExporterError = ExportError

__all__ = ["export", "ExportError", "OnnxExporterError", "TrainingMode", "is_in_onnx_export"]

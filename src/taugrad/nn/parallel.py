"""``taugrad.nn.parallel``: data parallelism, as PyTorch behaves on a machine without GPUs.

``DataParallel(module)`` wraps the module and calls it (its state dict keys
gain the ``module.`` prefix, as torch's do); ``data_parallel(module, inputs)``
raises as torch's does without a GPU (scripts call it only for CUDA inputs).  ``DistributedDataParallel`` raises one line:
taugrad runs in one process.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from taugrad.distributed import DistributedUnavailableError, MESSAGE
from taugrad.nn.module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    """Holds ``module`` and runs it on the one device there is: ``forward`` is ``module.forward``."""

    def __init__(self, module: Module, device_ids: Optional[Sequence[Any]] = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []
        self.dim = dim
        self.output_device = None

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Refused: several processes are needed, and taugrad runs in one."""

    def __init__(self, module: Module, *args: Any, **kwargs: Any) -> None:
        raise DistributedUnavailableError(f"DistributedDataParallel: {MESSAGE}")


def data_parallel(module: Module, inputs: Any, device_ids: Optional[Sequence[Any]] = None,
                  output_device: Any = None, dim: int = 0, module_kwargs: Optional[dict] = None) -> Any:
    """Refused as torch refuses it on a machine without GPUs: there is no device to scatter to."""
    raise RuntimeError("device type could not be determined")

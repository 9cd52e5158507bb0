"""The scalar engine: ``Value`` and its micrograd-compatible ``nn``."""
from taugrad.scalar.value import Value

__all__ = ["Value"]

"""The tensor engine: Tensor nodes, their ops and local rules, and the backward pass (see docs/architecture.md)."""

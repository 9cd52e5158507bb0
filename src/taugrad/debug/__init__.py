"""Debugging tools: anomaly detection and gradient-flow diagnostics."""

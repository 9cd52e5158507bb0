"""Learner tools: expression parser, step-by-step trace, random expressions, graph drawing, plots, progress."""

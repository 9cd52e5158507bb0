"""Broken file: calls sys.exit at import."""
import sys

sys.exit(3)

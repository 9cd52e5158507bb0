"""``str(t)`` and ``repr(t)`` in PyTorch's layout: ``tensor([1.0000, 2.5000], requires_grad=True)``.

The rules (PyTorch's documented printing defaults: 4 decimals, 80 columns,
tensors of more than 1000 elements summarised with 3 items at each edge):

* Integer and bool tensors print their values as Python does.
* A floating tensor looks at its finite nonzero values.  If every one is a
  whole number, they print without decimals and with a point (``1.``); if
  they span more than a factor 1000, exceed 1e8, or (not all whole) go below
  1e-4, every value prints in scientific notation with 4 decimals
  (``1.0000e-05``); otherwise with 4 decimals (``0.5000``).
* Every value is right-aligned to the widest one; a row of a 1-d tensor wraps
  to fit 80 columns; dimensions nest with one blank line per dimension
  beyond the second between blocks.
* After the values: ``device='cuda:0'`` for a tensor off the CPU (its values
  are formatted from a host copy); ``dtype=`` when the dtype is not the default float dtype,
  int64 or bool; ``grad_fn=<MulBackward0>`` for an op's output (named as in
  :mod:`taugrad.tensors.core.grad_fn`), else ``requires_grad=True`` for a leaf that
  requires grad; ``size=`` for an empty tensor that is not 1-d.

:func:`set_printoptions` changes the decimals, the summary threshold and edge
items, the line width and the choice of scientific notation, as PyTorch's.
"""
from __future__ import annotations

import math

import numpy as np

from taugrad.tensors.core.backend import device_of, to_host
from taugrad.tensors.core.dtypes import DEFAULT_FLOAT, default_complex, from_numpy_dtype

PRECISION = 4
LINE_WIDTH = 80
THRESHOLD = 1000
EDGE_ITEMS = 3
SCI_MODE = None  # None: chosen from the values (see the module docstring); True / False: always / never

_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """Change how tensors print, as ``torch.set_printoptions``.

    ``precision``: decimals of floating values; ``threshold``: tensors with
    more elements print summarised, ``edgeitems`` items at each edge of every
    dimension; ``linewidth``: columns a row wraps at; ``profile``: ``'default'``,
    ``'short'`` (2 decimals, 2 edge items) or ``'full'`` (never summarised),
    applied before the other arguments.  Options left None keep their value,
    except ``sci_mode``, which every call sets (None: chosen from the values).
    """
    global PRECISION, THRESHOLD, EDGE_ITEMS, LINE_WIDTH, SCI_MODE
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        PRECISION, THRESHOLD, EDGE_ITEMS, LINE_WIDTH = _PROFILES[profile]
    for name, value in (("precision", precision), ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise ValueError(f"set_printoptions: {name} must be an int >= 0, got {value!r}")
    if threshold is not None and not isinstance(threshold, (int, float)):
        raise ValueError(f"set_printoptions: threshold must be a number, got {threshold!r}")
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGE_ITEMS = edgeitems
    if linewidth is not None:
        LINE_WIDTH = linewidth
    SCI_MODE = None if sci_mode is None else bool(sci_mode)


class _NumberFormat:
    """How every element of one tensor is written: the mode and the common width."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind in "fV"
        self.whole = True  # floating values that are all whole numbers: "1."
        self.scientific = False
        self.width = 1
        if not self.floating:
            for v in values.ravel().tolist():
                self.width = max(self.width, len(str(v)))
            return
        wide = values.astype(np.float64).ravel()
        shown = wide[np.isfinite(wide) & (wide != 0)]
        if shown.size == 0:
            return
        magnitudes = np.abs(shown)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        self.whole = bool(np.all(shown == np.ceil(shown)))
        spread = largest / smallest > 1000.0 or largest > 1.0e8
        self.scientific = spread or (not self.whole and smallest < 1.0e-4) if SCI_MODE is None else SCI_MODE
        for v in shown.tolist():
            self.width = max(self.width, len(self._plain(v)))

    def _plain(self, v: float) -> str:
        if self.scientific:
            return f"{v:.{PRECISION}e}"
        if self.whole:
            text = f"{v:.0f}"
            return text if math.isinf(v) or math.isnan(v) else text + "."
        return f"{v:.{PRECISION}f}"

    def __call__(self, v) -> str:
        text = self._plain(float(v)) if self.floating else str(v)
        return text.rjust(self.width)


def _summary(values: np.ndarray) -> np.ndarray:
    """The elements that a summarised print shows (the first and last EDGE_ITEMS along every dimension)."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * EDGE_ITEMS:
        values = np.concatenate([values[:EDGE_ITEMS], values[-EDGE_ITEMS:]])
    return np.stack([_summary(row) for row in values]) if values.ndim > 1 else values


def _body(values: np.ndarray, fmt: _NumberFormat, indent: int, summarise: bool) -> str:
    if values.ndim == 0:
        return fmt(values.item())
    n = values.shape[0]
    cut = summarise and n > 2 * EDGE_ITEMS
    if values.ndim == 1:
        items = values.tolist()
        texts = [fmt(v) for v in items[:EDGE_ITEMS]] + [" ..."] + [fmt(v) for v in items[-EDGE_ITEMS:]] if cut \
            else [fmt(v) for v in items]
        per_line = max(1, (LINE_WIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(texts[i:i + per_line]) for i in range(0, len(texts), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(n) if not cut else list(range(EDGE_ITEMS)) + [None] + list(range(n - EDGE_ITEMS, n))
    blocks = ["..." if i is None else _body(values[i], fmt, indent + 1, summarise) for i in rows]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(blocks) + "]"


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    """``, dtype=...`` etc. on the last line, or on a line of their own where it would pass 80 columns."""
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1  # PyTorch's own measure (2 more than the line without "\n")
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINE_WIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"


def _hides_dtype(numpy_dtype) -> bool:
    return numpy_dtype in (DEFAULT_FLOAT[0], default_complex(), np.int64, np.bool_)


def tensor_repr(values: np.ndarray, grad_fn_name: str, requires_grad: bool, prefix: str = "tensor(") -> str:
    """The text of a tensor holding ``values`` (see the module docstring).

    ``grad_fn_name``: the name of the op node that made it ('' for a leaf).
    """
    indent = len(prefix)
    suffixes = []
    if not isinstance(values, np.ndarray):  # on a device
        suffixes.append(f"device='{device_of(values)}'")
        values = to_host(values)
    if values.size == 0:
        body = "[]"
        if values.shape != (0,):
            suffixes.append(f"size={tuple(values.shape)}")
    elif values.dtype.kind == "c":  # complex: NumPy's layout, which PyTorch's resembles
        body = np.array2string(values, separator=", ", prefix=prefix, precision=PRECISION)
    else:
        summarise = values.size > THRESHOLD
        fmt = _NumberFormat(_summary(values) if summarise else values)
        body = _body(values, fmt, indent, summarise)
    # an empty tensor has no values to tell int64 or bool by: its dtype is shown unless it is the default float one
    if values.size == 0 and values.dtype != DEFAULT_FLOAT[0] or values.size and not _hides_dtype(values.dtype):
        suffixes.append(f"dtype={from_numpy_dtype(values.dtype)!r}")
    if grad_fn_name:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)

"""The tensor engine's bottom layer: what a tensor node is and what every op shares.

``Tensor`` and ``make()`` (``node.py``), the ``Rule`` record and the op registry
(``rule.py``), dtypes, devices and array backends, random generators, in-place
bookkeeping (``rebase.py``) and printing.  Nothing here imports an op
(``tensors/ops``) or the backward engine (``tensors/engine.py``): they are
built on this layer, never the other way round.
"""

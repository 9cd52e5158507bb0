"""The tensor ops, one module per family, each op next to its local rule.

Each op is one place: its forward function, its :class:`~taugrad.tensors.core.rule.Rule`
(``@rule``: name, what it reads, what it returns, the maths in the docstring)
and its registration (``@register``: the op's name and the ``Tensor`` methods
and operators it provides).  The families import only the bottom layer
(:mod:`taugrad.tensors.core.node`, :mod:`~taugrad.tensors.core.rule`, ...) and
:mod:`~taugrad.tensors.ops.anyarray`, never each other.

* :mod:`~taugrad.tensors.ops.anyarray`    -- functions rules use on arrays and Tensors alike
* :mod:`~taugrad.tensors.ops.elementwise` -- ``+ - * / **``, exp, log, tanh, relu, where, comparisons...
* :mod:`~taugrad.tensors.ops.reduce`      -- sum, mean, max, min, var, std, logsumexp
* :mod:`~taugrad.tensors.ops.matmul`      -- ``@``, linear, linear + ReLU
* :mod:`~taugrad.tensors.ops.shape`       -- reshape, transpose, permute, expand, cat, stack, split, pad
* :mod:`~taugrad.tensors.ops.index`       -- ``x[key]`` and ``x[key] = v``
* :mod:`~taugrad.tensors.ops.inplace`     -- ``add_``, ``zero_``, ``+=``... (version counting)
* :mod:`~taugrad.tensors.ops.losses`      -- softmax / log_softmax, the losses built on them, dropout
* :mod:`~taugrad.tensors.ops.creation`    -- making tensors (zeros, randn, arange...)
* :mod:`~taugrad.tensors.ops.elementary`  -- log2/log10, expm1, tan, asin..., atan2, one-sided clamps
* :mod:`~taugrad.tensors.ops.masking`     -- tril, triu
* :mod:`~taugrad.tensors.ops.sorting`     -- sort, argsort, topk, unique
* :mod:`~taugrad.tensors.ops.hist`        -- bincount, histc, histogram
* :mod:`~taugrad.tensors.ops.scan`        -- cumsum, cumprod, prod
* :mod:`~taugrad.tensors.ops.rearrange`   -- flip, roll, repeat, tile, repeat_interleave, unbind, narrow, movedim
* :mod:`~taugrad.tensors.ops.einsum`      -- einsum (its rule is an einsum)
* :mod:`~taugrad.tensors.ops.linalg`      -- outer, diag, trace, vector_norm / norm
* :mod:`~taugrad.tensors.ops.compare`     -- isnan, isinf, isfinite, isclose, allclose, equal
"""

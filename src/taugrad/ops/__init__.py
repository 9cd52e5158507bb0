"""The tensor ops, one module per family, each op next to its local rule.

* :mod:`~taugrad.ops.core`        -- making result nodes, the ``@rule`` decorator, axes, errors
* :mod:`~taugrad.ops.anyarray`    -- functions rules use on arrays and Tensors alike
* :mod:`~taugrad.ops.elementwise` -- ``+ - * / **``, exp, log, tanh, relu, where, comparisons...
* :mod:`~taugrad.ops.reduce`      -- sum, mean, max, min, var, std, logsumexp
* :mod:`~taugrad.ops.matmul`      -- ``@``
* :mod:`~taugrad.ops.shape`       -- reshape, transpose, permute, expand, cat, stack, split, pad
* :mod:`~taugrad.ops.index`       -- ``x[key]`` and ``x[key] = v``
* :mod:`~taugrad.ops.inplace`     -- ``add_``, ``zero_``, ``+=``... (version counting)
* :mod:`~taugrad.ops.nn`          -- fused softmax / log_softmax / losses / dropout
* :mod:`~taugrad.ops.creation`, :mod:`~taugrad.ops.random` -- making tensors
"""

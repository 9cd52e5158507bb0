"""Indexing ``x[key]`` and ``x[key] = value``.

Keys are NumPy's: ints, slices, ``None``, ``...``, boolean masks and integer
arrays (or Tensors/lists of them), alone or in a tuple.  ``x[key]`` picks
elements, so its rule puts the gradient back where they came from:

    grad_x = zeros(x.shape);  grad_x[key] += g

With integer arrays an element can be picked several times and must receive
the sum of its gradients, hence a scatter-*add* (``np.add.at``); keys without
integer arrays pick each element at most once and use a plain assignment.
"""
from __future__ import annotations

import numpy as np

from taugrad.grad_mode import STATE as _grad_mode
from taugrad.tensors.ops import anyarray as A
from taugrad.tensors.node import make, make_view
from taugrad.tensors.node import Tensor, bump_version, check_inplace
from taugrad.tensors.rule import register, rule

_BASIC = (int, slice, type(None), type(Ellipsis))


def _index_part(k):
    """One element of a key as NumPy wants it, and whether it can repeat elements."""
    if isinstance(k, Tensor):
        k = k._data
    elif isinstance(k, list):
        k = np.asarray(k) if k else np.zeros(0, dtype=np.intp)
    if isinstance(k, np.ndarray):
        kind = k.dtype.kind
        if kind == "b":
            return k, True, False
        if kind in "iu":
            return k, False, False
        raise IndexError(f"index: tensors used as indices must be integer or bool, got dtype {k.dtype}")
    if isinstance(k, (bool, np.bool_)):
        return k, True, False
    if isinstance(k, (_BASIC, np.integer)):
        return k, True, True
    raise IndexError(
        f"index: only ints, slices, None, ..., and integer or bool tensors are valid indices, got {type(k).__name__}"
    )


def normalize_key(key):
    """``(key for NumPy, unique, basic)``: unique = no element picked twice;
    basic = only ints/slices/None/... (the result is a view)."""
    if type(key) is int or type(key) is slice:
        return key, True, True
    if isinstance(key, tuple):
        parts, unique, basic = [], True, True
        for k in key:
            k, u, b = _index_part(k)
            parts.append(k)
            unique &= u
            basic &= b
        return tuple(parts), unique, basic
    return _index_part(key)


@rule("index")
def getitem_backward(g, out, ins, node):
    """z = a[key]:  grad_a = zeros(a.shape) with g added at key."""
    key, unique = node._ctx
    return (A.scatter_add(g, key, ins[0].shape, unique),)


@register("getitem", methods=("__getitem__",))
def getitem(x: Tensor, key) -> Tensor:
    """``x[key]``: NumPy indexing, recorded for backward."""
    k, unique, basic = normalize_key(key)
    try:
        data = x._data[k]
    except (IndexError, ValueError, TypeError) as error:
        raise IndexError(f"index: {error} (tensor of shape {x.shape})") from None
    if basic:
        if type(data) is not np.ndarray:  # a single element: x[k, ...] is the 0-d view of it
            data = x._data[(k if isinstance(k, tuple) else (k,)) + (Ellipsis,)]
        return make_view(data, x, (x,), getitem_backward, (k, unique))
    return make(data, (x,), getitem_backward, (k, unique))


@rule("index_scatter")
def index_scatter_backward(g, out, ins, node):
    """z = zeros with a added at key (the adjoint of indexing):  grad_a = g[key]."""
    key, _ = node._ctx
    return (g[key],)


@register("index_scatter")
def index_scatter(a: Tensor, key, shape: tuple, unique: bool) -> Tensor:
    """Zeros of ``shape`` with ``a`` added at ``key``; differentiable (used by create_graph)."""
    return make(A.scatter_add(a._data, key, shape, unique), (a,), index_scatter_backward, (key, unique))


@register("setitem", methods=("__setitem__",))
def setitem(x: Tensor, key, value) -> None:
    """``x[key] = value`` in place (not recorded in the graph)."""
    check_inplace(x, "setitem")
    if isinstance(value, Tensor):
        if value.requires_grad and _grad_mode.enabled:
            raise RuntimeError(
                "setitem: assigning a tensor that requires grad is not recorded in the graph; "
                "build the result with taugrad.where / cat / stack instead, or assign under no_grad()"
            )
        value = value._data
    k, _, _ = normalize_key(key)
    try:
        x._data[k] = value
    except (IndexError, ValueError, TypeError) as error:
        raise type(error)(f"setitem: {error} (tensor of shape {x.shape})") from None
    bump_version(x)

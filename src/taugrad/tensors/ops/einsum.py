"""``einsum``: sums of products over labelled dimensions, and its rule, itself an einsum.

For ``z = einsum("s_1,...,s_m->t", a_1, ..., a_m)`` each element of ``z`` is
a sum of products with one factor from every operand, so the derivative with
respect to ``a_i`` is the same sum with ``a_i`` left out and ``g`` put in::

    grad_i = einsum("t, s_1, ..., (no s_i), ... -> s_i", g, a_1, ..., a_m)

Two cases need a constant factor so that this stays one einsum:

* a label repeated in ``s_i`` (``"ii->i"``: a diagonal) -- the gradient lives
  on that diagonal only: each repeat gets a fresh label ``p`` and the factor
  ``eye[l, p]``;
* a label of ``s_i`` found nowhere else (``"ij->i"``: a sum over ``j``) -- every
  element along it receives the same gradient: the factor ``ones[l]``.

``...`` is first written out with letters nobody uses, and a dimension of size
1 that broadcasts against a longer one is squeezed away beforehand (its
gradient is the sum over the broadcast, which the einsum then does).
Because the rule only calls ``einsum``, it runs on Tensors too and every
order of derivative is again an einsum.
"""
from __future__ import annotations

import string

import numpy as np

from taugrad.tensors.core.backend import device_of, is_array, to_device
from taugrad.tensors.core.node import array_module, check_same_device, constant, make, Tensor
from taugrad.tensors.core.rule import register, rule

_LETTERS = string.ascii_letters


class _Equation:
    """An einsum equation made explicit: one label string per operand and the output's."""

    __slots__ = ("inputs", "output")

    def __init__(self, inputs, output):
        self.inputs = inputs
        self.output = output

    def text(self) -> str:
        return ",".join(self.inputs) + "->" + self.output


def _parse(equation: str, shapes) -> _Equation:
    """Split ``equation``, write ``...`` out with unused letters, add the implicit output."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the equation must be a string, got {type(equation).__name__}")
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {equation!r} names {len(terms)} operands, {len(shapes)} given")
    for ch in eq.replace("->", "").replace(",", "").replace("...", ""):
        if ch not in _LETTERS:
            raise ValueError(f"einsum: {equation!r}: labels are letters, got {ch!r}")
    used = set(eq)
    spare = [c for c in _LETTERS if c not in used]
    ellipsis_ndim = 0
    for term, shape in zip(terms, shapes):
        if "..." in term:
            ellipsis_ndim = max(ellipsis_ndim, len(shape) - (len(term) - 3))
    broadcast = "".join(spare[:ellipsis_ndim])
    inputs = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            k = len(shape) - (len(term) - 3)
            if k < 0:
                raise ValueError(f"einsum: {term!r} has more labels than operand dims {tuple(shape)}")
            term = term.replace("...", broadcast[ellipsis_ndim - k:])
        if len(term) != len(shape):
            raise ValueError(f"einsum: {term!r} labels {len(term)} dims, the operand has shape {tuple(shape)}")
        inputs.append(term)
    if arrow:
        output = rhs.replace("...", broadcast)
    else:
        counts = {}
        for term in inputs:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        output = broadcast + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in broadcast))
    if len(set(output)) != len(output):
        raise ValueError(f"einsum: {equation!r}: an output label appears twice")
    for c in output:
        if not any(c in term for term in inputs):
            raise ValueError(f"einsum: {equation!r}: output label {c!r} is not in any operand")
    return _Equation(inputs, output)


def _sizes(eq: _Equation, shapes, equation: str) -> dict:
    """Each label's size; size 1 broadcasts against the others, which must agree."""
    sizes = {}
    for term, shape in zip(eq.inputs, shapes):
        for c, n in zip(term, shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = n
            elif n not in (1, sizes[c]):
                raise ValueError(f"einsum: {equation!r}: label {c!r} has sizes {sizes[c]} and {n}")
    return sizes


def _squeeze_broadcast(term: str, data, sizes: dict):
    """Drop the size-1 dims of an operand whose label is longer elsewhere (they broadcast)."""
    keep = [i for i, c in enumerate(term) if not (data.shape[i] == 1 and sizes[c] != 1)]
    if len(keep) == len(term):
        return term, data
    return "".join(term[i] for i in keep), data.reshape(tuple(data.shape[i] for i in keep))


def _squeezed(x, term: str, sizes: dict):
    """An operand reshaped as the forward pass used it (broadcast size-1 dims dropped)."""
    shape = tuple(sizes[c] for c in term)
    return x if x.shape == shape else x.reshape(shape)


def _wrap(x, like) -> Tensor:
    """An operand as a Tensor: arrays and lists as constants, on the device of the Tensor operands (``like``)."""
    if isinstance(x, Tensor):
        return x
    if not is_array(x):
        x = np.asarray(x)  # a list or number from the caller, read on the host
    return constant(x if like is None else to_device(x, device_of(like)))


@rule("einsum", reads=lambda node: tuple(range(len(node._prev))))
def einsum_backward(g, out, ins, node):
    """z = einsum(s_1, ..., s_m -> t):  grad_i = einsum(t, s_j (j != i), eye/ones -> s_i) (see the module doc)."""
    terms, output, sizes = node._ctx
    grads = []
    for i, term in enumerate(terms):
        if not node._prev[i].requires_grad:
            grads.append(None)
            continue
        factors = [(output, g)] + [(terms[j], _squeezed(ins[j], terms[j], sizes))
                                   for j in range(len(terms)) if j != i]
        like = g._data if isinstance(g, Tensor) else g
        xp = array_module(like)
        seen = set(output).union(*(t for t, _ in factors[1:]))
        spare = iter(c for c in _LETTERS if c not in set(output).union(*terms))
        target = []
        for c in term:
            if c in target:  # a repeated label: the gradient sits on the diagonal
                fresh = next(spare)
                factors.append((c + fresh, xp.eye(sizes[c], dtype=like.dtype)))
                target.append(fresh)
                continue
            if c not in seen:  # summed in this operand only: every element gets the gradient
                factors.append((c, xp.ones(sizes[c], dtype=like.dtype)))
                seen.add(c)
            target.append(c)
        equation = ",".join(t for t, _ in factors) + "->" + "".join(target)
        grad = einsum(equation, *[f for _, f in factors]) if isinstance(g, Tensor) else _einsum_arrays(
            equation, [f for _, f in factors])
        grads.append(grad.reshape(ins[i].shape))
    return tuple(grads)


def _einsum_arrays(equation: str, arrays):
    xp = array_module(arrays[0])
    return xp.einsum(equation, *arrays, optimize=len(arrays) > 1)  # > 1: BLAS for contractions


@register("einsum")
def einsum(equation: str, *operands) -> Tensor:
    """Sum of products over labelled dims, NumPy's ``einsum`` notation (as ``torch.einsum``).

    ``einsum("ij,jk->ik", a, b)`` is ``a @ b``; ``"ii->i"`` the diagonal,
    ``"ii"`` the trace, ``"...ij->...ji"`` a batched transpose, ``"i,j"`` the
    outer product.  The operands may also be passed as one list.  Labels are
    letters; size-1 dims broadcast.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum: needs at least one operand")
    like = next((x._data for x in operands if isinstance(x, Tensor)), None)
    tensors = tuple(_wrap(x, like) for x in operands)
    shapes = [t.shape for t in tensors]
    eq = _parse(equation, shapes)
    sizes = _sizes(eq, shapes, equation)
    terms, arrays = [], []
    for term, t in zip(eq.inputs, tensors):
        term, data = _squeeze_broadcast(term, t._data, sizes)
        terms.append(term)
        arrays.append(data)
    text = ",".join(terms) + "->" + eq.output
    try:
        data = _einsum_arrays(text, arrays)
    except ValueError as error:
        raise ValueError(f"einsum: {equation!r} with shapes {[tuple(s) for s in shapes]}: {error}") from None
    except TypeError:  # arrays of two devices
        check_same_device("einsum", *tensors)
        raise
    return make(data, tensors, einsum_backward, (tuple(terms), eq.output, sizes))

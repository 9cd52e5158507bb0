"""ONNX forms of taugrad's registered ops: ``convert(graph, out, *args, **kwargs)`` per op name.

Each converter receives the op's own arguments and its result (already
computed by taugrad), writes the ONNX nodes that compute the same result from
the traced operands, and binds the result to the last node's value.  Shapes
known only at trace time are written so that a dimension the model does not
change keeps following its input (``0`` in a ``Reshape``, ``1`` in an
``Expand``), which is what lets ``dynamic_axes`` give another batch size.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, List

import numpy as np

from taugrad.onnx.graph import ExportError, Graph, onnx_type
from taugrad.tensors.core.node import Tensor

CONVERTERS: Dict[str, Callable] = {}
INT_MAX = np.iinfo(np.int64).max


def converts(*names: str):
    def add(fn: Callable) -> Callable:
        for name in names:
            CONVERTERS[name] = fn
        return fn
    return add


def dtype_of(out: Tensor):
    return out._data.dtype


def nd(x: Any) -> int:
    return x.ndim if isinstance(x, Tensor) else np.ndim(x)


def axis(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


def pair(v: Any, n: int) -> List[int]:
    return [int(i) for i in v] if isinstance(v, (tuple, list)) else [int(v)] * n


# -- elementwise ---------------------------------------------------------------

UNARY = {"neg": "Neg", "sqrt": "Sqrt", "abs": "Abs", "sign": "Sign", "floor": "Floor", "ceil": "Ceil",
         "sigmoid": "Sigmoid", "relu": "Relu", "erf": "Erf", "exp": "Exp", "log": "Log", "tanh": "Tanh",
         "sin": "Sin", "cos": "Cos", "reciprocal": "Reciprocal", "logical_not": "Not", "round": "Round",
         "relu_": "Relu", "sigmoid_": "Sigmoid", "tanh_": "Tanh", "exp_": "Exp", "neg_": "Neg"}


def unary(op: str) -> Callable:
    def convert(g: Graph, out, a):
        g.bind(out, g.node(op, [g.value(a)]))
    return convert


for _name, _op in UNARY.items():
    CONVERTERS[_name] = unary(_op)

BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Max",
          "minimum": "Min", "iadd": "Add", "isub": "Sub", "imul": "Mul", "itruediv": "Div", "add_": "Add",
          "sub_": "Sub", "mul_": "Mul", "div_": "Div", "matmul": "MatMul", "mm": "MatMul", "bmm": "MatMul",
          "remainder": "Mod"}


def binary(op: str, swap: bool = False) -> Callable:
    def convert(g: Graph, out, a, b, alpha=1):
        dtype = dtype_of(out)
        x, y = g.value(a, dtype), g.value(b, dtype)  # both in the result's type, as the op computes
        if alpha != 1:
            y = g.node("Mul", [y, g.const(np.asarray(alpha, dtype))])
        attrs = {"fmod": 0} if op == "Mod" else {}
        g.bind(out, g.node(op, [y, x] if swap else [x, y], **attrs))
    return convert


for _name, _op in BINARY.items():
    CONVERTERS[_name] = binary(_op)
CONVERTERS.update(rsub=binary("Sub", True), rdiv=binary("Div", True), rpow=binary("Pow", True),
                  rmatmul=binary("MatMul", True))

COMPARE = {"lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual", "eq": "Equal",
           "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


def compare(op: str) -> Callable:
    def convert(g: Graph, out, a, b):
        dtype = np.result_type(*[x._data.dtype if isinstance(x, Tensor) else np.asarray(x).dtype for x in (a, b)])
        if op in ("And", "Or", "Xor"):
            dtype = np.bool_
        g.bind(out, g.node(op, [g.value(a, dtype), g.value(b, dtype)]))
    return convert


for _name, _op in COMPARE.items():
    CONVERTERS[_name] = compare(_op)


@converts("ne")
def ne(g: Graph, out, a, b):
    compare("Equal")(g, out, a, b)
    g.bind(out, g.node("Not", [g.names[id(out)]]))


@converts("rsqrt")
def rsqrt(g: Graph, out, a):
    g.bind(out, g.node("Reciprocal", [g.node("Sqrt", [g.value(a)])]))


@converts("square")
def square(g: Graph, out, a):
    x = g.value(a)
    g.bind(out, g.node("Mul", [x, x]))


@converts("gelu")
def gelu(g: Graph, out, a, approximate="none"):
    dtype = dtype_of(out)
    x = g.value(a)
    c = lambda v: g.const(np.asarray(v, dtype))  # noqa: E731
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        inner = g.node("Mul", [g.node("Add", [x, g.node("Mul", [cube, c(0.044715)])]), c(math.sqrt(2 / math.pi))])
        core = g.node("Tanh", [inner])
    else:  # 0.5 x (1 + erf(x / sqrt 2))
        core = g.node("Erf", [g.node("Div", [x, c(math.sqrt(2.0))])])
    g.bind(out, g.node("Mul", [g.node("Mul", [x, c(0.5)]), g.node("Add", [core, c(1.0)])]))


@converts("clip", "clamp_min", "clamp_max", "clamp_")
def clip(g: Graph, out, a, min=None, max=None):
    dtype = dtype_of(out)
    bounds = ["" if v is None else g.value(v, dtype) for v in (min, max)]
    g.bind(out, g.node("Clip", [g.value(a, dtype)] + bounds))


CONVERTERS["clamp_max"] = lambda g, out, a, max: clip(g, out, a, None, max)


@converts("where")
def where(g: Graph, out, condition, x=None, y=None):
    if x is None or y is None:
        raise ExportError("onnx.export: no ONNX form for op 'where' with one argument (its shape depends on data)")
    dtype = dtype_of(out)
    g.bind(out, g.node("Where", [g.value(condition, np.bool_), g.value(x, dtype), g.value(y, dtype)]))


CONVERTERS["where_method"] = lambda g, out, x, condition, y: where(g, out, condition, x, y)


@converts("masked_fill", "masked_fill_")
def masked_fill(g: Graph, out, x, mask, value):
    dtype = dtype_of(out)
    g.bind(out, g.node("Where", [g.value(mask, np.bool_), g.value(value, dtype), g.value(x, dtype)]))


@converts("astype", "float", "double", "half", "long", "int", "bool", "type", "to", "type_as", "cpu", "cuda",
          "contiguous", "clone", "positive")
def cast(g: Graph, out, x, *args, **kwargs):
    if not isinstance(out, Tensor):
        raise ExportError("onnx.export: no ONNX form for a type query on a traced tensor")
    source = x._data.dtype if isinstance(x, Tensor) else None
    if source == dtype_of(out):
        g.bind(out, g.node("Identity", [g.value(x)]))
    else:
        g.bind(out, g.node("Cast", [g.value(x)], to=onnx_type(dtype_of(out))))


@converts("dropout")
def dropout(g: Graph, out, x, p=0.5, training=True, generator=None):
    if training and p > 0:
        raise ExportError("onnx.export: no ONNX form for op 'dropout' in training mode (export in eval mode)")
    g.bind(out, g.node("Identity", [g.value(x)]))


# -- linear algebra and convolution ------------------------------------------------


@converts("linear")
def linear(g: Graph, out, x, weight, bias=None):
    w = g.node("Transpose", [g.value(weight)], perm=[1, 0]) if g.traced(weight) else \
        g.const(np.ascontiguousarray(weight.detach().numpy().T) if isinstance(weight, Tensor) else weight.T)
    y = g.node("MatMul", [g.value(x), w])
    g.bind(out, y if bias is None else g.node("Add", [y, g.value(bias)]))


@converts("addmm")
def addmm(g: Graph, out, input, mat1, mat2, beta=1, alpha=1):
    dtype = dtype_of(out)
    prod = g.node("MatMul", [g.value(mat1, dtype), g.value(mat2, dtype)])
    if alpha != 1:
        prod = g.node("Mul", [prod, g.const(np.asarray(alpha, dtype))])
    base = g.value(input, dtype)
    if beta != 1:
        base = g.node("Mul", [base, g.const(np.asarray(beta, dtype))])
    g.bind(out, g.node("Add", [prod, base]))


@converts("einsum")
def einsum(g: Graph, out, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    g.bind(out, g.node("Einsum", [g.value(x, dtype_of(out)) for x in operands], equation=equation.replace(" ", "")))


def conv_attrs(x, weight, stride, padding, dilation, n):
    attrs = {"strides": pair(stride, n), "dilations": pair(dilation, n)}
    if isinstance(padding, str):
        if padding == "same":
            attrs["auto_pad"] = "SAME_UPPER"
        else:
            attrs["pads"] = [0] * (2 * n)
    else:
        attrs["pads"] = pair(padding, n) * 2
    return attrs


@converts("conv1d", "conv2d")
def conv(g: Graph, out, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    n = input.ndim - 2
    attrs = conv_attrs(input, weight, stride, padding, dilation, n)
    ins = [g.value(input), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
    g.bind(out, g.node("Conv", ins, group=int(groups), kernel_shape=list(weight.shape[2:]), **attrs))


@converts("conv_transpose2d")
def conv_transpose(g: Graph, out, input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                   dilation=1):
    ins = [g.value(input), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
    g.bind(out, g.node("ConvTranspose", ins, group=int(groups), kernel_shape=list(weight.shape[2:]),
                       strides=pair(stride, 2), pads=pair(padding, 2) * 2, dilations=pair(dilation, 2),
                       output_padding=pair(output_padding, 2)))


def max_pool(n: int) -> Callable:
    def convert(g: Graph, out, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
        if return_indices:
            raise ExportError(f"onnx.export: no ONNX form for op 'max_pool{n}d' with return_indices=True")
        kernel = pair(kernel_size, n)
        strides = kernel if stride is None or stride == [] or stride == () else pair(stride, n)
        g.bind(out, g.node("MaxPool", [g.value(input)], kernel_shape=kernel, strides=strides,
                           pads=pair(padding, n) * 2, dilations=pair(dilation, n), ceil_mode=int(bool(ceil_mode))))
    return convert


def avg_pool(n: int) -> Callable:
    def convert(g: Graph, out, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                divisor_override=None):
        if divisor_override is not None:
            raise ExportError(f"onnx.export: no ONNX form for op 'avg_pool{n}d' with divisor_override")
        kernel = pair(kernel_size, n)
        strides = kernel if stride is None or stride == [] or stride == () else pair(stride, n)
        g.bind(out, g.node("AveragePool", [g.value(input)], kernel_shape=kernel, strides=strides,
                           pads=pair(padding, n) * 2, ceil_mode=int(bool(ceil_mode)),
                           count_include_pad=int(bool(count_include_pad))))
    return convert


CONVERTERS.update(max_pool1d=max_pool(1), max_pool2d=max_pool(2), avg_pool1d=avg_pool(1), avg_pool2d=avg_pool(2))


@converts("adaptive_avg_pool2d")
def adaptive_avg_pool2d(g: Graph, out, input, output_size):
    size = list(input.shape[-2:])
    wanted = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * 2
    target = [s if o is None else int(o) for s, o in zip(size, wanted)]  # None keeps the input's size
    if target == [1, 1]:
        g.bind(out, g.node("GlobalAveragePool", [g.value(input)]))
        return
    if any(s % t for s, t in zip(size, target)):
        raise ExportError(f"onnx.export: no ONNX form for op 'adaptive_avg_pool2d' from {tuple(size)} to "
                          f"{tuple(target)} (the sizes must divide)")
    kernel = [s // t for s, t in zip(size, target)]
    g.bind(out, g.node("AveragePool", [g.value(input)], kernel_shape=kernel, strides=kernel))


# -- normalisation and softmax ------------------------------------------------------


@converts("batch_norm")
def batch_norm(g: Graph, out, input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if training or running_mean is None:
        raise ExportError("onnx.export: no ONNX form for op 'batch_norm' with batch statistics (export in eval mode)")
    dtype = dtype_of(out)
    c = input.shape[1]
    scale = g.value(weight, dtype) if weight is not None else g.const(np.ones(c, dtype))
    shift = g.value(bias, dtype) if bias is not None else g.const(np.zeros(c, dtype))
    g.bind(out, g.node("BatchNormalization", [g.value(input), scale, shift, g.value(running_mean, dtype),
                                              g.value(running_var, dtype)], epsilon=float(eps)))


@converts("layer_norm")
def layer_norm(g: Graph, out, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dtype = dtype_of(out)
    shape = pair(normalized_shape, 1) if not isinstance(normalized_shape, (tuple, list)) else list(normalized_shape)
    scale = g.value(weight, dtype) if weight is not None else g.const(np.ones(shape, dtype))
    shift = g.value(bias, dtype) if bias is not None else g.const(np.zeros(shape, dtype))
    g.bind(out, g.node("LayerNormalization", [g.value(input), scale, shift], axis=-len(shape), epsilon=float(eps)))


@converts("group_norm")
def group_norm(g: Graph, out, input, num_groups, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) over each group of channels (and all positions), then per channel affine."""
    dtype = dtype_of(out)
    x = g.value(input)
    grouped = g.node("Reshape", [x, g.ints([0, int(num_groups), -1])])
    mean = g.node("ReduceMean", [grouped], axes=[2], keepdims=1)
    centred = g.node("Sub", [grouped, mean])
    var = g.node("ReduceMean", [g.node("Mul", [centred, centred])], axes=[2], keepdims=1)
    normed = g.node("Div", [centred, g.node("Sqrt", [g.node("Add", [var, g.const(np.asarray(eps, dtype))])])])
    y = g.node("Reshape", [normed, g.node("Shape", [x])])
    channel = [input.shape[1]] + [1] * (input.ndim - 2)
    if weight is not None:
        y = g.node("Mul", [y, g.node("Reshape", [g.value(weight, dtype), g.ints(channel)])])
    if bias is not None:
        y = g.node("Add", [y, g.node("Reshape", [g.value(bias, dtype), g.ints(channel)])])
    g.bind(out, y)


def softmax_named(op: str) -> Callable:
    def convert(g: Graph, out, x, dim=-1, dtype=None, **_):
        name = g.value(x, dtype_of(out))
        g.bind(out, g.node(op, [name], axis=int(dim)))
    return convert


CONVERTERS.update(softmax=softmax_named("Softmax"), log_softmax=softmax_named("LogSoftmax"))


# -- reductions -------------------------------------------------------------------


def reduce(op: str) -> Callable:
    def convert(g: Graph, out, x, dim=None, keepdim=False, *, axis=None, keepdims=None, dtype=None):
        dim = axis if dim is None else dim
        keep = keepdim if keepdims is None else keepdims
        rank = x.ndim
        axes = list(range(rank)) if dim is None else [a % rank if rank else 0 for a in pair(dim, 1)] \
            if isinstance(dim, (tuple, list)) else [dim % rank if rank else 0]
        name = g.value(x, dtype_of(out) if op != "ReduceMax" and op != "ReduceMin" else None)
        if op == "ReduceSum":
            y = g.node(op, [name, g.ints(axes)], keepdims=int(bool(keep)))
        else:
            y = g.node(op, [name], axes=axes, keepdims=int(bool(keep)))
        if isinstance(out, tuple):  # max/min over a dim: (values, indices)
            arg = "ArgMax" if op == "ReduceMax" else "ArgMin"
            g.bind(out[0], y)
            g.bind(out[1], g.node(arg, [name], axis=axes[0], keepdims=int(bool(keep))))
        else:
            g.bind(out, y)
    return convert


CONVERTERS.update(sum=reduce("ReduceSum"), mean=reduce("ReduceMean"), amax=reduce("ReduceMax"),
                  amin=reduce("ReduceMin"), max=reduce("ReduceMax"), min=reduce("ReduceMin"),
                  logsumexp=reduce("ReduceLogSumExp"))


# -- shapes -----------------------------------------------------------------------


def reshape_to(g: Graph, out, x) -> None:
    """Reshape ``x`` to ``out``'s shape; a dimension equal to the input's at the same place is copied (0),
    the first one that is not is inferred (-1), so a dynamic dimension that passes through stays dynamic."""
    src, dst = list(x.shape), list(out.shape)
    target, inferred = [], False
    for i, d in enumerate(dst):
        if i < len(src) and d == src[i] and not (d == 0):
            target.append(0)
        elif not inferred and d != 0:
            target.append(-1)
            inferred = True
        else:
            target.append(int(d))
    g.bind(out, g.node("Reshape", [g.value(x), g.ints(target)]))


for _name in ("view", "reshape", "flatten", "unflatten", "view_as", "reshape_as", "atleast_1d", "atleast_2d"):
    CONVERTERS[_name] = lambda g, out, x, *args, **kwargs: reshape_to(g, out, x)


@converts("unsqueeze", "unsqueeze_")
def unsqueeze(g: Graph, out, x, dim):
    g.bind(out, g.node("Unsqueeze", [g.value(x), g.ints([axis(int(dim), out.ndim)])]))


@converts("squeeze", "squeeze_")
def squeeze(g: Graph, out, x, dim=None):
    rank = x.ndim
    dims = range(rank) if dim is None else [dim] if not isinstance(dim, (tuple, list)) else dim
    axes = sorted({axis(int(d), rank) for d in dims if rank and x.shape[axis(int(d), rank)] == 1})
    g.bind(out, g.node("Squeeze", [g.value(x), g.ints(axes)]) if axes else g.node("Identity", [g.value(x)]))


def transpose_by(perm_of: Callable) -> Callable:
    def convert(g: Graph, out, x, *args, **kwargs):
        g.bind(out, g.node("Transpose", [g.value(x)], perm=[int(p) for p in perm_of(x.ndim, *args, **kwargs)]))
    return convert


def _swap(rank, d0, d1):
    perm = list(range(rank))
    a, b = axis(d0, rank), axis(d1, rank)
    perm[a], perm[b] = perm[b], perm[a]
    return perm


def _permute(rank, *dims):
    dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return [axis(int(d), rank) for d in dims]


def _movedim(rank, source, destination):
    src = [axis(s, rank) for s in pair(source, 1)] if isinstance(source, (tuple, list)) else [axis(source, rank)]
    dst = [axis(d, rank) for d in pair(destination, 1)] if isinstance(destination, (tuple, list)) \
        else [axis(destination, rank)]
    rest = [i for i in range(rank) if i not in src]
    perm = [None] * rank
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    return [p if p is not None else next(it) for p in perm]


CONVERTERS.update(transpose=transpose_by(_swap), swapdims=transpose_by(_swap), permute=transpose_by(_permute),
                  T=transpose_by(lambda r: list(range(r))[::-1]), t=transpose_by(lambda r: list(range(r))[::-1]),
                  mT=transpose_by(lambda r: _swap(r, -1, -2)), movedim=transpose_by(_movedim))


@converts("expand", "expand_as", "broadcast_to")
def expand(g: Graph, out, x, *args, **kwargs):
    src, dst = list(x.shape), list(out.shape)
    offset = len(dst) - len(src)
    target = [1 if i >= offset and src[i - offset] == d else int(d) for i, d in enumerate(dst)]
    g.bind(out, g.node("Expand", [g.value(x), g.ints(target)]))


@converts("cat", "concat", "concatenate")
def cat(g: Graph, out, tensors, dim=0, **_):
    g.bind(out, g.node("Concat", [g.value(t, dtype_of(out)) for t in tensors], axis=axis(int(dim), out.ndim)))


@converts("stack")
def stack(g: Graph, out, tensors, dim=0, **_):
    d = axis(int(dim), out.ndim)
    parts = [g.node("Unsqueeze", [g.value(t, dtype_of(out)), g.ints([d])]) for t in tensors]
    g.bind(out, g.node("Concat", parts, axis=d))


def split_into(g: Graph, outs, x, dim) -> None:
    d = axis(int(dim), x.ndim)
    sizes = [o.shape[d] for o in outs]
    names = g.node("Split", [g.value(x), g.ints(sizes)], outputs=len(outs), axis=d)
    for o, n in zip(outs, [names] if len(outs) == 1 else names):
        g.bind(o, n)


CONVERTERS["split"] = lambda g, outs, x, size, dim=0: split_into(g, outs, x, dim)
CONVERTERS["chunk"] = lambda g, outs, x, chunks, dim=0: split_into(g, outs, x, dim)


@converts("unbind")
def unbind(g: Graph, outs, x, dim=0):
    d = axis(int(dim), x.ndim)
    names = g.node("Split", [g.value(x), g.ints([1] * len(outs))], outputs=len(outs), axis=d)
    for o, n in zip(outs, [names] if len(outs) == 1 else names):
        g.bind(o, g.node("Squeeze", [n, g.ints([d])]))


@converts("index_select")
def index_select(g: Graph, out, x, dim, index):
    g.bind(out, g.node("Gather", [g.value(x), g.value(index, np.int64)], axis=axis(int(dim), x.ndim)))


@converts("getitem")
def getitem(g: Graph, out, x, key):
    """Indexing by constants: ints, slices, None, Ellipsis and one integer index array."""
    key = key if isinstance(key, tuple) else (key,)
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if any(k is Ellipsis for k in key):
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - used) + key[i + 1:]
    starts, ends, axes, steps, squeeze, unsqueeze, gather = [], [], [], [], [], [], None
    dim = out_dim = 0
    for k in key:
        if k is None:
            unsqueeze.append(out_dim)
            out_dim += 1
            continue
        if isinstance(k, slice):
            if k != slice(None):
                step = 1 if k.step is None else int(k.step)
                starts.append(int(k.start) if k.start is not None else (0 if step > 0 else -1))
                ends.append(int(k.stop) if k.stop is not None else (INT_MAX if step > 0 else -INT_MAX))
                axes.append(dim)
                steps.append(step)
            out_dim += 1
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            k = int(k)
            starts.append(k)
            ends.append(k + 1 if k != -1 else INT_MAX)
            axes.append(dim)
            steps.append(1)
            squeeze.append(dim)
        elif gather is None and (isinstance(k, Tensor) or isinstance(k, (list, np.ndarray))) and \
                np.asarray(k._data if isinstance(k, Tensor) else k).dtype.kind in "iu":
            gather = (dim, k)
            out_dim += nd(k)
        else:
            raise ExportError(f"onnx.export: no ONNX form for indexing by {type(k).__name__} "
                              "(only ints, slices, None, ... and one integer index)")
        dim += 1
    y = g.value(x)
    if axes:
        y = g.node("Slice", [y, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])
    if gather is not None:
        d, index = gather
        y = g.node("Gather", [y, g.value(index, np.int64)], axis=d)
        shift = nd(index) - 1
        squeeze = [s if s < d else s + shift for s in squeeze]
    if squeeze:
        y = g.node("Squeeze", [y, g.ints(squeeze)])
    if unsqueeze:
        y = g.node("Unsqueeze", [y, g.ints(unsqueeze)])
    if y == g.value(x):
        y = g.node("Identity", [y])
    g.bind(out, y)


@converts("pad")
def pad(g: Graph, out, x, pad, mode="constant", value=None):
    widths = [int(p) for p in pad]
    rank = x.ndim
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(widths) // 2):
        begins[rank - 1 - i], ends[rank - 1 - i] = widths[2 * i], widths[2 * i + 1]
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
    if mode not in modes:
        raise ExportError(f"onnx.export: no ONNX form for op 'pad' with mode {mode!r}")
    ins = [g.value(x), g.ints(begins + ends)]
    if mode == "constant":
        ins.append(g.const(np.asarray(0 if value is None else value, dtype_of(out))))
    g.bind(out, g.node("Pad", ins, mode=modes[mode]))


@converts("embedding")
def embedding(g: Graph, out, input, weight, *args, **kwargs):
    g.bind(out, g.node("Gather", [g.value(weight), g.value(input, np.int64)], axis=0))

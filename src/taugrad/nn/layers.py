"""Layers: the usual building blocks, with PyTorch's names, shapes and initialisation.

Each layer with parameters takes PyTorch's factory arguments ``device=`` and
``dtype=`` (see :func:`factory_kwargs`): parameters and buffers are made in
``dtype`` (the default float dtype, float32 unless changed, when None),
initialised on the CPU from :mod:`taugrad.nn.init`'s generator, then moved to
``device``; so ``taugrad.manual_seed(s)`` makes a model reproducible, with the
same numbers on every device.  Inputs may be Tensors or NumPy arrays.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Iterable, Optional, Sequence, Tuple, Type, Union

import numpy as np

from taugrad.nn.functional import dropout, embedding, layer_norm
from taugrad.grad_mode import no_grad
from taugrad.tensors.ops.matmul import linear as _linear
from taugrad.nn import init
from taugrad.nn.container import _ModuleListMethods, _SequentialMethods
from taugrad.nn.module import Module, Parameter
from taugrad.tensors.core.backend import device as Device
from taugrad.tensors.core.device import factory_device
from taugrad.tensors.core.dtypes import DEFAULT_FLOAT, as_dtype, bfloat16
from taugrad.tensors.core.node import Tensor, _dtype_of

__all__ = [
    "Identity",
    "Linear",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "GELU",
    "Dropout",
    "Flatten",
    "Unflatten",
    "Embedding",
    "LayerNorm",
    "Sequential",
    "ModuleList",
    "MLP",
]


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def factory_kwargs(layer: str, device: Any, dtype: Any) -> Tuple[Device, np.dtype]:
    """A layer's checked ``device=`` and ``dtype=`` (PyTorch's factory arguments), as ``(device, NumPy dtype)``.

    ``device`` None is the default device (the CPU unless ``set_default_device``
    or a ``with taugrad.device(...):`` block says otherwise); a device without a
    backend here (CUDA without CuPy or a GPU, 'mps') is a one-line
    ``RuntimeError`` naming the layer.
    ``dtype`` None is the default float dtype (``taugrad.get_default_dtype()``),
    as in PyTorch.  Only floating dtypes are taken: parameters are drawn from
    continuous distributions and moved by gradient steps, which an integer
    dtype would truncate to nothing (complex layers are not supported).
    """
    dev = factory_device(device, layer)
    if dtype is None:
        return dev, DEFAULT_FLOAT[0]
    try:
        floating = _dtype_of(dtype)
    except TypeError as error:
        raise TypeError(f"{layer}: {error}") from None
    if as_dtype(floating) is bfloat16:  # a storage dtype here: no gradients, so no parameters
        raise TypeError(f"{layer}: bfloat16 parameters are not supported (taugrad computes gradients in "
                        f"float16, float32 and float64); build the layer in float32 and convert its outputs")
    if floating.kind != "f":
        raise TypeError(f"{layer}: dtype must be a floating dtype (float16, float32, float64), "
                        f"got {as_dtype(floating)}")
    return dev, floating


def place(module: Module, dev: Device) -> None:
    """Move a freshly initialised ``module``'s parameters and buffers to ``dev`` (nothing to do for the CPU).

    Layers initialise on the CPU and then move, rather than drawing on the
    device: the draws then come from the CPU generator whatever the device,
    so a seeded layer holds the same numbers everywhere.
    """
    if dev.type != "cpu":
        module.to(dev)


def _empty(shape: Tuple[int, ...], dtype: np.dtype) -> Parameter:
    return Parameter(np.zeros(shape, dtype=dtype))


def _check_size(value: Any, name: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


# ---------------------------------------------------------------------------
# affine layers
# ---------------------------------------------------------------------------


class Linear(Module):
    r"""``y = x W^T + b`` with ``W`` of shape ``(out_features, in_features)`` and ``b`` of ``(out_features,)``.

    Initialisation (PyTorch's): ``W ~ U(-k, k)`` and ``b ~ U(-k, k)`` with
    ``k = 1 / sqrt(in_features)`` -- for ``W`` this is Kaiming-uniform with
    ``a = sqrt(5)``.  ``device=`` / ``dtype=`` as in :func:`factory_kwargs`.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        dev, dtype = factory_kwargs(type(self).__name__, device, dtype)
        self.in_features = _check_size(in_features, "in_features")
        self.out_features = _check_size(out_features, "out_features")
        # PyTorch's layout, row-major (out, in): views of weight.data and weight.grad
        # (pruning masks, gradient masks) write into the parameter itself
        self.weight = _empty((self.out_features, self.in_features), dtype)
        if bias:
            self.bias = _empty((self.out_features,), dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        place(self, dev)

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Any) -> Tensor:
        x = self._checked_input(x)
        # the registry directly: self.weight would first miss and go through Module.__getattr__
        params = self._parameters
        return _linear(x, params["weight"], params["bias"])

    def _checked_input(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        shape = x._data.shape
        if not shape or shape[-1] != self.in_features:
            raise ValueError(f"Linear({self.in_features}, {self.out_features}) expects inputs whose last dimension "
                             f"is {self.in_features}, got shape {tuple(x.shape)}")
        return x

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` (shape ``(num_embeddings, embedding_dim)``) for index ``i``.

    Initialised from ``N(0, 1)`` as in PyTorch.  The input holds integer indices
    of any shape; the output appends ``embedding_dim``.  Rows used several times
    accumulate their gradients.  ``padding_idx`` (negative counts from the end)
    names a row that starts at zeros and gets no gradient, ``max_norm``
    rescales the rows a call refers to in place, ``scale_grad_by_freq`` divides
    each row's gradient by its count in the batch, as PyTorch's
    (:func:`taugrad.nn.functional.embedding`); ``sparse=True`` is refused when
    the layer runs (taugrad has no sparse tensors).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None,
                 max_norm: Optional[float] = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Any = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        dev, dtype = factory_kwargs(type(self).__name__, device, dtype)
        self.num_embeddings = _check_size(num_embeddings, "num_embeddings", 1)
        self.embedding_dim = _check_size(embedding_dim, "embedding_dim")
        self.padding_idx = _padding_row(padding_idx, self.num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = _empty((self.num_embeddings, self.embedding_dim), dtype)
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)
            if tuple(self.weight.shape) != (self.num_embeddings, self.embedding_dim):
                raise ValueError(f"Embedding: _weight must have shape ({self.num_embeddings}, "
                                 f"{self.embedding_dim}), got {tuple(self.weight.shape)}")
        place(self, dev)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: Optional[int] = None,
                        max_norm: Optional[float] = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """A layer whose weight is ``embeddings`` (2-d), frozen unless ``freeze=False``, as PyTorch's."""
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-d, got shape {tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, indices: Any) -> Tensor:
        return embedding(indices, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse:
            text += ", sparse=True"
        return text


def _padding_row(padding_idx: Optional[int], rows: int) -> Optional[int]:
    """``padding_idx`` as a row number in ``[0, rows)`` (negative counts from the end), or None."""
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise ValueError(f"Embedding: padding_idx must be within num_embeddings ({rows}), got {padding_idx}")
    return padding_idx % rows


class LayerNorm(Module):
    r"""Normalise over the last ``len(normalized_shape)`` dimensions, then scale and shift.

    ``y = (x - mean) / sqrt(var + eps) * weight + bias`` where ``mean`` and the
    biased ``var`` (divided by N) are taken over those dimensions; ``weight``
    starts at ones and ``bias`` at zeros.
    """

    def __init__(
        self,
        normalized_shape: Union[int, Sequence[int]],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        dev, dtype = factory_kwargs(type(self).__name__, device, dtype)
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        self.normalized_shape = tuple(_check_size(n, "normalized_shape", 1) for n in shape)
        self.eps = float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        if self.elementwise_affine:
            self.weight = _empty(self.normalized_shape, dtype)
            if bias:
                self.bias = _empty(self.normalized_shape, dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()
        place(self, dev)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        k = len(self.normalized_shape)
        if tuple(x.shape[x.ndim - k:]) != self.normalized_shape or x.ndim < k:
            raise ValueError(f"LayerNorm{self.normalized_shape} expects inputs ending in {self.normalized_shape}, "
                             f"got shape {tuple(x.shape)}")
        return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


# ---------------------------------------------------------------------------
# parameter-free layers
# ---------------------------------------------------------------------------


class Identity(Module):
    """Returns its input unchanged; any constructor arguments are accepted and ignored, as PyTorch's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return x


class ReLU(Module):
    """``max(x, 0)`` elementwise; ``inplace=True`` writes it into the input (``relu_``), as PyTorch."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        return x.relu_() if self.inplace else x.relu()

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """``tanh(x)`` elementwise."""

    def forward(self, x: Any) -> Tensor:
        return _as_tensor(x).tanh()


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise."""

    def forward(self, x: Any) -> Tensor:
        return _as_tensor(x).sigmoid()


class GELU(Module):
    r"""Gaussian error linear unit ``x * Phi(x)`` (``Phi`` the standard normal CDF).

    ``approximate="tanh"`` uses ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Any) -> Tensor:
        return _as_tensor(x).gelu(approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The expected output equals the input, so evaluation mode (``model.eval()``)
    simply passes inputs through.  Masks come from taugrad's default generator
    (``taugrad.manual_seed``).
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x: Any) -> Tensor:
        return dropout(_as_tensor(x), self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    """Merge dimensions ``start_dim .. end_dim`` into one (default: all but the batch dimension)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x: Any) -> Tensor:
        return _as_tensor(x).flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (the inverse of :class:`Flatten`; one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size) if not isinstance(unflattened_size, tuple) \
            else unflattened_size

    def forward(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        shape = tuple(x.shape)
        d = self.dim + len(shape) if self.dim < 0 else self.dim
        if not 0 <= d < len(shape):
            raise IndexError(f"Unflatten: dim {self.dim} is out of range for an input of shape {shape}")
        return x.reshape(shape[:d] + tuple(self.unflattened_size) + shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# ---------------------------------------------------------------------------
# containers
# ---------------------------------------------------------------------------


class Sequential(_SequentialMethods, Module):
    """Modules applied one after another; registered as ``"0"``, ``"1"``, ... (or by name from an OrderedDict).

    ``Sequential(Linear(2, 8), ReLU(), Linear(8, 1))`` has the state-dict keys
    ``0.weight, 0.bias, 2.weight, 2.bias``, as ``torch.nn.Sequential`` does.
    Each module is called in turn (its hooks run, its op shows in the graph).
    """

    def __init__(self, *modules: Any) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(modules):
                self.add_module(str(index), module)

    def forward(self, x: Any) -> Any:
        for module in self._modules.values():
            x = module(x)
        return x



class ModuleList(_ModuleListMethods, Module):
    """A list of modules, registered as ``"0"``, ``"1"``, ...; index, iterate and append like a list."""

    def __init__(self, modules: Optional[Iterable[Module]] = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __repr__(self) -> str:
        """PyTorch's layout, with runs of identical modules shown once: ``(0-2): 3 x Linear(...)``."""
        reprs = [repr(module) for module in self]
        if not reprs:
            return "ModuleList()" if type(self) is ModuleList else f"{type(self).__name__}()"
        runs = []  # [first, last, text]
        for index, text in enumerate(reprs):
            if runs and runs[-1][2] == text:
                runs[-1][1] = index
            else:
                runs.append([index, index, text])
        lines = []
        for first, last, text in runs:
            label = f"({first}): {text}" if first == last else f"({first}-{last}): {last - first + 1} x {text}"
            lines.append(label.replace("\n", "\n  "))
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class MLP(Sequential):
    """A multi-layer perceptron: ``Linear, act, [Dropout,] Linear, act, ..., Linear``.

    ``MLP(in_features, hidden_sizes, out_features)`` puts ``activation`` (a
    module class, ``ReLU`` by default) after every hidden ``Linear`` and
    nothing after the last one, so the outputs are logits.  It *is* a
    :class:`Sequential`: the state-dict keys are those of the equivalent
    ``torch.nn.Sequential`` (``0.weight``, ``0.bias``, ``2.weight``, ...).
    ``device`` and ``dtype`` are passed to every ``Linear``.
    """

    def __init__(
        self,
        in_features: int,
        hidden_sizes: Sequence[int],
        out_features: int,
        activation: Type[Module] = ReLU,
        dropout: float = 0.0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if isinstance(hidden_sizes, (int, np.integer)):
            hidden_sizes = [hidden_sizes]
        sizes = [in_features, *hidden_sizes, out_features]
        layers = []
        for fan_in, fan_out in zip(sizes[:-2], sizes[1:-1]):
            layers.append(Linear(fan_in, fan_out, device=device, dtype=dtype))
            layers.append(activation())
            if dropout > 0.0:
                layers.append(Dropout(dropout))
        layers.append(Linear(sizes[-2], sizes[-1], device=device, dtype=dtype))
        super().__init__(*layers)
        self.in_features = in_features
        self.hidden_sizes = list(hidden_sizes)
        self.out_features = out_features

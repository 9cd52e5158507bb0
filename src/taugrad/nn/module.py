"""``Module`` and ``Parameter``: the bookkeeping half of a neural network.

Assigning a :class:`Parameter` or a :class:`Module` to an attribute registers
it, in assignment order, exactly as in PyTorch::

    class Net(Module):
        def __init__(self):
            super().__init__()
            self.fc = Linear(2, 3)                          # a submodule
            self.scale = Parameter(np.ones(3, np.float32))  # a parameter

Names are joined with dots, so ``Net().state_dict()`` has the keys
``fc.weight``, ``fc.bias``, ``scale``: PyTorch's keys for the same model,
which is what lets a state dict travel between the two libraries.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

import numpy as np

from taugrad.tensors.core.backend import device_of, is_array, to_device
from taugrad.tensors.core.device import parse_to
from taugrad.tensors.core.device import device as Device
from taugrad.tensors.core.flat_storage import pack
from taugrad.nn.module_hooks import call_with_hooks
from taugrad.tensors.hooks import RemovableHandle
from taugrad.tensors.ops.inplace import bump_version
from taugrad.tensors.ops.rearrange import contiguous
from taugrad.tensors.core.node import Tensor

__all__ = ["Module", "Parameter", "StateDictError"]


class Parameter(Tensor):
    """A Tensor that a :class:`Module` registers as learnable; ``requires_grad=True`` by default.

    ``Parameter(data)`` takes an array, a Tensor (its data, without a copy) or a
    nested list, with :class:`Tensor`'s dtype rules.
    """

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            data = np.empty(0, dtype=np.float32)
        if isinstance(data, Tensor):
            data = data._data
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class StateDictError(RuntimeError):
    """A state dict does not fit the module: missing, unexpected or mis-shaped keys."""


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` did not match; shown as torch shows it, so a notebook's
    ``model.load_state_dict(...)`` line prints ``<All keys matched successfully>``."""

    missing_keys: List[str]
    unexpected_keys: List[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"IncompatibleKeys(missing_keys={self.missing_keys!r}, unexpected_keys={self.unexpected_keys!r})"

    __str__ = __repr__


def _as_array(value: Any, key: str) -> np.ndarray:
    """The ndarray inside a state-dict value: a Tensor, an ndarray or anything array-like (a torch tensor)."""
    if isinstance(value, Tensor):
        return value._data
    if is_array(value) and not isinstance(value, np.ndarray):  # a device array (CuPy)
        return value
    try:
        array = np.asarray(value)
    except Exception as err:  # e.g. a torch tensor that requires grad
        raise StateDictError(f"value for {key!r} is not an array: {type(value).__name__} ({err})") from None
    if array.dtype.kind not in "biufc":
        raise StateDictError(f"value for {key!r} is not numeric: {type(value).__name__} of dtype {array.dtype}")
    return array


def _convert_in_place(t: Tensor, dev, dtype) -> None:
    """``t`` (and its gradient) moved to ``dev`` and, if floating, converted to ``dtype``.

    Both keep their identity (torch assigns ``param.data`` and ``param.grad.data``),
    so an optimizer, a hook or a user variable holding either sees the new arrays.
    """
    if dev is not None:
        moved = to_device(t._data, dev)
        if moved is not t._data:
            t._data = moved
            if t._grad is not None:
                t._grad._data = to_device(t._grad._data, dev)
    if dtype is not None and t._data.dtype.kind in "fc" and t._data.dtype != dtype:
        t._data = t._data.astype(dtype)
        if t._grad is not None:
            t._grad._data = t._grad._data.astype(dtype)


class Module:
    """Base class of every layer and model: override ``forward``; call the module to run it.

    Holds three ordered registries filled by attribute assignment or the
    ``register_*`` / ``add_module`` methods: parameters, buffers (tensors that
    are state but not learnable) and submodules.
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "training", True)

    # -- forward --------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        if not (d.get("_forward_hooks") or d.get("_forward_pre_hooks") or d.get("_backward_hooks")
                or d.get("_backward_pre_hooks")):
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    def _hook_registry(self, name: str, hook: Any, kind: str) -> "OrderedDict":
        if not callable(hook):
            raise TypeError(f"{kind} expects a callable, got {type(hook).__name__}")
        registry = self.__dict__.get(name)
        if registry is None:  # a subclass that skipped Module.__init__, or a hook kind not used before
            registry = OrderedDict()
            object.__setattr__(self, name, registry)
        return registry

    def _add_hook(self, name: str, hook: Any, kind: str, prepend: bool, flags: Tuple[Tuple[str, bool], ...] = ()
                  ) -> RemovableHandle:
        registry = self._hook_registry(name, hook, kind)
        handle = RemovableHandle(self, name)
        registry[handle.id] = hook
        if prepend:
            registry.move_to_end(handle.id, last=False)
        for flag_name, on in flags:
            if on:
                flagged = self.__dict__.get(flag_name)
                if flagged is None:
                    flagged = set()
                    object.__setattr__(self, flag_name, flagged)
                flagged.add(handle.id)
        return handle

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before every ``forward``; a non-None result replaces ``args``.

        A result that is not a tuple becomes the single argument.  With
        ``with_kwargs=True`` the hook is ``hook(module, args, kwargs)`` and
        returns None or ``(new_args, new_kwargs)``.  ``prepend=True`` runs it
        before the hooks registered earlier.  Returns a handle whose
        ``remove()`` unregisters the hook.
        """
        return self._add_hook("_forward_pre_hooks", hook, "register_forward_pre_hook", prepend,
                              (("_forward_pre_hooks_with_kwargs", with_kwargs),))

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after every ``forward``; a non-None result replaces the output.

        ``args`` is the tuple of positional arguments (after the pre-hooks).
        Hooks run in registration order (``prepend=True``: before the others).
        ``with_kwargs=True``: the hook is ``hook(module, args, kwargs, output)``.
        ``always_call=True``: the hook also runs (with output None) when forward
        raises.  Returns a handle whose ``remove()`` unregisters the hook (as
        ``torch.nn.Module.register_forward_hook``).
        """
        return self._add_hook("_forward_hooks", hook, "register_forward_hook", prepend,
                              (("_forward_hooks_with_kwargs", with_kwargs),
                               ("_forward_hooks_always_called", always_call)))

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of this call's outputs are known.

        ``grad_output`` is a tuple (one gradient per output Tensor); a non-None
        result replaces it, before it reaches the module's ops.
        """
        return self._add_hook("_backward_pre_hooks", hook, "register_full_backward_pre_hook", prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        r"""Call ``hook(module, grad_input, grad_output)`` when the gradients of this call's inputs are known.

        ``grad_input[i]`` is :math:`\partial L / \partial x_i` for the i-th
        positional Tensor argument (None for one that needs no gradient),
        ``grad_output`` as for :meth:`register_full_backward_pre_hook`.  A
        non-None result replaces ``grad_input``.
        """
        return self._add_hook("_backward_hooks", hook, "register_full_backward_hook", prepend)

    # -- registration -----------------------------------------------------------

    def _registries(self) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any]]:
        try:
            return self.__dict__["_parameters"], self.__dict__["_buffers"], self.__dict__["_modules"]
        except KeyError:
            raise AttributeError(
                f"cannot assign parameters or submodules before {type(self).__name__}.__init__() "
                "calls super().__init__()"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, (Parameter, Module)):
            self._registries()
            self.__dict__.pop(name, None)  # a plain attribute of that name gives way, as in PyTorch
            if isinstance(value, Parameter):
                self.register_parameter(name, value)
            else:
                self.add_module(name, value)
        else:
            params, buffers, modules = self.__dict__.get("_parameters"), self.__dict__.get("_buffers"), \
                self.__dict__.get("_modules")
            if params is not None and name in params:
                if value is not None:
                    raise TypeError(f"cannot assign {type(value).__name__} as parameter {name!r} "
                                    "(a Parameter or None is expected)")
                params[name] = None
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign {type(value).__name__} as child module {name!r} "
                                    "(a Module or None is expected)")
                modules[name] = None
            elif buffers is not None and name in buffers:
                if value is not None and not isinstance(value, Tensor):
                    raise TypeError(f"cannot assign {type(value).__name__} as buffer {name!r} "
                                    "(a Tensor or None is expected)")
                buffers[name] = value
            else:
                object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: look in the registries
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(registry)
            if entries is not None and name in entries:
                del entries[name]
                self.__dict__["_non_persistent_buffers"].discard(name)
                return
        object.__delattr__(self, name)

    def _check_new_name(self, name: str, kind: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name must be a string, got {type(name).__name__}")
        if name == "" or "." in name:
            raise KeyError(f"{kind} name must be non-empty and contain no '.', got {name!r}")
        if name in self.__dict__:
            raise KeyError(f"attribute {name!r} already exists")

    def _register(self, registry: str, name: str, value: Any) -> None:
        """Store ``value`` as ``name`` in ``registry``, dropping ``name`` from the other two.

        An existing entry of the same registry is overwritten where it stands,
        so reassigning ``layer.weight`` keeps it first in ``named_parameters()``
        and ``state_dict()``, as in PyTorch; a name that changes kind (a buffer
        that becomes a parameter) goes to the end of its new registry.
        """
        for other in ("_parameters", "_buffers", "_modules"):
            if other != registry:
                self.__dict__[other].pop(name, None)
        self.__dict__["_non_persistent_buffers"].discard(name)
        self.__dict__[registry][name] = value

    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        """Register ``param`` (a :class:`Parameter`, or ``None`` for an absent one) as ``name``."""
        self._registries()
        self._check_new_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot register {type(param).__name__} as parameter {name!r} (wrap it in Parameter)")
        self._register("_parameters", name, param)

    def register_buffer(self, name: str, tensor: Optional[Tensor], persistent: bool = True) -> None:
        """Register non-learnable state (saved in the state dict unless ``persistent=False``)."""
        self._registries()
        self._check_new_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot register {type(tensor).__name__} as buffer {name!r} (a Tensor is expected)")
        self._register("_buffers", name, tensor)
        if not persistent:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        """Register ``module`` as the child ``name``."""
        self._registries()
        self._check_new_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module")
        self._register("_modules", name, module)

    def register_module(self, name: str, module: Optional["Module"]) -> None:
        """Alias of :meth:`add_module`."""
        self.add_module(name, module)

    # -- traversal ----------------------------------------------------------------

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        """Direct submodules with their names; one registered twice is listed once (as PyTorch)."""
        seen: Set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo: Optional[Set[Any]] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, "Module"]]:
        """This module and every submodule, with dotted names; this one is ``prefix``.

        A module reached twice is listed once unless ``remove_duplicate=False``.
        ``memo``: a set of modules not to list (filled as it goes, as PyTorch's).
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator["Module"]:
        """This module and every submodule (see :meth:`named_modules`)."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[Tuple[str, Tensor]]:
        seen: Set[int] = set()  # a tensor shared by two modules is listed once, as in PyTorch
        if recurse:
            modules: Any = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            modules = [(prefix, self)]
        for module_name, module in modules:
            for name, tensor in module.__dict__[registry].items():
                if tensor is None or id(tensor) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(tensor))
                yield (f"{module_name}.{name}" if module_name else name), tensor

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[Tuple[str, Parameter]]:
        """``(dotted name, parameter)`` for every parameter, in registration order.

        A parameter (or module) reached under two names is listed once unless
        ``remove_duplicate=False``.
        """
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)  # type: ignore[return-value]

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter (each once), in registration order: what an optimizer takes."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, Tensor]]:
        """``(dotted name, buffer)`` for every buffer (see :meth:`named_parameters`)."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target: str) -> "Module":
        """The submodule at the dotted path ``target`` (``""``: this module), e.g. ``"encoder.0"``."""
        if target == "":
            return self
        module: Any = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{type(module).__name__} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target`` (``"encoder.0"``), replacing what is there.

        The parent must exist; with ``strict=True`` so must the child being replaced.
        """
        if target == "":
            raise ValueError("set_submodule: cannot set the submodule without a target name")
        if not isinstance(module, Module):
            raise ValueError(f"set_submodule: `module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``, e.g. ``"encoder.0.weight"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``, e.g. ``"bn.running_mean"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    def apply(self, fn: Callable[["Module"], Any]) -> "Module":
        """Call ``fn`` on every submodule (children first) and on this module; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- training helpers ------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``p.grad = None`` (default) or zeros, for every parameter."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad._data[...] = 0

    def train(self, mode: bool = True) -> "Module":
        """Training mode (``mode=True``) or evaluation mode, for this module and all submodules."""
        if not isinstance(mode, bool):
            raise TypeError(f"train(mode) expects a bool, got {type(mode).__name__}")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> "Module":
        """Evaluation mode (``Dropout`` passes inputs through); same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    # -- devices and dtypes -----------------------------------------------------------

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(tensor)``, in place; returns self.

        Parameters and buffers (and the parameters' gradients) move to the
        device, and the floating ones convert to the dtype, in place, as
        PyTorch: each tensor keeps its identity, so an optimizer built before
        still holds them; integer buffers (counters) keep their dtype.  On a
        device the parameters this call moved or converted are placed side by
        side in one buffer (:mod:`taugrad.tensors.core.flat_storage`), so that an
        optimizer step updates them all in a few kernel launches.
        ``memory_format=taugrad.channels_last`` lays the 4-D ones out as
        (N, H, W, C) memory (convolution weights), as PyTorch.
        """
        memory_format = kwargs.get("memory_format")
        dev, dtype, _, _ = parse_to("Module.to", args, kwargs)
        if dtype is not None and dtype.kind not in "fc":
            raise TypeError(f"Module.to: only floating or complex dtypes convert a module, got {dtype}")
        params = list(self.parameters())
        before = [p._data for p in params]
        for t in params + list(self.buffers()):
            _convert_in_place(t, dev, dtype)
            if memory_format is not None and t._data.ndim == {"channels_last": 4, "channels_last_3d": 5}.get(
                    getattr(memory_format, "name", None)):
                t._data = contiguous(t.detach(), memory_format)._data  # same values, same tensor, new layout
        pack([p for p, array in zip(params, before) if p._data is not array])
        return self

    def share_memory(self) -> "Module":
        """Every parameter and buffer moved into shared memory (``Tensor.share_memory_``); returns self.

        Processes that receive the module through :mod:`taugrad.multiprocessing`
        then train the same numbers (PyTorch's hogwild pattern).
        """
        for t in list(self.parameters()) + list(self.buffers()):
            t.share_memory_()
        return self

    def cpu(self) -> "Module":
        """Parameters and buffers moved to the CPU, in place; returns self."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> "Module":
        """Parameters and buffers moved to CUDA device ``device`` (the first by default), in place.

        Raises a one-line ``RuntimeError`` when CuPy or a GPU is missing.
        """
        return self.to(Device("cuda", device) if device is None or isinstance(device, int) else Device(device))

    def half(self) -> "Module":
        """``to(float16)``: floating parameters and buffers become float16, in place."""
        return self.to(np.dtype(np.float16))

    def float(self) -> "Module":
        """``to(float32)``: floating parameters and buffers become float32, in place."""
        return self.to(np.dtype(np.float32))

    def double(self) -> "Module":
        """``to(float64)``: floating parameters and buffers become float64, in place."""
        return self.to(np.dtype(np.float64))

    # -- state dict -------------------------------------------------------------------

    def _state_entries(self) -> "OrderedDict[str, Tensor]":
        """Dotted name -> the live tensor, for parameters and persistent buffers.

        Unlike :meth:`named_parameters`, nothing is deduplicated: a submodule
        or tensor registered under two names is listed under both, as in
        PyTorch's state dict, so each library can load the other's.
        """
        entries: "OrderedDict[str, Tensor]" = OrderedDict()
        self._collect_state_entries("", entries, ancestors=set())
        return entries

    def _collect_state_entries(self, prefix: str, entries: Dict[str, Tensor], ancestors: Set[int]) -> None:
        """Add this module's entries under ``prefix``, then each child's, depth first."""
        for name, param in self._parameters.items():
            if param is not None:
                entries[prefix + name] = param
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers:
                entries[prefix + name] = buffer
        # a module that contains itself would recurse forever; a module shared
        # by two parents is not an ancestor of itself and is visited under both
        ancestors.add(id(self))
        for name, child in self._modules.items():  # not named_children(): no deduplication here
            if child is not None and id(child) not in ancestors:
                child._collect_state_entries(f"{prefix}{name}.", entries, ancestors)
        ancestors.discard(id(self))

    def state_dict(self, *, destination: Optional[Dict[str, Any]] = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """Every parameter and persistent buffer under PyTorch's dotted key names.

        The values are Tensors outside the graph that *share* the parameters'
        arrays (as PyTorch's do): copy them, or save them, to keep a snapshot;
        ``keep_vars=True`` gives the parameters themselves.  A submodule or
        tensor shared under two names appears under both.  Each key starts
        with ``prefix``; the entries are added to ``destination`` (a new
        OrderedDict by default), which is returned.
        """
        out = OrderedDict() if destination is None else destination
        for name, tensor in self._state_entries().items():
            out[prefix + name] = tensor if keep_vars else tensor.detach()
        return out

    def load_state_dict(self, state_dict: Dict[str, Any], strict: bool = True, assign: bool = False
                        ) -> IncompatibleKeys:
        """Copy the values of ``state_dict`` into this module's parameters and buffers, in place.

        Values may be Tensors, NumPy arrays or other array-likes (a ``torch``
        state dict works as it is); they are cast to each parameter's dtype.
        Every key must fit: with ``strict=True`` missing and unexpected keys are
        an error, and a shape that differs always is.  Nothing is changed
        unless everything fits.  Returns ``(missing_keys, unexpected_keys)``.
        ``assign=True``: each parameter and buffer takes the given values as its
        new array (in the state dict's dtype), instead of copying into its own.
        """
        if not hasattr(state_dict, "items"):
            raise TypeError(f"load_state_dict expects a dict of name -> array, got {type(state_dict).__name__}")
        targets = self._state_entries()
        missing = [key for key in targets if key not in state_dict]
        unexpected = [key for key in state_dict if key not in targets]
        problems = []
        if strict and missing:
            problems.append("missing key(s): " + ", ".join(missing))
        if strict and unexpected:
            problems.append("unexpected key(s): " + ", ".join(map(str, unexpected)))
        arrays = {}
        for key, target in targets.items():
            if key not in state_dict:
                continue
            array = _as_array(state_dict[key], key)
            if array.shape != target._data.shape:
                problems.append(f"size mismatch for {key}: shape {tuple(array.shape)} in the state dict, "
                                f"{target._data.shape} in the model")
            arrays[key] = array
        if problems:
            raise StateDictError(f"cannot load state dict into {type(self).__name__}: " + "; ".join(problems))
        if assign:
            for key, array in arrays.items():
                target = targets[key]
                target._data = to_device(np.array(array) if type(array) is np.ndarray and not array.flags.writeable
                                         else array, device_of(target._data))
                bump_version(target)
            return IncompatibleKeys(missing, unexpected)
        for key, array in arrays.items():
            # in place (optimizers keep pointing at the same arrays), on the parameter's device
            targets[key]._data[...] = to_device(array, device_of(targets[key]._data))
            bump_version(targets[key])
        return IncompatibleKeys(missing, unexpected)

    # -- printing ----------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (its hyperparameters)."""
        return ""

    def __repr__(self) -> str:
        children = [f"({name}): " + repr(module).replace("\n", "\n  ") for name, module in self._modules.items()]
        extra = self.extra_repr()
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = ([extra] if extra else []) + children
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

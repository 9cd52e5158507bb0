"""The shim that ``compare_with_torch.py`` installs in each of its two runs, so that both draw the same randomness.

A program run twice, once on PyTorch and once on taugrad, can only print the
same numbers if every random value it sees is the same in both runs.  The two
engines have different random generators, so the shim replaces them, in
both runs alike, with what is described here; everything else (every op the
program computes, every module, optimizer and loss) is the engine's own.

Shared, from one NumPy stream (``numpy.random.Generator(PCG64(seed))``),
drawn in the order the program asks for them:

* the random functions the program itself calls: ``torch.rand``, ``randn``,
  ``randint``, ``randperm``, ``rand_like``, ``randn_like``, ``randint_like``,
  ``multinomial``, ``bernoulli``, ``normal``, and the in-place
  ``Tensor.uniform_``, ``normal_``, ``bernoulli_``, ``exponential_``;
  ``torch.manual_seed(s)`` from the program reseeds the stream with ``s``.
  ("The program itself" is any caller outside the engine: a call made inside
  ``torch``/``taugrad``/``torchvision`` keeps the engine's own generator, because
  the engines draw different amounts internally and the stream would go out
  of step.)  Explicit ``generator=`` arguments are ignored: one stream serves
  all generators, which is the same in both runs since the program is.
* data order: ``RandomSampler`` (with replacement, 32 indices at a time, as
  torch draws them; without, one permutation per pass) and
  ``SubsetRandomSampler``, so ``DataLoader(shuffle=True)`` and the endless
  ``RandomSampler(replacement=True, num_samples=int(1e10))`` loader agree.
* dropout masks: ``nn.Dropout`` and ``F.dropout`` (a program's call) keep an
  element where a uniform draw is ``>= p`` and scale it by ``1 / (1 - p)``;
  ``nn.Dropout1d/2d/3d`` and ``F.dropout1d/2d/3d`` draw one value per channel;
  ``F.scaled_dot_product_attention`` with ``dropout_p > 0`` is computed as
  ``dropout(softmax(q k^T * scale + mask)) v`` from the engine's ops with that mask.
* samples of ``distributions.Categorical`` (by inverting the cumulative
  probabilities, as ``multinomial`` is).

Parameters: a module's built-in initialisation (``nn.Linear``'s
Kaiming-uniform, ``nn.Embedding``'s normal...) is drawn inside the engine, so
the PyTorch run records each parameter's values the first time it is used
(the first call of a module holding it, the construction of an optimizer
given it, or ``share_memory()``, whichever comes first), and the taugrad run
loads those values into its parameters at the same moment, matched by order
and checked by shape.  Values the program sets itself before then are the
same in both runs anyway.

Processes the program starts (``torch.multiprocessing`` with ``spawn``) run a
``sitecustomize`` on their ``PYTHONPATH`` that installs the same shim; a
parameter in shared memory was handed over by the process that shared it.

Compared by contract, not shared (a run that depends on these prints
different numbers, and the comparison says so): dropout inside library
layers (``nn.LSTM(dropout=)``, ``nn.MultiheadAttention``, ``nn.Transformer``),
draws made by library code (``random_split``, torchvision's random
transforms), the order in which several processes update a shared model,
and NumPy's or Python's own ``random`` (the same in both runs when the
program seeds them: dcgan without ``--manualSeed`` draws its seed from
Python's clock-seeded ``random``).

Run as ``python compare_with_torch.py --child SETTINGS_JSON PROGRAM.py [args...]``;
nothing here is meant to be called by hand.
"""
from __future__ import annotations

import math
import os
import sys
from typing import Any, Callable, Dict, List, Sequence

import numpy as np

#: callers inside these packages keep the engine's own generator (see the module docstring)
LIBRARIES = ("torch", "taugrad", "torchvision", __name__)


def _from_program(depth: int = 2) -> bool:
    """Whether the function ``depth - 1`` frames up was called by the program rather than by an engine."""
    name = sys._getframe(depth).f_globals.get("__name__", "") or ""
    return not any(name == lib or name.startswith(lib + ".") for lib in LIBRARIES)


def _shape(args: Sequence[Any], kwargs: Dict[str, Any]) -> tuple:
    """The size of ``rand(2, 3)``, ``rand((2, 3))`` or ``rand(size=(2, 3))``."""
    if "size" in kwargs:
        size = kwargs.pop("size")
    elif len(args) == 1 and isinstance(args[0], (tuple, list)):
        size = args[0]
    else:
        size = args
    return tuple(int(s) for s in size)


def _inverse_cdf(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    """For each row of ``weights`` (R, K) and uniforms ``u`` (R,), the category whose cumulative share holds u."""
    cum = np.cumsum(weights, axis=-1)
    picks = np.array([np.searchsorted(c, x * c[-1], side="right") for c, x in zip(cum, u)], dtype=np.int64)
    return np.minimum(picks, weights.shape[-1] - 1)


class SharedRandomness:
    """Installs the shared draws and the parameter hand-over into one engine module (``torch`` or ``taugrad``)."""

    def __init__(self, engine: Any, role: str, folder: str, seed: int) -> None:
        self.tg = engine
        self.role = role  # "record" in the PyTorch run, "load" in the taugrad run, "nudge" in the baseline run
        self.folder = folder
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.synced: Dict[int, Any] = {}   # parameters handed over, by id (kept alive so ids stay unique)
        self.called: Dict[int, Any] = {}   # modules whose first call has been seen
        self.events = 0

    # -- building tensors from NumPy ------------------------------------------------------------------------------

    def tensor(self, values: np.ndarray, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
        t = self.tg.from_numpy(np.ascontiguousarray(values))
        if dtype is not None:
            t = t.to(dtype)
        if device is not None:
            t = t.to(device)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def floats(self, values: np.ndarray, kwargs: Dict[str, Any]) -> Any:
        dtype = kwargs.get("dtype") or self.tg.get_default_dtype()
        return self.tensor(values, dtype, kwargs.get("device"), bool(kwargs.get("requires_grad", False)))

    def ints(self, values: np.ndarray, kwargs: Dict[str, Any]) -> Any:
        dtype = kwargs.get("dtype") or self.tg.int64
        return self.tensor(values.astype(np.int64), dtype, kwargs.get("device"),
                           bool(kwargs.get("requires_grad", False)))

    @staticmethod
    def numpy(t: Any) -> np.ndarray:
        return t.detach().cpu().numpy().astype(np.float64) if hasattr(t, "detach") else np.asarray(t, np.float64)

    # -- the draws ---------------------------------------------------------------------------------------------------

    def rand(self, *args, **kwargs):
        return self.floats(self.rng.random(_shape(args, kwargs)), kwargs)

    def randn(self, *args, **kwargs):
        return self.floats(self.rng.standard_normal(_shape(args, kwargs)), kwargs)

    def randint(self, *args, **kwargs):
        pos = list(args)
        size = kwargs.pop("size") if "size" in kwargs else pos.pop()
        if "high" in kwargs:
            high = kwargs.pop("high")
            low = kwargs.pop("low", pos[0] if pos else 0)
        elif len(pos) == 2:
            low, high = pos
        else:
            low, high = kwargs.pop("low", 0), pos[0]
        return self.ints(self.rng.integers(int(low), int(high), size=tuple(int(s) for s in size)), kwargs)

    def randperm(self, n, **kwargs):
        return self.ints(self.rng.permutation(int(n)), kwargs)

    def rand_like(self, t, **kwargs):
        kwargs.setdefault("dtype", t.dtype)
        return self.floats(self.rng.random(tuple(t.shape)), kwargs)

    def randn_like(self, t, **kwargs):
        kwargs.setdefault("dtype", t.dtype)
        return self.floats(self.rng.standard_normal(tuple(t.shape)), kwargs)

    def randint_like(self, t, low, high=None, **kwargs):
        low, high = (0, low) if high is None else (low, high)
        kwargs.setdefault("dtype", t.dtype)
        return self.ints(self.rng.integers(int(low), int(high), size=tuple(t.shape)), kwargs)

    def multinomial(self, input, num_samples, replacement=False, **kwargs):
        weights = self.numpy(input)
        rows = weights.reshape(-1, weights.shape[-1]).copy()
        u = self.rng.random((rows.shape[0], int(num_samples)))
        out = np.empty(u.shape, dtype=np.int64)
        for s in range(out.shape[1]):
            out[:, s] = _inverse_cdf(rows, u[:, s])
            if not replacement:
                rows[np.arange(rows.shape[0]), out[:, s]] = 0.0
        shape = weights.shape[:-1] + (int(num_samples),)
        return self.ints(out.reshape(shape), {"device": getattr(input, "device", None)})

    def bernoulli(self, input, p=None, **kwargs):
        probs = self.numpy(input) if p is None else np.broadcast_to(self.numpy(p), tuple(input.shape))
        return self.tensor(self.rng.random(probs.shape) < probs, input.dtype)

    def normal(self, mean=0.0, std=1.0, size=None, **kwargs):
        m, s = self.numpy(mean), self.numpy(std)
        shape = tuple(int(d) for d in size) if size is not None else np.broadcast_shapes(m.shape, s.shape)
        dtype = kwargs.get("dtype") or next((t.dtype for t in (mean, std) if hasattr(t, "dtype")), None)
        return self.floats(m + s * self.rng.standard_normal(shape), dict(kwargs, dtype=dtype))

    def fill(self, t, values: np.ndarray):
        t.copy_(self.tensor(values, t.dtype, t.device))
        return t

    def uniform_(self, t, *args, **kwargs):
        low = args[0] if args else kwargs.get("from", kwargs.get("a", 0.0))
        high = args[1] if len(args) > 1 else kwargs.get("to", kwargs.get("b", 1.0))
        return self.fill(t, low + (high - low) * self.rng.random(tuple(t.shape)))

    def normal_(self, t, mean=0.0, std=1.0, **kwargs):
        return self.fill(t, mean + std * self.rng.standard_normal(tuple(t.shape)))

    def bernoulli_(self, t, p=0.5, **kwargs):
        return self.fill(t, self.rng.random(tuple(t.shape)) < self.numpy(p))

    def exponential_(self, t, lambd=1.0, **kwargs):
        return self.fill(t, -np.log1p(-self.rng.random(tuple(t.shape))) / lambd)

    def dropout(self, input, p=0.5, training=True, inplace=False, kept=None):
        """Inverted dropout; ``kept`` dimensions (leading ones) share one draw per slice (feature dropout)."""
        if not training or p == 0.0:
            return input
        shape = tuple(input.shape)
        drawn = shape if kept is None else shape[:kept] + (1,) * (len(shape) - kept)
        keep = self.rng.random(drawn) >= p
        scale = np.zeros(keep.shape) if p >= 1.0 else keep / (1.0 - p)
        mask = self.tensor(scale, input.dtype, input.device)
        return input.mul_(mask) if inplace else input * mask

    def feature_dropout(self, n: int, input, p=0.5, training=True, inplace=False):
        """``dropout{n}d``: whole channels at once; torch takes (C, ...) without a batch for dropout1d and 3d
        (2-D and 4-D inputs), and always (N, C, ...) for dropout2d."""
        unbatched = (n == 1 and input.dim() == 2) or (n == 3 and input.dim() == 4)
        return self.dropout(input, p, training, inplace, kept=1 if unbatched else 2)

    def attention(self, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
        scores = (query @ key.transpose(-2, -1)) * scale
        if is_causal:
            allowed = self.tg.ones(query.shape[-2], key.shape[-2], dtype=self.tg.bool).tril()
            scores = scores.masked_fill(allowed.logical_not(), float("-inf"))
        if attn_mask is not None:
            if attn_mask.dtype == self.tg.bool:
                scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
            else:
                scores = scores + attn_mask
        return self.dropout(scores.softmax(dim=-1), dropout_p) @ value

    def categorical(self, dist, sample_shape=()):
        probs = self.numpy(dist.probs)
        rows = probs.reshape(-1, probs.shape[-1])
        n = int(np.prod(tuple(sample_shape), dtype=np.int64))
        u = self.rng.random((n, rows.shape[0]))
        picks = np.stack([_inverse_cdf(rows, u[i]) for i in range(n)])
        return self.ints(picks.reshape(tuple(sample_shape) + probs.shape[:-1]), {})

    def sample_indices(self, sampler):
        n, total = len(sampler.data_source), sampler.num_samples
        if sampler.replacement:
            for start in range(0, total, 32):
                yield from self.rng.integers(0, n, size=min(32, total - start)).tolist()
        else:
            for start in range(0, total, max(n, 1)):
                yield from self.rng.permutation(n)[: total - start].tolist()

    def subset_indices(self, sampler):
        for i in self.rng.permutation(len(sampler.indices)).tolist():
            yield sampler.indices[i]

    # -- parameters: recorded by the PyTorch run, loaded by the taugrad run ----------------------------------------

    def hand_over(self, params, where: str, sharing: bool = False) -> None:
        """Record (PyTorch) or load (taugrad) the values of the parameters not handed over before.

        A parameter in shared memory was handed over when it was put there (``share_memory()``, which
        ``sharing`` marks), by the process that shared it: the processes training it never hand it over again.
        Each process numbers its own hand-overs, under its ``multiprocessing`` name.
        """
        import multiprocessing
        fresh: List[Any] = []
        for p in params:
            if id(p) not in self.synced and (sharing or not p.is_shared()):
                self.synced[id(p)] = p
                fresh.append(p)
        if not fresh:
            return
        process = multiprocessing.current_process().name
        path = os.path.join(self.folder, f"parameters_{process}_{self.events:04d}.npz")
        self.events += 1
        if self.role == "nudge":
            # PyTorch against itself: each value moved by one unit in its last place, up and down in turn (a
            # common scale would be undone by any normalisation layer after it)
            with self.tg.no_grad():
                for p in fresh:
                    if p.is_floating_point():
                        signs = np.where(np.arange(p.numel()) % 2 == 0, 1.0, -1.0).reshape(tuple(p.shape))
                        p.mul_(self.tensor(1.0 + self.tg.finfo(p.dtype).eps * signs, p.dtype, p.device))
            return
        if self.role == "record":
            np.savez(path, *[p.detach().cpu().numpy() for p in fresh])
            return
        if not os.path.exists(path):
            raise RuntimeError(f"compare_with_torch: at {where}, taugrad has parameters the PyTorch run never used "
                               f"({len(fresh)} of shapes {[tuple(p.shape) for p in fresh]})")
        with np.load(path) as saved:
            arrays = [saved[f"arr_{i}"] for i in range(len(saved.files))]
        ours, theirs = [tuple(p.shape) for p in fresh], [a.shape for a in arrays]
        if ours != theirs:
            raise RuntimeError(f"compare_with_torch: at {where}, PyTorch's parameters have shapes {theirs} "
                               f"and taugrad's {ours}")
        with self.tg.no_grad():
            for p, a in zip(fresh, arrays):
                p.copy_(self.tensor(a, p.dtype, p.device))

    # -- installing ------------------------------------------------------------------------------------------------

    def install(self) -> None:
        tg = self.tg
        for name in ("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
                     "multinomial", "bernoulli", "normal"):
            setattr(tg, name, self._for_program(getattr(tg, name), getattr(self, name)))
        for name in ("uniform_", "normal_", "bernoulli_", "exponential_"):
            setattr(tg.Tensor, name, self._for_program(getattr(tg.Tensor, name), getattr(self, name)))
        seed = tg.manual_seed

        def manual_seed(s):
            if _from_program():
                self.rng = np.random.Generator(np.random.PCG64(int(s)))
            return seed(s)
        tg.manual_seed = manual_seed

        functional = tg.nn.functional
        functional.dropout = self._for_program(functional.dropout, self.dropout)
        tg.nn.Dropout.forward = lambda module, x: self.dropout(x, module.p, module.training, module.inplace)
        for n in (1, 2, 3):
            if hasattr(tg.nn, f"Dropout{n}d"):
                getattr(tg.nn, f"Dropout{n}d").forward = (
                    lambda module, x, n=n: self.feature_dropout(n, x, module.p, module.training, module.inplace))
            if hasattr(functional, f"dropout{n}d"):
                setattr(functional, f"dropout{n}d", self._for_program(
                    getattr(functional, f"dropout{n}d"), lambda *args, n=n, **kwargs: self.feature_dropout(
                        n, *args, **kwargs)))
        sdpa = functional.scaled_dot_product_attention

        def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kwargs):
            if dropout_p > 0.0 and _from_program():
                return self.attention(query, key, value, attn_mask, dropout_p, is_causal, scale)
            return sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                        scale=scale, **kwargs)
        functional.scaled_dot_product_attention = attention
        tg.distributions.Categorical.sample = self._for_program(tg.distributions.Categorical.sample,
                                                                self.categorical)
        tg.utils.data.RandomSampler.__iter__ = lambda sampler: self.sample_indices(sampler)
        tg.utils.data.SubsetRandomSampler.__iter__ = lambda sampler: self.subset_indices(sampler)

        call = tg.nn.Module.__call__

        def first_call(module, *args, **kwargs):
            if id(module) not in self.called:
                self.called[id(module)] = module
                self.hand_over(module.parameters(), f"the first call of a {type(module).__name__}")
            return call(module, *args, **kwargs)
        tg.nn.Module.__call__ = first_call
        share = tg.nn.Module.share_memory

        def share_memory(module):
            self.hand_over(module.parameters(), f"share_memory() of a {type(module).__name__}", sharing=True)
            return share(module)
        tg.nn.Module.share_memory = share_memory
        construct = tg.optim.Optimizer.__init__

        def optimizer_init(optimizer, *args, **kwargs):
            construct(optimizer, *args, **kwargs)
            self.hand_over([p for group in optimizer.param_groups for p in group["params"]],
                           f"the construction of a {type(optimizer).__name__}")
        tg.optim.Optimizer.__init__ = optimizer_init

    @staticmethod
    def _for_program(engine_own: Callable, shared: Callable) -> Callable:
        """``shared`` when the program calls, ``engine_own`` when the engine itself does."""
        def draw(*args, **kwargs):
            if _from_program():
                return shared(*args, **kwargs)
            return engine_own(*args, **kwargs)
        draw.__name__ = getattr(engine_own, "__name__", "draw")
        draw.__doc__ = getattr(engine_own, "__doc__", None)
        return draw


def _torchvision_if_missing(torch: Any, folder: str) -> None:
    """Where torchvision is not installed, the stand-in of ``torchvision_standin.py`` (and a note in ``folder``)."""
    import importlib.util
    if importlib.util.find_spec("torchvision") is not None:
        return
    spec = importlib.util.spec_from_file_location("torchvision_standin",
                                                  os.path.join(os.path.dirname(__file__), "torchvision_standin.py"))
    standin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(standin)
    standin.install(torch, lambda: open(os.path.join(folder, "torchvision_standin"), "w").close())


#: set while a program runs: the settings a process it spawns installs the shim from (see ``sitecustomize``)
SPAWNED = "COMPARE_WITH_TORCH_SPAWNED"
SITECUSTOMIZE = """import os, sys
sys.path.insert(0, {scripts!r})
from shared_randomness import install_in_spawned_process
del sys.path[0]
install_in_spawned_process()
"""


def install(engine: str, folder: str, seed: int, dtype: str) -> Any:
    """Import the engine, install the shim (and, for PyTorch without torchvision, the stand-in); the engine."""
    if engine in ("torch", "torch-nudged"):
        import torch
        import torch.distributions
        import torch.nn.functional
        import torch.optim
        import torch.utils.data
        SharedRandomness(torch, "record" if engine == "torch" else "nudge", folder, seed).install()
        _torchvision_if_missing(torch, folder)
        module = torch
    else:
        import taugrad
        import taugrad.distributions
        import taugrad.nn.functional
        import taugrad.optim
        import taugrad.utils.data
        SharedRandomness(taugrad, "load", folder, seed).install()
        module = taugrad
    if dtype:
        module.set_default_dtype(getattr(module, dtype))
    return module


def install_in_spawned_process() -> None:
    """In a process the program starts (``multiprocessing`` with ``spawn``), the shim of the run that started it."""
    import json
    settings = os.environ.get(SPAWNED)
    if settings:
        settings = json.loads(settings)
        install(settings["engine"], settings["folder"], settings["seed"], settings["dtype"])


def _spawned_processes_too(engine: str, folder: str, seed: int, dtype: str) -> None:
    """Processes the program starts run ``sitecustomize`` from ``folder`` first, which installs the same shim."""
    import json
    site = os.path.join(folder, f"site-{engine}")
    os.makedirs(site, exist_ok=True)
    with open(os.path.join(site, "sitecustomize.py"), "w") as f:
        f.write(SITECUSTOMIZE.format(scripts=os.path.dirname(os.path.abspath(__file__))))
    os.environ[SPAWNED] = json.dumps({"engine": engine, "folder": folder, "seed": seed, "dtype": dtype})
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [site, os.environ.get("PYTHONPATH")]))


def _run_with_torch(program: str, args: Sequence[str]) -> int:
    """``python program.py args``: the script as ``__main__``, its folder first on ``sys.path``, its exit status."""
    import runpy
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [program, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


def run(engine: str, folder: str, seed: int, commands: Sequence[Sequence[str]], dtype: str = "") -> int:
    """Run each command ``[program.py, *args]`` in turn, as ``python program.py args`` would (``taugrad run`` for
    taugrad), the shim installed, in this process and in those the program starts; stop at the first that fails.

    ``dtype="float64"`` makes float64 the default dtype first (``torch.set_default_dtype``), in both runs.
    ``engine="torch-nudged"`` is PyTorch with each parameter's values scaled by ``1 + eps`` and ``1 - eps`` in
    turn when it is handed over.
    """
    install(engine, folder, seed, dtype)
    _spawned_processes_too(engine, folder, seed, dtype)
    if engine == "taugrad":
        from taugrad.run import main

        def one(program: str, args: Sequence[str]) -> int:
            return main([program, *args])
    else:
        one = _run_with_torch
    for program, *args in commands:
        status = one(program, args)
        if status:
            return status
    return 0

"""``taugrad.compile`` against eager taugrad, hand-written NumPy and the peers, alternating in one process.

Usage::

    PYTHONPATH=src python benchmarks/bench_compile.py                 # 1 and 2 BLAS threads (~5 min)
    PYTHONPATH=src python benchmarks/bench_compile.py --quick         # a smoke run
    PYTHONPATH=src python benchmarks/bench_compile.py --threads 1 --workloads mlp

Workloads (each step: forward, cross-entropy, backward, optimizer update):

* ``mlp``: the 784-256-256-10 ReLU MLP of ``bench_tensor.py`` (float32 batch
  128, in-place SGD on the arrays): hand-written NumPy (``numpy``), eager
  taugrad (``nn.Sequential``, ``taugrad``), the same step under
  ``taugrad.compile`` (``compiled``), PyTorch eager (``torch``),
  ``torch.compile`` (``torch-compile``; skipped with a note when it fails,
  e.g. without a C compiler), ``jax.jit`` (``jax``; skipped when JAX is not
  installed) and the GEMM-only floor (``gemm``: the step's eight matrix
  products alone, written with NumPy).  Target: compiled <= 0.85x numpy.
* ``makemore``, ``gpt``, ``cnn``: the makemore-MLP, GPT-lecture and digits-CNN
  steps of ``bench_torch_programs.py`` / ``bench_cnn.py``, eager taugrad
  against compiled.  Target: compiled at least 1.3x faster than eager.

Engines alternate in short rounds (``_timing.alternate``); the table gives
the median ms per step, the ratio of medians to the reference (``numpy`` for
the MLP, eager ``taugrad`` otherwise) and the median of the per-round ratios
with its 95% bootstrap interval.  Before timing, every compiled step is
checked against eager taugrad for equal losses and parameters (bit for bit).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))


def _args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few rounds only")
    parser.add_argument("--threads", type=int, default=None, help="one thread count (default: 1 then 2, "
                                                                  "each in a fresh process)")
    parser.add_argument("--workloads", default="mlp,makemore,gpt,cnn")
    parser.add_argument("--rounds", type=int, default=None)
    return parser.parse_args(argv)


ARGS = _args() if __name__ == "__main__" else None
if ARGS is not None and ARGS.threads is not None:
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = str(ARGS.threads)
    if ARGS.threads == 1:  # XLA ignores the BLAS settings: without this, jax.jit used both cores in a "1 thread" run
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1").strip()

import numpy as np  # noqa: E402  (after the thread settings)

sys.path.insert(0, HERE)
import bench_tensor as T  # noqa: E402
from _timing import alternate, load_average, median, median_interval  # noqa: E402

import taugrad  # noqa: E402
import taugrad.functional as F  # noqa: E402
from taugrad import nn  # noqa: E402


# ---------------------------------------------------------------------------
# the MLP step
# ---------------------------------------------------------------------------


def compiled_engine(x, y, init) -> Callable[[], float]:
    """``taugrad-nn``'s step (nn.Sequential, cross-entropy, backward, in-place SGD) under ``taugrad.compile``."""
    model, params = T.taugrad_mlp(init)
    inputs = taugrad.Tensor(x)

    @taugrad.compile
    def train(inputs, labels):
        loss = F.cross_entropy(model(inputs), labels)
        loss.backward()
        for p in params:
            T.sgd_update(p._data, p.grad._data)
            p.grad = None
        return loss

    def step() -> float:
        return float(train(inputs, y)._data)

    step.params = [p._data.T if p.ndim == 2 else p._data for p in params]  # type: ignore[attr-defined]
    step.compiled = train  # type: ignore[attr-defined]
    return step


def gemm_engine(x, y, init) -> Callable[[], float]:
    """Only the step's eight matrix products (3 forward, 5 backward), into preallocated outputs: the floor."""
    w1, b1, w2, b2, w3, b3 = [p.copy() for p in init]
    h1, h2, z = np.empty((x.shape[0], w1.shape[1]), np.float32), np.empty((x.shape[0], w2.shape[1]), np.float32), \
        np.empty((x.shape[0], w3.shape[1]), np.float32)
    g3, g2, g1 = np.empty_like(w3), np.empty_like(w2), np.empty_like(w1)
    d2, d1 = np.empty_like(h2), np.empty_like(h1)

    def step() -> float:
        np.matmul(x, w1, out=h1)
        np.matmul(h1, w2, out=h2)
        np.matmul(h2, w3, out=z)
        np.matmul(h2.T, z, out=g3)
        np.matmul(z, w3.T, out=d2)
        np.matmul(h1.T, d2, out=g2)
        np.matmul(d2, w2.T, out=d1)
        np.matmul(x.T, d1, out=g1)
        return 0.0

    return step


def torch_compile_engine(x, y, init) -> Callable[[], float]:
    import torch  # optional dependency: a peer

    eager = T.torch_engine(x, y, init)
    params = eager.params
    tparams = [torch.from_numpy(p) for p in params]
    for p in tparams:
        p.requires_grad_(True)
    inputs, labels = torch.from_numpy(x), torch.from_numpy(y)

    def loss_of(w1, b1, w2, b2, w3, b3):
        h = (inputs @ w1 + b1).relu()
        h = (h @ w2 + b2).relu()
        return torch.nn.functional.cross_entropy(h @ w3 + b3, labels)

    compiled = torch.compile(loss_of)

    def step() -> float:
        loss = compiled(*tparams)
        loss.backward()
        with torch.no_grad():
            for p in tparams:
                p.sub_(p.grad, alpha=T.LR)
                p.grad = None
        return float(loss.detach())

    step()  # compiles now: a failure is reported before timing
    return step


def jax_engine(x, y, init) -> Callable[[], float]:
    import jax  # optional dependency: a peer
    import jax.numpy as jnp

    params = [jnp.asarray(p) for p in init]
    xs, ys = jnp.asarray(x), jnp.asarray(y)

    def loss_of(ps):
        w1, b1, w2, b2, w3, b3 = ps
        h = jax.nn.relu(xs @ w1 + b1)
        h = jax.nn.relu(h @ w2 + b2)
        z = h @ w3 + b3
        return -jnp.mean(jax.nn.log_softmax(z)[jnp.arange(z.shape[0]), ys])

    @jax.jit
    def update(ps):
        loss, grads = jax.value_and_grad(loss_of)(ps)
        return loss, [p - T.LR * g for p, g in zip(ps, grads)]

    state = {"p": params}

    def step() -> float:
        loss, state["p"] = update(state["p"])
        loss.block_until_ready()
        return 0.0

    step()
    return step


def mlp_engines() -> Dict[str, Callable[[], float]]:
    x, y, init = T.make_problem()
    engines = {"numpy": T.numpy_engine(x, y, init), "taugrad": T.taugrad_nn_engine(x, y, init),
               "compiled": compiled_engine(x, y, init), "gemm": gemm_engine(x, y, init)}
    _check_same(T.taugrad_nn_engine(x, y, init), compiled_engine(x, y, init), "mlp")
    try:
        engines["torch"] = T.torch_engine(x, y, init)
    except ImportError:
        print("  torch: not installed, skipped")
    for name, make in (("torch-compile", torch_compile_engine), ("jax", jax_engine)):
        try:
            engines[name] = make(x, y, init)
        except ImportError as error:
            print(f"  {name}: skipped ({error})")
        except Exception as error:  # noqa: BLE001 - a peer that cannot run here is reported, not fatal
            print(f"  {name}: skipped, it failed: {type(error).__name__}: {str(error).splitlines()[0][:120]}")
    return engines


def _check_same(eager: Callable, compiled: Callable, name: str) -> None:
    for i in range(4):
        a, b = eager(), compiled()
        if a != b:
            raise SystemExit(f"{name}: compiled loss {b!r} differs from eager {a!r} at step {i}")
    for p, q in zip(eager.params, compiled.params):
        if not np.array_equal(p, q):
            raise SystemExit(f"{name}: compiled parameters differ from eager after 4 steps")
    stats = compiled.compiled.stats
    print(f"  {name}: compiled = eager bit for bit over 4 steps ({stats['captures']} captures, "
          f"{stats['replays']} replays)")


# ---------------------------------------------------------------------------
# the program steps: eager against compiled
# ---------------------------------------------------------------------------


def _makemore(rng):
    """makemore part 2's MLP on plain leaf tensors (embedding 27x10, block 3, 200 tanh units, batch 32)."""
    shapes = [(27, 10), (30, 200), (200,), (200, 27), (27,)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    for a, scale in zip(arrays[1:], ((5 / 3) / 30 ** 0.5, 0.01, 0.01, 0.0)):
        a *= scale
    C, W1, b1, W2, b2 = params = [taugrad.tensor(a, requires_grad=True) for a in arrays]
    X, Y = taugrad.tensor(rng.integers(0, 27, (2000, 3))), taugrad.tensor(rng.integers(0, 27, 2000))
    batches = [(taugrad.tensor(rng.integers(0, 2000, 32)),) for _ in range(8)]

    def train(ix):
        Xb, Yb = X[ix], Y[ix]
        h = taugrad.tanh(C[Xb].view(-1, 30) @ W1 + b1)
        loss = F.cross_entropy(h @ W2 + b2, Yb)
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data += -0.1 * p.grad
        return loss

    return train, params, batches


VOCAB, N_EMBD, N_HEAD, N_LAYER, BLOCK, GPT_BATCH = 65, 64, 4, 4, 32, 16


class _Head(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.key, self.query, self.value = (nn.Linear(N_EMBD, size, bias=False) for _ in range(3))
        self.register_buffer("tril", taugrad.tril(taugrad.ones(BLOCK, BLOCK)))

    def forward(self, x):
        T_ = x.shape[1]
        k, q = self.key(x), self.query(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = F.softmax(wei.masked_fill(self.tril[:T_, :T_] == 0, float("-inf")), dim=-1)
        return wei @ self.value(x)


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([_Head(N_EMBD // N_HEAD) for _ in range(N_HEAD)])
        self.proj = nn.Linear(N_EMBD, N_EMBD)
        self.ffwd = nn.Sequential(nn.Linear(N_EMBD, 4 * N_EMBD), nn.ReLU(), nn.Linear(4 * N_EMBD, N_EMBD))
        self.ln1, self.ln2 = nn.LayerNorm(N_EMBD), nn.LayerNorm(N_EMBD)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.proj(taugrad.cat([head(h) for head in self.heads], dim=-1))
        return x + self.ffwd(self.ln2(x))


class _GPT(nn.Module):
    """The GPT lecture's character model: n_embd 64, 4 heads, 4 blocks, block 32, vocab 65."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, N_EMBD)
        self.pos = nn.Embedding(BLOCK, N_EMBD)
        self.blocks = nn.Sequential(*[_Block() for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(N_EMBD)
        self.lm_head = nn.Linear(N_EMBD, VOCAB)

    def forward(self, idx, targets):
        B, T_ = idx.shape
        x = self.blocks(self.tok(idx) + self.pos(taugrad.arange(T_)))
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(B * T_, VOCAB), targets.view(B * T_))


def _gpt(rng):
    taugrad.manual_seed(0)
    model = _GPT()
    opt = taugrad.optim.AdamW(model.parameters(), lr=1e-3)
    data = [rng.integers(0, VOCAB, (GPT_BATCH, BLOCK + 1)) for _ in range(8)]
    batches = [(taugrad.tensor(d[:, :-1]), taugrad.tensor(d[:, 1:].copy())) for d in data]

    def train(xb, yb):
        loss = model(xb, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return train, list(model.parameters()), batches


def _cnn(rng):
    """The digits CNN of ``bench_cnn.py`` (conv 1->32, pool, conv 32->64, global average pool, linear), 64x1x8x8."""
    taugrad.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    opt = taugrad.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batches = [(taugrad.tensor(rng.standard_normal((64, 1, 8, 8)).astype(np.float32)),
                taugrad.tensor(rng.integers(0, 10, 64))) for _ in range(8)]

    def train(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return train, list(model.parameters()), batches


PROGRAMS = {"makemore": _makemore, "gpt": _gpt, "cnn": _cnn}


def program_engine(name: str, compiled: bool) -> Callable[[], float]:
    train, params, batches = PROGRAMS[name](np.random.default_rng(0))
    fn = taugrad.compile(train) if compiled else train
    state = {"i": 0}

    def step() -> float:
        batch = batches[state["i"] % len(batches)]
        state["i"] += 1
        return float(fn(*batch)._data)

    step.params = [p._data for p in params]  # type: ignore[attr-defined]
    step.compiled = fn  # type: ignore[attr-defined]
    return step


def program_engines(name: str) -> Dict[str, Callable[[], float]]:
    _check_same(program_engine(name, False), program_engine(name, True), name)
    return {"taugrad": program_engine(name, False), "compiled": program_engine(name, True)}


#: step factories ``(x, y, init) -> step`` for ``callgrind_step.py`` (the programs ignore the MLP's problem)
ENGINES = {"taugrad-compiled": compiled_engine, "gemm": gemm_engine}
for _name in PROGRAMS:
    ENGINES[f"{_name}-eager"] = (lambda n: lambda x, y, init: program_engine(n, False))(_name)
    ENGINES[f"{_name}-compiled"] = (lambda n: lambda x, y, init: program_engine(n, True))(_name)


# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------


def table(title: str, engines: Dict[str, Callable[[], float]], reference: str, rounds: int, number: int,
          target=None) -> None:
    print(f"\n{title}")
    samples = alternate(engines, rounds=rounds, number=number, warmup=3, settle=0.2,
                        threads_of={"torch": "torch", "torch-compile": "torch", "jax": "jax"})
    ref = median(samples[reference])
    print(f"  {rounds} alternating rounds x {number} steps; median ms/step; ratio to {reference}; median of "
          f"per-round ratios with its 95% bootstrap interval")
    print(f"  {'engine':<15}{'ms/step':>10}{'ratio':>9}{'paired':>9}  95% interval")
    for name, values in samples.items():
        ratios = [v / r for v, r in zip(values, samples[reference])]
        low, high = median_interval(ratios)
        print(f"  {name:<15}{median(values) * 1e3:>10.3f}{median(values) / ref:>8.2f}x{median(ratios):>8.2f}x  "
              f"{low:.2f}x-{high:.2f}x")
    if target is not None:
        kind, value = target
        ratios = [c / r for c, r in zip(samples["compiled"], samples[reference])]
        low, high = median_interval(ratios)
        if kind == "at most":
            verdict = "MET" if high <= value else ("MISSED" if low > value else "NOT SHOWN")
            print(f"  target compiled / {reference} <= {value:.2f}x: {median(ratios):.2f}x "
                  f"({low:.2f}x-{high:.2f}x): {verdict}")
        else:
            speed = [1 / r for r in ratios]
            lo, hi = median_interval(speed)
            verdict = "MET" if lo >= value else ("MISSED" if hi < value else "NOT SHOWN")
            print(f"  target eager / compiled >= {value:.2f}x: {median(speed):.2f}x ({lo:.2f}x-{hi:.2f}x): {verdict}")


def run(args) -> int:
    from threadpoolctl import threadpool_limits  # optional dependency of the benchmark only

    threadpool_limits(args.threads)
    try:
        import torch  # optional dependency: a peer
        torch.set_num_threads(args.threads)
    except ImportError:
        pass
    load = load_average()
    print(f"=== {args.threads} BLAS thread(s); numpy {np.__version__}; load average {load}")
    rounds = args.rounds or (5 if args.quick else 41)
    workloads = [w for w in args.workloads.split(",") if w]
    if "mlp" in workloads:
        engines = mlp_engines()
        table(f"MLP {'-'.join(map(str, T.SIZES))} step, batch {T.BATCH} ({args.threads} thread(s))", engines,
              "numpy", rounds, 3 if args.quick else 10, ("at most", 0.85))
    for name in workloads:
        if name in PROGRAMS:
            table(f"{name} step ({args.threads} thread(s))", program_engines(name), "taugrad", rounds,
                  2 if args.quick else 5, ("faster", 1.3))
    return 0


def main() -> int:
    if ARGS.threads is not None:
        return run(ARGS)
    for threads in (1, 2):  # each in its own process: BLAS reads its thread count at start
        command = [sys.executable, os.path.abspath(__file__), "--threads", str(threads), "--workloads",
                   ARGS.workloads] + (["--quick"] if ARGS.quick else []) + \
                  (["--rounds", str(ARGS.rounds)] if ARGS.rounds else [])
        subprocess.run(command, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Three PyTorch programs: taugrad against PyTorch CPU eager, alternating in one process, same weights.

Each program's model and training step is written once, in PyTorch's idiom,
against a library ``L`` that is either ``torch`` or ``taugrad``:

(a) makemore part 2's MLP step: an embedding table ``C`` (27x10), a block of 3
    characters, a 200-unit tanh layer and 27 outputs, batch 32, written the way
    the lecture writes it: ``C[Xb]``, ``.view``, ``@``, ``tanh``,
    ``F.cross_entropy``, ``loss.backward()``, ``p.data += -lr * p.grad`` and
    ``p.grad = None`` on plain leaf tensors;
(b) the GPT lecture's architecture: token and position embeddings, 4 blocks of
    4-head causal self-attention (per-head ``Linear`` key/query/value, a
    ``tril`` buffer and ``masked_fill``, softmax, dropout p=0), LayerNorm,
    a 4x ReLU feed-forward, ``lm_head`` and ``F.cross_entropy``; n_embd 64,
    block 32, batch 16, vocab 65; forward, backward and an ``AdamW`` step;
(c) the PyTorch quickstart MLP: ``Flatten``, 784-512-512-10 with ReLU, batch 64,
    ``CrossEntropyLoss``, ``SGD(lr=1e-3)``.

Both libraries start from the same weights (torch's, copied into taugrad) and
see the same batches, so their losses must agree to float32 rounding; the
first steps' losses are printed side by side.  Times: median ms per step over
short alternating rounds (``_timing.alternate``), and the median over rounds
of the per-round ratio taugrad / torch with its 95% bootstrap interval; the
verdict is MET when the whole interval is at or below the target, MISSED when
the whole interval is above it, NOT SHOWN otherwise.

    PYTHONPATH=src python benchmarks/bench_torch_programs.py [--rounds 41] [--number 10] [--threads 1] [--markdown]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--rounds", type=int, default=41, help="alternating rounds")
parser.add_argument("--number", type=int, default=10, help="steps per timed block")
parser.add_argument("--threads", type=int, default=1, help="BLAS / torch threads (set before importing NumPy)")
parser.add_argument("--programs", default="a,b,c", help="comma-separated subset of a, b, c")
parser.add_argument("--markdown", action="store_true", help="also print the results as a Markdown table")
args = parser.parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import numpy as np  # noqa: E402  (after the thread settings)
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import alternate, load_average, median, median_interval  # noqa: E402

import taugrad  # noqa: E402

torch.set_num_threads(args.threads)

BATCHES = 8  # distinct batches each step cycles through (the same for both libraries)


# ---------------------------------------------------------------------------
# (a) makemore part 2: the MLP on plain leaf tensors
# ---------------------------------------------------------------------------


def makemore_mlp(L, arrays, lr=0.1):
    """The lecture's training step on parameters ``[C, W1, b1, W2, b2]`` made from ``arrays``."""
    F = L.nn.functional
    C, W1, b1, W2, b2 = parameters = [L.tensor(a) for a in arrays["params"]]
    for p in parameters:
        p.requires_grad = True
    X, Y = L.tensor(arrays["X"]), L.tensor(arrays["Y"])
    batches = [L.tensor(ix) for ix in arrays["ix"]]
    state = {"i": 0}

    def step():
        ix = batches[state["i"] % len(batches)]
        state["i"] += 1
        Xb, Yb = X[ix], Y[ix]
        emb = C[Xb]
        h = L.tanh(emb.view(-1, 30) @ W1 + b1)
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        for p in parameters:
            p.data += -lr * p.grad
        return loss.item()

    return step


def makemore_arrays(seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(27, 10), (30, 200), (200,), (200, 27), (27,)]
    params = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    params[1] *= (5 / 3) / 30 ** 0.5  # the lecture's Kaiming-style scales keep tanh out of saturation
    params[2] *= 0.01
    params[3] *= 0.01
    params[4] *= 0.0
    n = 2000  # the lecture's ~180k training contexts; the step only ever sees a batch of 32
    X = rng.integers(0, 27, (n, 3))
    Y = rng.integers(0, 27, n)
    ix = [rng.integers(0, n, 32) for _ in range(BATCHES)]
    return {"params": params, "X": X, "Y": Y, "ix": ix}


def makemore_steps(seed=0):
    arrays = makemore_arrays(seed)
    return makemore_mlp(torch, arrays), makemore_mlp(taugrad, arrays)


# ---------------------------------------------------------------------------
# (b) the GPT lecture's model
# ---------------------------------------------------------------------------

VOCAB, N_EMBD, N_HEAD, N_LAYER, BLOCK, GPT_BATCH = 65, 64, 4, 4, 32, 16


def gpt_model(L):
    """A character-level GPT as the lecture builds it, on library ``L``."""
    nn, F = L.nn, L.nn.functional

    class Head(nn.Module):
        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(N_EMBD, head_size, bias=False)
            self.query = nn.Linear(N_EMBD, head_size, bias=False)
            self.value = nn.Linear(N_EMBD, head_size, bias=False)
            self.register_buffer("tril", L.tril(L.ones(BLOCK, BLOCK)))
            self.dropout = nn.Dropout(0.0)

        def forward(self, x):
            B, T, C = x.shape
            k = self.key(x)
            q = self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = F.softmax(wei, dim=-1)
            wei = self.dropout(wei)
            return wei @ self.value(x)

    class MultiHeadAttention(nn.Module):
        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, N_EMBD)
            self.dropout = nn.Dropout(0.0)

        def forward(self, x):
            out = L.cat([h(x) for h in self.heads], dim=-1)
            return self.dropout(self.proj(out))

    class FeedForward(nn.Module):
        def __init__(self, n_embd):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd),
                                     nn.Dropout(0.0))

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            self.sa = MultiHeadAttention(n_head, n_embd // n_head)
            self.ffwd = FeedForward(n_embd)
            self.ln1 = nn.LayerNorm(n_embd)
            self.ln2 = nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(VOCAB, N_EMBD)
            self.position_embedding_table = nn.Embedding(BLOCK, N_EMBD)
            self.blocks = nn.Sequential(*[Block(N_EMBD, N_HEAD) for _ in range(N_LAYER)])
            self.ln_f = nn.LayerNorm(N_EMBD)
            self.lm_head = nn.Linear(N_EMBD, VOCAB)

        def forward(self, idx, targets):
            B, T = idx.shape
            tok_emb = self.token_embedding_table(idx)
            pos_emb = self.position_embedding_table(L.arange(T))
            x = self.blocks(tok_emb + pos_emb)
            logits = self.lm_head(self.ln_f(x))
            B, T, C = logits.shape
            return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    return GPT()


def train_step(L, model, batches, optimizer):
    """The lecture's loop body: forward, zero_grad(set_to_none), backward, step."""
    state = {"i": 0}

    def step():
        xb, yb = batches[state["i"] % len(batches)]
        state["i"] += 1
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def gpt_steps(seed=0):
    torch.manual_seed(seed)
    theirs = gpt_model(torch)
    ours = gpt_model(taugrad)
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(seed)
    data = [rng.integers(0, VOCAB, (GPT_BATCH, BLOCK + 1)) for _ in range(BATCHES)]
    steps = []
    for L, model in ((torch, theirs), (taugrad, ours)):
        batches = [(L.tensor(d[:, :-1]), L.tensor(d[:, 1:].copy())) for d in data]
        steps.append(train_step(L, lambda x, y, m=model: m(x, y), batches, L.optim.AdamW(model.parameters(), lr=1e-3)))
    return tuple(steps)


# ---------------------------------------------------------------------------
# (c) the PyTorch quickstart MLP
# ---------------------------------------------------------------------------


def quickstart_model(L):
    nn = L.nn

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(nn.Linear(28 * 28, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                                   nn.Linear(512, 10))

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    return NeuralNetwork()


def quickstart_steps(seed=0):
    torch.manual_seed(seed)
    theirs = quickstart_model(torch)
    ours = quickstart_model(taugrad)
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(seed)
    data = [(rng.random((64, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 64)) for _ in range(BATCHES)]
    steps = []
    for L, model in ((torch, theirs), (taugrad, ours)):
        batches = [(L.tensor(x), L.tensor(y)) for x, y in data]
        loss_fn = L.nn.CrossEntropyLoss()
        optimizer = L.optim.SGD(model.parameters(), lr=1e-3)
        state = {"i": 0}

        def step(model=model, batches=batches, loss_fn=loss_fn, optimizer=optimizer, state=state):
            X, y = batches[state["i"] % len(batches)]
            state["i"] += 1
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            return loss.item()

        steps.append(step)
    return tuple(steps)


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

PROGRAMS = {
    "a": ("(a) makemore MLP, batch 32", makemore_steps, 1.0),
    "b": ("(b) GPT 4x4x64, block 32, batch 16, AdamW", gpt_steps, 1.0),
    "c": ("(c) quickstart MLP 784-512-512-10, batch 64", quickstart_steps, None),
}


def verdict(ratio: float, low: float, high: float, target: float | None) -> str:
    if target is None:
        return "(reported)"
    if high <= target and ratio <= target:
        return "MET"
    if low > target:
        return "MISSED"
    return "NOT SHOWN"


def main() -> int:
    print(f"python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}, "
          f"taugrad {taugrad.__version__}; {os.cpu_count()} CPUs ({platform.machine()}), "
          f"{args.threads} BLAS/torch thread(s), load average {load_average()}")
    rows = []
    for key in args.programs.split(","):
        name, make, target = PROGRAMS[key]
        torch_step, taugrad_step = make()
        # the first steps from the same start: the same computation is being timed
        losses = [(torch_step(), taugrad_step()) for _ in range(3)]
        worst = max(abs(a - b) / max(1.0, abs(a)) for a, b in losses)
        agree = worst < 1e-4
        print(f"\n{name}")
        print("  losses torch / taugrad: " + ", ".join(f"{a:.6f} / {b:.6f}" for a, b in losses)
              + f"; max relative diff {worst:.1e} -> {'agree' if agree else 'DISAGREE'}")
        samples = alternate({"torch": torch_step, "taugrad": taugrad_step}, args.rounds, args.number, warmup=3)
        ratios = [g / t for g, t in zip(samples["taugrad"], samples["torch"])]
        ratio = median(ratios)
        low, high = median_interval(ratios)
        t_ms, g_ms = 1e3 * median(samples["torch"]), 1e3 * median(samples["taugrad"])
        v = verdict(ratio, low, high, target)
        goal = f"target <= {target:.2f}x" if target is not None else "no target"
        print(f"  torch {t_ms:.3f} ms, taugrad {g_ms:.3f} ms per step; taugrad / torch {ratio:.2f}x "
              f"(95% interval {low:.2f}x-{high:.2f}x; {goal}): {v}")
        rows.append((name, t_ms, g_ms, ratio, low, high, goal, v, losses[0], worst))
    print(f"\nload average at end {load_average()}")
    if args.markdown:
        print("\n| program | torch ms/step | taugrad ms/step | taugrad / torch (95% interval) | target | verdict "
              "| first loss torch / taugrad | max rel. loss diff (3 steps) |")
        print("|---|---:|---:|---:|---|---|---:|---:|")
        for name, t, g, r, lo, hi, goal, v, first, worst in rows:
            print(f"| {name} | {t:.2f} | {g:.2f} | {r:.2f}x ({lo:.2f}-{hi:.2f}) | {goal} | {v} "
                  f"| {first[0]:.5f} / {first[1]:.5f} | {worst:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

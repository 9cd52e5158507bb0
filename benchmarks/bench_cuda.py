"""taugrad on CuPy against PyTorch CUDA eager: training steps and a tiny op, on one GPU.

    python benchmarks/bench_cuda.py [--rounds 15] [--number 10] [--cases mlp,big,gemms,tiny,gpt]

Cases (the targets of the device-kernel work):

* ``mlp``  -- MLP 784-256-256-10, batch 128, SGD step (target: at most 2x torch);
* ``big``  -- MLP 4096-4096-4096-10, batch 1024, SGD step (target: at most 1.2x torch);
* ``gemms`` -- the five large products of ``big`` alone, CuPy vs torch (no target: the floor under ``big``);
* ``tiny`` -- ``(a + b).sum().backward()`` on 1000-element vectors (target: no slower than torch);
* ``gpt``  -- the GPT step of ``bench_torch_programs.py`` (4 blocks x 4 heads x 64, block 32,
  batch 16, AdamW; target: at most 2x torch).

Both libraries start from the same weights and see the same batches.  Every
timed call ends with a device synchronize, so a block measures finished work.
The engines alternate within each round (``_timing.alternate``); the table
gives the median ms per call and the median over rounds of the per-round
ratio taugrad/torch with its 95% bootstrap interval.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _timing import alternate, median, median_interval  # noqa: E402

import taugrad  # noqa: E402
from taugrad.tensors.core.backend import backend_for  # noqa: E402

CUDA = "cuda"  # "cpu" under --device cpu: a smoke run of this script where no GPU is lent


def sync_torch():
    if CUDA != "cpu":
        torch.cuda.synchronize()


def sync_taugrad():
    if CUDA != "cpu":
        taugrad.cuda.synchronize()


def mlp(L, sizes):
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [L.nn.Linear(n_in, n_out), L.nn.ReLU()]
    return L.nn.Sequential(*layers[:-1])


def same_weights(theirs, ours):
    """``ours`` (taugrad, on the CPU) takes the weights of ``theirs`` (torch, on the CPU)."""
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})


def classifier_steps(sizes, batch, seed=0):
    """One SGD step of an MLP of ``sizes`` on a batch of ``batch``, for torch and for taugrad (both on CUDA)."""
    torch.manual_seed(seed)
    theirs, ours = mlp(torch, sizes), mlp(taugrad, sizes)
    same_weights(theirs, ours)
    theirs, ours = theirs.to(CUDA), ours.to(CUDA)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)
    steps = {}
    for name, L, model, sync in (("torch", torch, theirs, sync_torch), ("taugrad", taugrad, ours, sync_taugrad)):
        xb, yb = L.tensor(x, device=CUDA), L.tensor(y, device=CUDA)
        optimizer = L.optim.SGD(model.parameters(), lr=0.01)

        def step(L=L, model=model, xb=xb, yb=yb, optimizer=optimizer, sync=sync):
            loss = L.nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            sync()

        steps[name] = step
    return steps


def tiny_op(n=1000):
    """``(a + b).sum().backward()``: launch overhead and the engine's Python per op."""
    steps = {}
    for name, L, sync in (("torch", torch, sync_torch), ("taugrad", taugrad, sync_taugrad)):
        a = L.ones(n, device=CUDA, requires_grad=True)
        b = L.ones(n, device=CUDA, requires_grad=True)

        def step(a=a, b=b, sync=sync):
            a.grad = b.grad = None
            (a + b).sum().backward()
            sync()

        steps[name] = step
    return steps


def big_gemms(batch=1024, width=4096, seed=0):
    """The five large matrix products of the ``big`` step alone: CuPy (taugrad's array module) vs torch.

    Forward ``h1 = x W1^T``, ``h2 = h1 W2^T``; backward ``dW2 = g2^T h1``,
    ``dh1 = g2 W2``, ``dW1 = g1^T x``, all row-major as taugrad keeps them on a
    GPU.  Not a target: the floor under the ``big`` case, which says how much
    of its time is the GEMMs themselves.
    """
    rng = np.random.default_rng(seed)
    x, g1, g2 = (rng.standard_normal((batch, width)).astype(np.float32) for _ in range(3))
    w1, w2 = (rng.standard_normal((width, width)).astype(np.float32) * 0.01 for _ in range(2))
    steps = {}
    module = backend_for(CUDA)  # the device's array module (CuPy; NumPy under --device cpu)
    cx, cg1, cg2 = (module.asarray(a) for a in (x, g1, g2))
    cw1, cw2 = (module.asarray(w) for w in (w1, w2))

    def ours():
        h1 = cx @ cw1.T
        h2 = h1 @ cw2.T
        cg2.T @ h1, cg2 @ cw2, cg1.T @ cx, h2  # noqa: B018 - the products are the work
        sync_taugrad()

    tx, tg1, tg2, tw1, tw2 = (torch.tensor(a, device=CUDA) for a in (x, g1, g2, w1, w2))

    def theirs():
        h1 = tx @ tw1.T
        h2 = h1 @ tw2.T
        tg2.T @ h1, tg2 @ tw2, tg1.T @ tx, h2  # noqa: B018
        sync_torch()

    steps["torch"], steps["taugrad"] = theirs, ours
    return steps


class OnDevice:
    """A library module whose ``arange``/``ones`` make tensors on CUDA (the GPT model calls them bare)."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    def arange(self, *args, **kwargs):
        return self._module.arange(*args, device=CUDA, **kwargs)

    def ones(self, *args, **kwargs):
        return self._module.ones(*args, device=CUDA, **kwargs)


def gpt_steps(seed=0):
    """The GPT step of bench_torch_programs.py (its model, its sizes, AdamW) on CUDA."""
    saved_argv, sys.argv = sys.argv, sys.argv[:1]  # that script reads its own arguments on import
    try:
        import bench_torch_programs as programs  # noqa: E402 - after the argv swap above
    finally:
        sys.argv = saved_argv
    torch.manual_seed(seed)
    theirs, ours = programs.gpt_model(OnDevice(torch)), programs.gpt_model(OnDevice(taugrad))
    ours.to("cpu")
    ours.load_state_dict({k: v.detach().cpu().numpy().copy() for k, v in theirs.state_dict().items()})
    theirs, ours = theirs.to(CUDA), ours.to(CUDA)
    rng = np.random.default_rng(seed)
    data = [rng.integers(0, programs.VOCAB, (programs.GPT_BATCH, programs.BLOCK + 1)) for _ in range(8)]
    steps = {}
    for name, L, model, sync in (("torch", torch, theirs, sync_torch), ("taugrad", taugrad, ours, sync_taugrad)):
        batches = [(L.tensor(d[:, :-1], device=CUDA), L.tensor(d[:, 1:].copy(), device=CUDA)) for d in data]
        step = programs.train_step(L, lambda x, y, m=model: m(x, y), batches,
                                   L.optim.AdamW(model.parameters(), lr=1e-3))

        def synced(step=step, sync=sync):
            step()
            sync()

        steps[name] = synced
    return steps


CASES = {
    "mlp": ("MLP 784-256-256-10, batch 128, SGD", lambda: classifier_steps([784, 256, 256, 10], 128), 2.0),
    "big": ("MLP 4096-4096-4096-10, batch 1024, SGD", lambda: classifier_steps([4096, 4096, 4096, 10], 1024), 1.2),
    "gemms": ("the big step's 5 GEMMs alone (CuPy vs torch; the floor)", big_gemms, None),
    "tiny": ("(a + b).sum().backward(), 1000 elements", tiny_op, 1.0),
    "gpt": ("GPT 4x4x64, block 32, batch 16, AdamW", gpt_steps, 2.0),
}


def profile(case: str, number: int) -> int:
    """Where taugrad's step of ``case`` spends its time on the host: Python, CuPy's launches, waits."""
    step = CASES[case][1]()["taugrad"]
    for _ in range(3):
        step()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(number):
        step()
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="alternating rounds")
    parser.add_argument("--number", type=int, default=10, help="calls per timed block")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ", ".join(CASES))
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="'cpu': run every case on the CPU to check the script itself (not a GPU figure)")
    parser.add_argument("--profile", metavar="CASE", choices=list(CASES),
                        help="instead of the table: cProfile taugrad's step of CASE (top 25 by own time)")
    args = parser.parse_args()
    global CUDA
    CUDA = args.device
    if CUDA == "cpu":
        print("bench_cuda: --device cpu, a smoke run of the script on the CPU; these are not GPU figures")
    elif not torch.cuda.is_available():
        print("bench_cuda: torch sees no CUDA device", file=sys.stderr)
        return 2
    elif not taugrad.cuda.is_available():
        print("bench_cuda: taugrad sees no CUDA device (CuPy missing, or no GPU)", file=sys.stderr)
        return 2
    else:
        print(f"GPU: {taugrad.cuda.get_device_name()}; torch {torch.__version__}; "
              f"CuPy {sys.modules['cupy'].__version__}; {args.rounds} rounds x {args.number} calls")
    if args.profile:
        return profile(args.profile, args.number)
    print(f"| case | torch ms | taugrad ms | taugrad/torch (95% interval) | target | verdict |")
    print(f"|---|---|---|---|---|---|")
    for key in args.cases.split(","):
        title, build, target = CASES[key]
        steps = build()
        samples = alternate(steps, rounds=args.rounds, number=args.number, warmup=3)
        ratios = [o / t for o, t in zip(samples["taugrad"], samples["torch"])]
        low, high = median_interval(ratios)
        ratio = median(ratios)
        if target is None:
            verdict = "reported"
        else:
            verdict = "meets" if high <= target else ("misses" if low > target else "unclear")
        print(f"| {title} | {median(samples['torch']) * 1e3:.3f} | {median(samples['taugrad']) * 1e3:.3f} | "
              f"{ratio:.2f}x ({low:.2f}-{high:.2f}) | {'-' if target is None else f'<= {target}x'} | {verdict} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

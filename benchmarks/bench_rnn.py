"""LSTM training step: taugrad against PyTorch CPU eager, alternating in one process, same weights.

The recurrent core of pytorch/examples word_language_model at its defaults:
``LSTM(200, 256, num_layers=2)`` on a (35, 20, 200) float32 batch (sequence 35,
batch 20, embedding 200), a mean-squared loss against a fixed target, backward,
and an SGD update (lr 0.1).  Both libraries start from the same weights (torch's
state dict loaded into taugrad) and see the same batches, so the printed losses
must agree.  Times: median ms per step over alternating rounds
(``_timing.alternate``), the median of the per-round ratios and its 95% interval.

    PYTHONPATH=src python benchmarks/bench_rnn.py [--rounds 15] [--number 3] [--threads 1] [--model LSTM|GRU|RNN]
"""
from __future__ import annotations

import argparse
import os
import sys

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--rounds", type=int, default=15)
parser.add_argument("--number", type=int, default=3, help="steps per timed block")
parser.add_argument("--threads", type=int, default=1, help="BLAS / torch threads (set before importing NumPy)")
parser.add_argument("--hidden", type=int, default=256)
parser.add_argument("--layers", type=int, default=2)
parser.add_argument("--seq", type=int, default=35)
parser.add_argument("--batch", type=int, default=20)
parser.add_argument("--input", type=int, default=200)
parser.add_argument("--model", choices=("LSTM", "GRU", "RNN"), default="LSTM")
args = parser.parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import numpy as np  # noqa: E402  (after the thread settings)
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _timing  # noqa: E402

import taugrad  # noqa: E402

torch.set_num_threads(args.threads)
torch.manual_seed(0)
rng = np.random.default_rng(0)
x = rng.standard_normal((args.seq, args.batch, args.input)).astype(np.float32)
target = rng.standard_normal((args.seq, args.batch, args.hidden)).astype(np.float32)

theirs = getattr(torch.nn, args.model)(args.input, args.hidden, args.layers)
ours = getattr(taugrad.nn, args.model)(args.input, args.hidden, args.layers)
ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})
opt_t = torch.optim.SGD(theirs.parameters(), lr=0.1)
opt_o = taugrad.optim.SGD(ours.parameters(), lr=0.1)
xt, tt = torch.from_numpy(x), torch.from_numpy(target)
xo, to = taugrad.tensor(x), taugrad.tensor(target)


def step_torch():
    opt_t.zero_grad()
    out, _ = theirs(xt)
    loss = ((out - tt) ** 2).mean()
    loss.backward()
    opt_t.step()
    return loss.item()


def step_taugrad():
    opt_o.zero_grad()
    out, _ = ours(xo)
    loss = ((out - to) ** 2).mean()
    loss.backward()
    opt_o.step()
    return float(loss.item())


# the same weights and batches: the first three losses agree (float32)
for i in range(3):
    lt, lo = step_torch(), step_taugrad()
    print(f"step {i}: loss torch {lt:.6f}  taugrad {lo:.6f}")
    assert abs(lt - lo) <= 1e-4 * max(1.0, abs(lt)), (lt, lo)

samples = _timing.alternate({"torch": step_torch, "taugrad": step_taugrad}, rounds=args.rounds, number=args.number)
ratios = [a / b for a, b in zip(samples["taugrad"], samples["torch"])]
low, high = _timing.median_interval(ratios)
print(f"{args.model}({args.input}, {args.hidden}, num_layers={args.layers}), seq {args.seq}, batch {args.batch}, "
      f"float32, {args.threads} thread(s), SGD step")
print(f"  torch   {1e3 * _timing.median(samples['torch']):8.2f} ms/step")
print(f"  taugrad {1e3 * _timing.median(samples['taugrad']):8.2f} ms/step")
print(f"  ratio taugrad/torch {_timing.median(ratios):.2f}x  (95% interval {low:.2f}-{high:.2f}, "
      f"{args.rounds} rounds x {args.number} steps, load {_timing.load_average()})")

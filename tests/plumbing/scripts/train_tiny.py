"""A training script written for PyTorch, in the idiom of nanoGPT and pytorch/examples.

Run as ``python train_tiny.py --steps N`` with PyTorch, or ``taugrad run train_tiny.py --steps N``.
Weights come from NumPy with a fixed seed, so both print the same numbers.
"""
import argparse
import math
import os
from contextlib import nullcontext

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.distributed import destroy_process_group, init_process_group  # noqa: F401 - imported, unused
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: F401
from torch.utils.data import DataLoader, TensorDataset

from tiny_model import TinyMLP

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=5)
args = parser.parse_args()

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
ddp = int(os.environ.get("RANK", -1)) != -1
device_type = "cpu"
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
torch.set_default_dtype(torch.float64)

rng = np.random.default_rng(0)
model = TinyMLP(4, 16, 3)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.3))
x = torch.from_numpy(rng.standard_normal((32, 4)))
y = torch.from_numpy(rng.integers(0, 3, size=32))
loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=False)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1, betas=(0.9, 0.95))
scaler = torch.amp.GradScaler("cuda", enabled=False)

step = 0
while step < args.steps:
    for xb, yb in loader:
        with ctx:
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step}: loss {loss.item():.10f} norm {float(norm):.10f} shape {list(logits.shape)}")
        step += 1
        if step >= args.steps:
            break
print(f"final weight sum {model.fc1.weight.sum().item():.10f} lr {math.log10(optimizer.param_groups[0]['lr']):.3f}")

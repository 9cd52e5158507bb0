"""A script whose output depends on which engine runs it, so the comparison must report a difference.

``python engine_dependent.py number`` prints a loss that depends on the engine's name;
``python engine_dependent.py shape`` builds a layer whose size does.
"""
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 2 if sys.argv[1] == "number" else len(torch.__name__))
x = torch.randn(4, 3)
for step in range(3):
    loss = model(x).pow(2).mean() + 1e-3 * len(torch.__name__) * (sys.argv[1] == "number")
    print(f"step {step}: loss {loss.item():.6f}")
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
            p.grad = None

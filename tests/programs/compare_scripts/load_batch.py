"""Reads the batch.pt that save_batch.py wrote and fits a line to it for a few steps."""
import torch
import torch.nn as nn

batch = torch.load("batch.pt")
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = nn.functional.mse_loss(model(batch["x"].to(torch.get_default_dtype())).squeeze(1), batch["y"].double())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.12f}")

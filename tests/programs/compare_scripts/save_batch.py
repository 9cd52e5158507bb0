"""Writes batch.pt in the current folder: the data file load_batch.py reads (run first, under the same engine)."""
import torch

torch.manual_seed(0)
torch.save({"x": torch.randn(6, 3), "y": torch.randint(0, 2, (6,))}, "batch.pt")
print("saved", torch.randn(2).dtype == torch.float64)

"""mnist_hogwild's pattern on a tiny regression: several spawned processes train one shared model."""
import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


def train(rank, model, steps):
    torch.manual_seed(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.from_numpy(np.random.default_rng(rank).standard_normal((32, 3)))
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]], dtype=torch.float64)
    for _ in range(steps):
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()


if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    model = nn.Linear(3, 1).double()
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    model.share_memory()
    processes = [mp.Process(target=train, args=(rank, model, 40)) for rank in range(2)]
    for p in processes:
        p.start()
    for p in processes:
        p.join()
    print("exit codes", [p.exitcode for p in processes])
    print("weight", np.round(model.weight.detach().numpy(), 1).tolist())

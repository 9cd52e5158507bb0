"""mnist_hogwild's pattern: a model in shared memory, trained by a spawned process with its own shuffled loader and
dropout, then tested by the main process.  Written for PyTorch; tests/programs/test_compare_with_torch.py runs it."""
import os

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.dropout(F.relu(self.fc1(x)), 0.3, self.training)), dim=1)


def data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    return TensorDataset(x, (x[:, 0] > x[:, 1]).long() + (x[:, 2] > 1).long())


def train(rank, model):
    torch.manual_seed(1 + rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    model.train()
    for batch_idx, (x, y) in enumerate(DataLoader(data(), batch_size=8, shuffle=True)):
        optimizer.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print("{}\tbatch {} loss {:.6f}".format(os.getpid(), batch_idx, loss.item()))


if __name__ == "__main__":
    torch.manual_seed(1)
    mp.set_start_method("spawn", force=True)
    model = Net()
    model.share_memory()
    process = mp.Process(target=train, args=(0, model))
    process.start()
    process.join()
    model.eval()
    x, y = data().tensors
    print("test loss {:.6f}".format(F.nll_loss(model(x), y).item()))

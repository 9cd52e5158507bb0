"""An image classifier in pytorch/examples mnist's idiom: DataLoader(shuffle=True), Conv2d, Dropout2d, Dropout,
Adadelta, StepLR.

The images are made here from a seeded NumPy stream.  Written for PyTorch;
tests/programs/test_compare_with_torch.py runs it with both engines.
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.dropout0 = nn.Dropout2d(0.2)
        self.dropout1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(4 * 3 * 3, 10)

    def forward(self, x):
        x = F.max_pool2d(self.dropout0(F.relu(self.conv1(x))), 2)
        x = self.dropout1(torch.flatten(x, 1))
        return F.log_softmax(self.fc1(x), dim=1)


def train(args, model, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test(model, test_loader):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print("\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n".format(
        test_loss, correct, len(test_loader.dataset), 100. * correct / len(test_loader.dataset)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--log-interval", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(1)
    rng = np.random.default_rng(0)
    images = torch.from_numpy(rng.standard_normal((48, 1, 8, 8)).astype(np.float32))
    labels = torch.from_numpy(rng.integers(0, 10, size=48))
    train_loader = DataLoader(TensorDataset(images[:32], labels[:32]), batch_size=8, shuffle=True)
    test_loader = DataLoader(TensorDataset(images[32:], labels[32:]), batch_size=8)
    model = Net()
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, train_loader, optimizer, epoch)
        test(model, test_loader)
        scheduler.step()


if __name__ == "__main__":
    main()

"""mnist_hogwild's pattern: spawned processes train one shared model on an MNIST data set (``taugrad run``)."""
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms

from hogwild_mnist_train import train

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(28 * 28, 10)

    def forward(self, x):
        return F.log_softmax(self.fc(x.view(-1, 28 * 28)), dim=1)


if __name__ == "__main__":
    args = parser.parse_args()
    dataset = datasets.MNIST(args.data, train=True,
                             transform=transforms.Compose([transforms.ToTensor(),
                                                           transforms.Normalize((0.1307,), (0.3081,))]))
    torch.manual_seed(1)
    mp.set_start_method("spawn", force=True)
    model = Net()
    model.share_memory()
    before = model.fc.weight.detach().clone()
    processes = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, model, dataset))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    print("exit codes", [p.exitcode for p in processes])
    print("shared weights changed", not torch.equal(before, model.fc.weight.detach()))

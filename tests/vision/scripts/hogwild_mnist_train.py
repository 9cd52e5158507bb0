"""The training half of hogwild_mnist.py, imported by each spawned process (as mnist_hogwild's train.py)."""
import torch
import torch.nn.functional as F
import torch.optim as optim
import torchvision


def train(rank, model, dataset):
    assert torchvision.__name__ == "taugrad.vision", torchvision.__name__
    torch.manual_seed(1 + rank)
    loader = torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=True)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for data, target in loader:
        optimizer.zero_grad()
        F.nll_loss(model(data), target).backward()
        optimizer.step()
    print(f"rank {rank} trained on {len(dataset)} images")

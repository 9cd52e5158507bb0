"""An MNIST training script in the idiom of pytorch/examples (mnist, vae), run with ``taugrad run``.

    taugrad run mnist_convnet.py --data DIR --out DIR

Trains a small conv net for two batches on the idx files under DIR/MNIST/raw,
tests it, and saves a grid of the first test batch with ``save_image``.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torchvision import datasets, transforms
from torchvision.utils import save_image


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout = nn.Dropout2d(0.25)
        self.fc = nn.Linear(8 * 12 * 12, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(x)
        x = x.view(-1, 8 * 12 * 12)
        return F.log_softmax(self.fc(x), dim=1)


parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--out", required=True)
args = parser.parse_args()

torch.manual_seed(1)
transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
train_set = datasets.MNIST(args.data, train=True, download=True, transform=transform)
test_set = datasets.MNIST(args.data, train=False, transform=transform)
train_loader = torch.utils.data.DataLoader(train_set, batch_size=4, shuffle=False)
test_loader = torch.utils.data.DataLoader(test_set, batch_size=3)

model = Net()
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
model.train()
for batch_idx, (data, target) in enumerate(train_loader):
    if batch_idx == 0:
        print(f"batch {tuple(data.shape)} {data.dtype} {target.dtype} mean {data.mean().item():.6f}")
    optimizer.zero_grad()
    loss = F.nll_loss(model(data), target)
    loss.backward()
    optimizer.step()
    print(f"train batch {batch_idx} loss finite {bool(torch.isfinite(loss).item())}")
    if batch_idx == 1:
        break

model.eval()
correct = 0
with torch.no_grad():
    for i, (data, target) in enumerate(test_loader):
        pred = model(data).argmax(dim=1, keepdim=True)
        correct += pred.eq(target.view_as(pred)).sum().item()
        if i == 0:
            save_image(data * 0.3081 + 0.1307, args.out + "/test_batch.png", nrow=3)
print(f"tested {len(test_loader.dataset)} images, {correct} correct")

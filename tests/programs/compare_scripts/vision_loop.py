"""A classifier in pytorch/examples' torchvision idiom: a torchvision data set with transforms, a shuffled loader,
make_grid of a batch.  Written for PyTorch; tests/programs/test_compare_with_torch.py runs it."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms
from torchvision.utils import make_grid

torch.manual_seed(0)
transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.25,))])
dataset = datasets.FakeData(size=24, image_size=(1, 8, 8), num_classes=3, transform=transform)
loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True)
model = nn.Sequential(nn.Flatten(), nn.Linear(64, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.6f}")
grid = make_grid(x, nrow=4)
print(tuple(grid.shape), f"{grid.sum().item():.4f}")

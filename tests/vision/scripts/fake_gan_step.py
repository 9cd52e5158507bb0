"""dcgan's data path on FakeData: Resize, CenterCrop, ToTensor, Normalize, then vutils.save_image(normalize=True)."""
import sys

import torch
import torch.utils.data
import torchvision.datasets as dset
import torchvision.transforms as transforms
import torchvision.utils as vutils

out = sys.argv[1]
torch.manual_seed(0)
dataset = dset.FakeData(size=6, image_size=(3, 20, 24),
                        transform=transforms.Compose([transforms.Resize(8), transforms.CenterCrop(8),
                                                      transforms.ToTensor(),
                                                      transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]))
loader = torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=True, num_workers=0)
for i, (real, label) in enumerate(loader):
    print(i, tuple(real.shape), tuple(label.shape), real.min().item() >= -1.0, real.max().item() <= 1.0)
    vutils.save_image(real, f"{out}/real_{i}.png", normalize=True)

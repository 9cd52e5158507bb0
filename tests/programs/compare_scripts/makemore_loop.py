"""A names model in makemore's idiom: a randperm split, an endless RandomSampler loader, AdamW, sampling.

Written for PyTorch; tests/programs/test_compare_with_torch.py runs it with both engines.
"""
import argparse
import time

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--max-steps", type=int, default=6)
parser.add_argument("--seed", type=int, default=3407)
args = parser.parse_args()
torch.manual_seed(args.seed)

words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn", "abigail",
         "emily", "ella", "elizabeth", "camila", "luna", "sofia", "avery", "mila", "aria", "scarlett"]
chars = sorted(set("".join(words)))
max_len = max(len(w) for w in words)
rp = torch.randperm(len(words)).tolist()
train_words, test_words = [words[i] for i in rp[:-4]], [words[i] for i in rp[-4:]]
print(f"split up the dataset into {len(train_words)} training examples and {len(test_words)} test examples")


class CharDataset(Dataset):
    def __init__(self, words):
        self.words, self.stoi = words, {ch: i + 1 for i, ch in enumerate(chars)}

    def __len__(self):
        return len(self.words)

    def __getitem__(self, idx):
        ix = torch.tensor([self.stoi[c] for c in self.words[idx]], dtype=torch.long)
        x = torch.zeros(max_len + 1, dtype=torch.long)
        y = torch.zeros(max_len + 1, dtype=torch.long)
        x[1:1 + len(ix)] = ix
        y[:len(ix)] = ix
        y[len(ix) + 1:] = -1
        return x, y


class InfiniteDataLoader:
    def __init__(self, dataset, **kwargs):
        sampler = torch.utils.data.RandomSampler(dataset, replacement=True, num_samples=int(1e10))
        self.train_loader = DataLoader(dataset, sampler=sampler, **kwargs)
        self.data_iter = iter(self.train_loader)

    def next(self):
        try:
            batch = next(self.data_iter)
        except StopIteration:
            self.data_iter = iter(self.train_loader)
            batch = next(self.data_iter)
        return batch


class MLP(nn.Module):
    def __init__(self, vocab_size, block_size=3, n_embd=8, n_embd2=32):
        super().__init__()
        self.block_size, self.vocab_size = block_size, vocab_size
        self.wte = nn.Embedding(vocab_size + 1, n_embd)
        self.mlp = nn.Sequential(nn.Linear(block_size * n_embd, n_embd2), nn.Tanh(), nn.Linear(n_embd2, vocab_size))

    def forward(self, idx, targets=None):
        embs = []
        for _ in range(self.block_size):
            embs.append(self.wte(idx))
            idx = torch.roll(idx, 1, 1)
            idx[:, 0] = self.vocab_size
        logits = self.mlp(torch.cat(embs, -1))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


@torch.inference_mode()
def evaluate(model, dataset, batch_size=8, max_batches=None):
    model.eval()
    loader = DataLoader(dataset, shuffle=True, batch_size=batch_size, num_workers=0)
    losses = [model(*batch)[1].item() for i, batch in enumerate(loader) if max_batches is None or i < max_batches]
    model.train()
    return torch.tensor(losses).mean().item()


train_dataset, test_dataset = CharDataset(train_words), CharDataset(test_words)
model = MLP(len(chars) + 1)
print(f"model #params: {sum(p.numel() for p in model.parameters())}")
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
batch_loader = InfiniteDataLoader(train_dataset, batch_size=4, pin_memory=True, num_workers=0)
for step in range(args.max_steps):
    t0 = time.time()
    X, Y = batch_loader.next()
    logits, loss = model(X, Y)
    model.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    t1 = time.time()
    print(f"step {step} | loss {loss.item():.4f} | step time {(t1 - t0) * 1000:.2f}ms")
    if step % 3 == 0:
        print(f"step {step} train loss: {evaluate(model, train_dataset, max_batches=2)} "
              f"test loss: {evaluate(model, test_dataset)}")

idx = torch.zeros(2, 1, dtype=torch.long)
for _ in range(max_len):
    logits, _ = model(idx[:, -3:])
    idx = torch.cat((idx, torch.multinomial(F.softmax(logits[:, -1, :], dim=-1), num_samples=1)), dim=1)
for row in idx[:, 1:].tolist():
    print("".join(chars[i - 1] if i else "." for i in row))

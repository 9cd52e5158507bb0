"""A character model in nanoGPT's idiom: batches from torch.randint, dropout, attention, AdamW, sampling.

Written for PyTorch; tests/programs/test_compare_with_torch.py runs it with both engines.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
from torch.nn import functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--max_iters", type=int, default=6)
parser.add_argument("--dropout", type=float, default=0.2)
args = parser.parse_args()

text = "first citizen: before we proceed any further, hear me speak. all: speak, speak. " * 8
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
block_size, batch_size, n_embd, n_head = 8, 4, 16, 2
torch.manual_seed(1337)


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = torch.randint(len(d) - block_size, (batch_size,))
    x = torch.stack([d[i:i + block_size] for i in ix])
    y = torch.stack([d[i + 1:i + 1 + block_size] for i in ix])
    return x, y


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(n_embd)
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.drop = nn.Dropout(args.dropout)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln(x)).split(n_embd, dim=2)
        q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=args.dropout if self.training else 0.0, is_causal=True)
        return x + self.drop(self.proj(y.transpose(1, 2).contiguous().view(B, T, C)))


class CharModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(len(chars), n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.block = Block()
        self.head = nn.Linear(n_embd, len(chars), bias=False)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02 / math.sqrt(2))

    def forward(self, idx, targets=None):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        x = F.dropout(x, args.dropout, self.training)
        logits = self.head(self.block(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


@torch.no_grad()
def estimate_loss():
    model.eval()
    out = {split: torch.stack([model(*get_batch(split))[1] for _ in range(2)]).mean().item()
           for split in ("train", "val")}
    model.train()
    return out


model = CharModel()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.99), weight_decay=0.1)
for it in range(args.max_iters):
    t0 = time.time()
    if it % 3 == 0:
        losses = estimate_loss()
        print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
    X, Y = get_batch("train")
    _, loss = model(X, Y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(f"iter {it}: loss {loss.item():.4f}, time {(time.time() - t0) * 1000:.2f}ms, mfu {-100.0:.2f}%")

model.eval()
idx = torch.zeros((1, 1), dtype=torch.long)
for _ in range(20):
    logits, _ = model(idx[:, -block_size:])
    probs = F.softmax(logits[:, -1, :], dim=-1)
    idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
print("".join(chars[i] for i in idx[0].tolist()))

"""ng-video-lecture's gpt.py (the character-level Transformer) with ``import taugrad as torch``, at a reduced size.

The model classes and training loop are written as in the lecture; dropout is 0 (the two random
streams differ), batches are drawn once with NumPy and fed to both, and the weights start as torch's.
"""
from __future__ import annotations

import numpy as np
import torch

import taugrad

from ._compare import assert_close_steps, to_taugrad_state

TEXT = "".join(np.random.default_rng(0).choice(list("abcdefgh ijklm\nNOP,.;"), 3000))
batch_size, block_size, n_embd, n_head, n_layer, dropout, learning_rate = 4, 16, 32, 4, 2, 0.0, 1e-3


def gpt_program(torch, nn, F, initial_state, batches, steps, device="cpu"):
    chars = sorted(list(set(TEXT)))
    vocab_size = len(chars)
    stoi = {ch: i for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[c] for c in s]  # noqa: E731
    data = torch.tensor(encode(TEXT), dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]

    def get_batch(split, ix):
        data = train_data if split == "train" else val_data
        x = torch.stack([data[i:i + block_size] for i in ix])
        y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
        x, y = x.to(device), y.to(device)
        return x, y

    class Head(nn.Module):
        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k = self.key(x)
            q = self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = F.softmax(wei, dim=-1)
            wei = self.dropout(wei)
            return wei @ self.value(x)

    class MultiHeadAttention(nn.Module):
        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            out = torch.cat([h(x) for h in self.heads], dim=-1)
            return self.dropout(self.proj(out))

    class FeedFoward(nn.Module):
        def __init__(self, n_embd):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd),
                                     nn.Dropout(dropout))

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            head_size = n_embd // n_head
            self.sa = MultiHeadAttention(n_head, head_size)
            self.ffwd = FeedFoward(n_embd)
            self.ln1 = nn.LayerNorm(n_embd)
            self.ln2 = nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class GPTLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab_size)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            tok_emb = self.token_embedding_table(idx)
            pos_emb = self.position_embedding_table(torch.arange(T, device=device))
            x = self.blocks(tok_emb + pos_emb)
            logits = self.lm_head(self.ln_f(x))
            if targets is None:
                return logits, None
            B, T, C = logits.shape
            return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

        def generate(self, idx, max_new_tokens):
            for _ in range(max_new_tokens):
                logits, loss = self(idx[:, -block_size:])
                probs = F.softmax(logits[:, -1, :], dim=-1)
                idx_next = torch.multinomial(probs, num_samples=1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = torch.zeros(len(batches["eval"]))
            for k, ix in enumerate(batches["eval"]):
                X, Y = get_batch(split, ix)
                logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    model = GPTLanguageModel()
    if initial_state is not None:
        model.load_state_dict(initial_state)
    model = model.to(device)
    record = [sum(p.numel() for p in model.parameters())]
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    for iter in range(steps):
        if iter % 10 == 0 or iter == steps - 1:
            losses = estimate_loss()
            record += [losses["train"].item(), losses["val"].item()]
        xb, yb = get_batch("train", batches["train"][iter])
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        record.append(loss.item())
    context = torch.zeros((1, 1), dtype=torch.long, device=device)
    generated = model.generate(context, max_new_tokens=5)[0].tolist()
    return record, generated, model


def test_gpt_trains_like_torch():
    steps = 20
    rng = np.random.default_rng(1)
    n_val = len(TEXT) - int(0.9 * len(TEXT))
    batches = {"train": rng.integers(0, int(0.9 * len(TEXT)) - block_size, (steps, batch_size)),
               "eval": rng.integers(0, n_val - block_size, (2, batch_size))}
    torch.manual_seed(1337)
    _, _, initial = gpt_program(torch, torch.nn, torch.nn.functional, None, batches, 0)
    start = {name: value.clone() for name, value in initial.state_dict().items()}
    theirs, their_generated, _ = gpt_program(torch, torch.nn, torch.nn.functional, start, batches, steps)
    ours, our_generated, _ = gpt_program(taugrad, taugrad.nn, taugrad.nn.functional, to_taugrad_state(start),
                                         batches, steps)
    assert_close_steps(ours, theirs)
    assert len(our_generated) == len(their_generated) == 6 and our_generated[0] == 0

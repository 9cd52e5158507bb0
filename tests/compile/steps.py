"""The training step the compile tests run eagerly and compiled: forward, cross-entropy, backward, update."""
from __future__ import annotations

import taugrad.functional as F


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss
